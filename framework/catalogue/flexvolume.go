package catalogue

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/volperm/volperm/framework"
)

// flexRow is one rule of the driver allowlist (seed 004), checked on a pod and, when pv, on a
// PersistentVolume with the first driver.
type flexRow struct {
	phrase   string
	policy   framework.FlexVolumePolicy
	drivers  []string
	emptyDir bool // the pod also has an emptyDir before its flexVolumes
	pv       bool
}

var flexRows = []flexRow{
	{phrase: "an empty allowlist allows any driver", drivers: []string{"example/nfs"}, pv: true},
	{phrase: "an allowlist allows its exact driver", policy: framework.FlexVolumePolicy{AllowedDrivers: []string{"example/nfs"}}, drivers: []string{"example/nfs"}, pv: true},
	{phrase: "an allowlist denies an unlisted driver", policy: framework.FlexVolumePolicy{AllowedDrivers: []string{"example/nfs"}}, drivers: []string{"example/cifs"}, pv: true},
	{phrase: "an allowlist entry is not a prefix of the driver", policy: framework.FlexVolumePolicy{AllowedDrivers: []string{"example"}}, drivers: []string{"example/nfs"}, pv: true},
	{phrase: "an allowlist entry that the driver extends does not match", policy: framework.FlexVolumePolicy{AllowedDrivers: []string{"example/nfs"}}, drivers: []string{"example/nfs-v2"}, pv: true},
	{phrase: "a driver that is a substring of an allowlist entry does not match", policy: framework.FlexVolumePolicy{AllowedDrivers: []string{"example/nfs"}}, drivers: []string{"nfs"}, pv: true},
	{phrase: "two flexVolumes, the second driver not in the allowlist", policy: framework.FlexVolumePolicy{AllowedDrivers: []string{"a/b", "c/d"}}, drivers: []string{"a/b", "example/nfs"}},
	{phrase: "a policy with an empty driver name is invalid", policy: framework.FlexVolumePolicy{AllowedDrivers: []string{"a/b", "c/d", ""}}, drivers: []string{"a/b"}, pv: true},
	{phrase: "an allowlist while allowedVolumeTypes excludes flexVolume is invalid", policy: framework.FlexVolumePolicy{AllowedVolumeTypes: []string{"emptyDir", "secret"}, AllowedDrivers: []string{"a/b"}}, drivers: []string{"a/b"}, pv: true},
	{phrase: "allowedVolumeTypes [*] with an allowlist allows a listed driver", policy: framework.FlexVolumePolicy{AllowedVolumeTypes: []string{"*"}, AllowedDrivers: []string{"a/b"}}, drivers: []string{"a/b"}, pv: true},
	{phrase: "allowedVolumeTypes [*] with an allowlist denies an unlisted driver", policy: framework.FlexVolumePolicy{AllowedVolumeTypes: []string{"*"}, AllowedDrivers: []string{"a/b"}}, drivers: []string{"c/d"}, pv: true},
	{phrase: "allowedVolumeTypes without flexVolume and an empty allowlist deny a flexVolume", policy: framework.FlexVolumePolicy{AllowedVolumeTypes: []string{"emptyDir"}}, drivers: []string{"a/b"}, pv: true},
	{phrase: "allowedVolumeTypes [flexVolume] deny an emptyDir beside an allowed flexVolume", policy: framework.FlexVolumePolicy{AllowedVolumeTypes: []string{"flexVolume"}, AllowedDrivers: []string{"a/b"}}, drivers: []string{"a/b"}, emptyDir: true},
}

func flexVolumeCases() []*framework.Case {
	var cases []*framework.Case
	for i, r := range flexRows {
		var vols []corev1.Volume
		if r.emptyDir {
			vols = append(vols, volume("scratch", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}))
		}
		for j, d := range r.drivers {
			vols = append(vols, volume(fmt.Sprintf("flex%d", j), corev1.VolumeSource{FlexVolume: &corev1.FlexVolumeSource{Driver: d}}))
		}
		cases = append(cases, flexCase(r, "pod", podOf(vols...), nil))
		if r.pv {
			cases = append(cases, flexCase(r, "PersistentVolume", nil, flexPV(fmt.Sprintf("volperm-flex-%02d", i), r.drivers[0])))
		}
	}
	return append(cases, &framework.Case{
		Name:          "flexVolume without a driver at admission",
		Area:          framework.AreaFlexVolume,
		Profile:       framework.ProfileConformance,
		Description:   "v1.37 validateFlexVolumeSource: driver is required.",
		Pod:           podOf(volume("flex0", corev1.VolumeSource{FlexVolume: &corev1.FlexVolumeSource{}})),
		AdmissionOnly: true,
	})
}

func flexCase(r flexRow, object string, pod *corev1.Pod, pv *corev1.PersistentVolume) *framework.Case {
	policy := framework.FlexVolumePolicy{AllowedVolumeTypes: slices.Clone(r.policy.AllowedVolumeTypes), AllowedDrivers: slices.Clone(r.policy.AllowedDrivers)}
	return &framework.Case{
		Name:             fmt.Sprintf("flexVolume allowlist: %s (%s)", r.phrase, object),
		Area:             framework.AreaFlexVolume,
		Profile:          framework.ProfileProposal,
		Description:      "Seed 004: an exact-match driver allowlist, empty = all drivers; an allowlist needs flexVolume among the allowed volume types.",
		Pod:              pod,
		PersistentVolume: pv,
		FlexVolumePolicy: &policy,
		AdmissionOnly:    true,
	}
}

func flexPV(name, driver string) *corev1.PersistentVolume {
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeSource: corev1.PersistentVolumeSource{FlexVolume: &corev1.FlexPersistentVolumeSource{Driver: driver}},
		},
	}
}
