package catalogue

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
)

// item selects one key of the source into path, with an optional mode.
type item struct {
	key, path string
	mode      *int32
}

// awType is one AtomicWriter volume type (seed 002 "Scope Of the Change").
type awType struct {
	name   string // as the API names it
	source func(defaultMode *int32, items []item) corev1.VolumeSource
}

// awSources are the objects the generated volumes project; both have the same keys. Each case
// gets its own maps.
func awSources() map[string]map[string]string {
	return map[string]map[string]string{
		"secret/creds":       {"username": "admin", "password": "hunter2"},
		"configmap/settings": {"username": "admin", "password": "hunter2"},
	}
}

// downwardFields maps the keys to pod fields, so that downwardAPI items read like the others.
var downwardFields = map[string]string{"username": "metadata.name", "password": "metadata.namespace"}

func keyToPaths(items []item) []corev1.KeyToPath {
	var out []corev1.KeyToPath
	for _, it := range items {
		out = append(out, corev1.KeyToPath{Key: it.key, Path: it.path, Mode: it.mode})
	}
	return out
}

var awTypes = []awType{
	{"secret", func(dm *int32, items []item) corev1.VolumeSource {
		return corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds", DefaultMode: dm, Items: keyToPaths(items)}}
	}},
	{"configMap", func(dm *int32, items []item) corev1.VolumeSource {
		return corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}, DefaultMode: dm, Items: keyToPaths(items),
		}}
	}},
	{"downwardAPI", func(dm *int32, items []item) corev1.VolumeSource {
		if len(items) == 0 { // a downwardAPI volume has only the items it lists
			items = []item{{key: "username", path: "username"}, {key: "password", path: "password"}}
		}
		var files []corev1.DownwardAPIVolumeFile
		for _, it := range items {
			files = append(files, corev1.DownwardAPIVolumeFile{
				Path: it.path, Mode: it.mode,
				FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: downwardFields[it.key]},
			})
		}
		return corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: files, DefaultMode: dm}}
	}},
	{"projected", func(dm *int32, items []item) corev1.VolumeSource {
		return corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{DefaultMode: dm, Sources: []corev1.VolumeProjection{{
			Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}, Items: keyToPaths(items)},
		}}}}
	}},
}

// awSpec is one generated AtomicWriter case.
type awSpec struct {
	name, desc    string
	defaultMode   *int32
	items         []item
	fsGroup       bool
	preserve      bool     // the volume carries preservePermissions
	oldPreserve   *bool    // set: an update, the old pod carrying preservePermissions or not
	gates         *[2]bool // PreservePermissions on the apiserver, the kubelet
	admissionOnly bool
}

func (s awSpec) build(t awType) *framework.Case {
	volName := strings.ToLower(t.name)
	pod := podOf(volume(volName, t.source(s.defaultMode, s.items)))
	if s.fsGroup {
		withFSGroup(pod, fsGroup)
	}
	c := &framework.Case{
		Name:          fmt.Sprintf("%s volume %s", t.name, s.name),
		Area:          framework.AreaAtomicWriter,
		Profile:       framework.ProfileConformance,
		Description:   s.desc,
		Pod:           pod,
		Sources:       awSources(),
		AdmissionOnly: s.admissionOnly,
	}
	if s.gates != nil {
		c.Profile = framework.ProfileProposal
		c.Gates = gates(framework.GatePreservePermissions, s.gates[0], s.gates[1])
	}
	if s.preserve {
		c.PreservePermissions = []string{volName}
	}
	if s.oldPreserve != nil {
		c.OldPod = pod.DeepCopy()
		if *s.oldPreserve {
			c.OldPreservePermissions = []string{volName}
		}
	}
	return c
}

// preserveGates words the PreservePermissions gates in a case name.
func preserveGates(apiserver, kubelet bool) string {
	return fmt.Sprintf("PreservePermissions gate %s in the apiserver, %s in the kubelet", onOff(apiserver), onOff(kubelet))
}

func modeWords(dm *int32) string {
	if dm == nil {
		return "without defaultMode"
	}
	return "with defaultMode " + octal(*dm)
}

