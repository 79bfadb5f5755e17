package catalogue

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
)

// absentObjectCases: [atomicwriter.sources] a secret or configMap the pod names that does not
// exist. The kubelet fails the volume with its NotFound text (v1.37 secret.go / configmap.go
// SetUpAt, projected.go collectData) unless the reference is optional, and an object without
// data is not an absent one.
func absentObjectCases() []*framework.Case {
	const vol = "objects"
	ref := func(name string) corev1.LocalObjectReference { return corev1.LocalObjectReference{Name: name} }
	secret := func(name string, optional *bool, items ...corev1.KeyToPath) corev1.VolumeSource {
		return corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: name, Optional: optional, Items: items}}
	}
	configMap := func(name string, optional *bool, items ...corev1.KeyToPath) corev1.VolumeSource {
		return corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: ref(name), Optional: optional, Items: items}}
	}
	projected := func(srcs ...corev1.VolumeProjection) corev1.VolumeSource {
		return corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: srcs}}
	}
	secretSrc := func(name string, optional *bool) corev1.VolumeProjection {
		return corev1.VolumeProjection{Secret: &corev1.SecretProjection{LocalObjectReference: ref(name), Optional: optional}}
	}
	configMapSrc := func(name string, optional *bool) corev1.VolumeProjection {
		return corev1.VolumeProjection{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: ref(name), Optional: optional}}
	}
	item := corev1.KeyToPath{Key: "username", Path: "user"}
	present := map[string]map[string]string{"secret/present": {"username": "admin"}, "configmap/present": {"username": "admin"}}
	empty := map[string]map[string]string{"secret/empty": {}, "configmap/empty": {}}
	yes := ptr(true)
	reader := framework.User{UID: 1000, GID: 1000}
	type spec struct {
		name, desc string
		src        corev1.VolumeSource
		sources    map[string]map[string]string
		fsg        bool
		probe      string // a file uid 1000 reads, "" for none
	}
	specs := []spec{
		{"secret volume naming an absent secret fails: secret \"gone\" not found", "the kubelet's NotFound, before anything is written (docs/spec.md [atomicwriter.sources]).",
			secret("gone", nil), present, false, ""},
		{"secret volume naming an absent secret, with fsGroup, fails before any walk", "the set-up fails first: nothing is written or walked (docs/spec.md [atomicwriter.sources]).",
			secret("gone", nil, item), present, true, ""},
		{"secret volume naming an absent optional secret is set up empty", "optional: the absent object is an empty one (secret.go SetUpAt; docs/spec.md [atomicwriter.sources]).",
			secret("gone", yes), present, false, ""},
		{"secret volume naming an absent optional secret with items is set up empty", "optional: an empty object, whose missing keys an optional reference skips (docs/spec.md [atomicwriter.sources]).",
			secret("gone", yes, item), present, false, ""},
		{"secret volume naming a secret without data is set up empty", "an object without data exists: not the NotFound of an absent one (docs/spec.md [atomicwriter.sources]).",
			secret("empty", nil), empty, false, ""},
		{"secret volume naming a secret without data, item not optional, fails on the key", "an existing empty object fails on the key it lacks, not as absent (docs/spec.md [atomicwriter.sources]).",
			secret("empty", nil, item), empty, false, ""},
		{"configMap volume naming an absent configMap fails: configmap \"gone\" not found", "the kubelet's NotFound, resource configmap (docs/spec.md [atomicwriter.sources]).",
			configMap("gone", nil), present, false, ""},
		{"configMap volume naming an absent optional configMap is set up empty", "optional: an empty object (configmap.go SetUpAt; docs/spec.md [atomicwriter.sources]).",
			configMap("gone", yes, item), present, false, ""},
		{"configMap volume naming a configMap without data is set up empty", "an object without data exists (docs/spec.md [atomicwriter.sources]).",
			configMap("empty", nil), empty, false, ""},
		{"projected volume with an absent secret and an absent configMap fails with both texts", "projected.go collectData aggregates every failing source (docs/spec.md [atomicwriter.sources]).",
			projected(secretSrc("gone", nil), configMapSrc("gone", nil), configMapSrc("present", nil)), present, false, ""},
		{"projected volume with an absent configMap and a present secret fails: configmap \"gone\" not found", "one failing source fails the volume: the present secret is not written (docs/spec.md [atomicwriter.sources]).",
			projected(secretSrc("present", nil), configMapSrc("gone", nil)), present, false, ""},
		{"projected volume with an absent optional secret and a present configMap has the configMap's files", "an optional absent source adds nothing; the others are written (docs/spec.md [atomicwriter.sources]).",
			projected(secretSrc("gone", yes), configMapSrc("present", nil)), present, true, "username"},
	}
	var out []*framework.Case
	for _, s := range specs {
		pod := podOf(volume(vol, s.src))
		if s.fsg {
			withFSGroup(pod, fsGroup)
		}
		c := &framework.Case{Name: s.name, Area: framework.AreaAtomicWriter, Profile: framework.ProfileConformance,
			Description: s.desc, Pod: pod, Sources: s.sources}
		if s.probe != "" {
			c.Probes = []framework.Probe{{Name: "uid 1000 reads " + s.probe, Volume: vol, As: reader, Op: framework.OpRead, Path: s.probe}}
		}
		out = append(out, c)
	}
	return out
}