func fsGroupWords(set bool) string {
	if set {
		return fmt.Sprintf("and fsGroup %d", fsGroup)
	}
	return "and no fsGroup"
}

func atomicWriterSpecs() []awSpec {
	var specs []awSpec
	// Layout and modes (v1.37 atomic_writer.go; seed 002 "File Permission"), with and without the walk.
	for _, dm := range []*int32{nil, ptr[int32](0400), ptr[int32](0600)} {
		for _, fsg := range []bool{false, true} {
			specs = append(specs, awSpec{
				name:        modeWords(dm) + " " + fsGroupWords(fsg),
				desc:        "Files get defaultMode (0644 when unset); with fsGroup the walk ORs in 0440 (read-only mask).",
				defaultMode: dm, fsGroup: fsg,
			})
		}
	}
	specs = append(specs,
		awSpec{
			name:        "with item mode 0400 beside defaultMode 0640",
			desc:        "An item's mode overrides defaultMode for that file only.",
			defaultMode: ptr[int32](0640),
			items:       []item{{key: "username", path: "username", mode: ptr[int32](0400)}, {key: "password", path: "password"}},
		},
		awSpec{
			name:  "with nested item paths a/b/username and a/password",
			desc:  "Nested item paths become 0755 directories inside the timestamp directory; only top-level names are symlinks.",
			items: []item{{key: "username", path: "a/b/username"}, {key: "password", path: "a/password"}},
		},
		awSpec{name: "with defaultMode 0777 at admission", desc: "defaultMode 0..0777 is valid.", defaultMode: ptr[int32](0777), admissionOnly: true},
		awSpec{name: "with defaultMode 01000 at admission", desc: "defaultMode above 0777 is rejected.", defaultMode: ptr[int32](01000), admissionOnly: true},
		awSpec{
			name: "with item mode 01000 at admission", desc: "An item mode above 0777 is rejected.", admissionOnly: true,
			items: []item{{key: "username", path: "username", mode: ptr[int32](01000)}},
		},
	)
	// preservePermissions (seed 002 "Proposed heuristics"): the walk is skipped when the volume
	// has it and the kubelet gate is on; the apiserver drops it with its gate off.
	for _, api := range []bool{true, false} {
		for _, kubelet := range []bool{true, false} {
			for _, fsg := range []bool{true, false} {
				specs = append(specs, awSpec{
					name:        fmt.Sprintf("with preservePermissions, defaultMode 0400 %s, %s", fsGroupWords(fsg), preserveGates(api, kubelet)),
					desc:        "Seed 002: with preservePermissions the files keep defaultMode exactly (0400, not 0440), when both components have the gate.",
					defaultMode: ptr[int32](0400), fsGroup: fsg, preserve: true, gates: &[2]bool{api, kubelet},
				})
			}
		}
	}
	specs = append(specs, awSpec{
		name:        fmt.Sprintf("without preservePermissions, defaultMode 0400 %s, %s", fsGroupWords(true), preserveGates(true, true)),
		desc:        "Seed 002 Case 1: without the field nothing changes, the gate alone does not skip the walk.",
		defaultMode: ptr[int32](0400), fsGroup: true, gates: &[2]bool{true, true},
	})
	// Dropping on update (the pattern of v1.37 dropDisabledFields): kept if the old pod had it.
	for _, old := range []bool{true, false} {
		verb := "adding"
		if old {
			verb = "keeping"
		}
		specs = append(specs, awSpec{
			name:        fmt.Sprintf("update %s preservePermissions, defaultMode 0400 %s, %s", verb, fsGroupWords(true), preserveGates(false, true)),
			desc:        "With the apiserver gate off the field is dropped on update unless the old pod already used it.",
			defaultMode: ptr[int32](0400), fsGroup: true, preserve: true, oldPreserve: ptr(old), gates: &[2]bool{false, true},
		})
	}
	return specs
}

func atomicWriterCases() []*framework.Case {
	var cases []*framework.Case
	for _, s := range atomicWriterSpecs() {
		for _, t := range awTypes {
			cases = append(cases, s.build(t))
		}
	}
	return cases
}
