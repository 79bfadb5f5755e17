package framework

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestAreaRegistry: every area has a description, and every volume type some area claims is a
// type VolumeType knows, claimed by one area only.
func TestAreaRegistry(t *testing.T) {
	claimed := map[string]Area{}
	for _, a := range AreaInfos() {
		if a.Description == "" {
			t.Errorf("area %q has no description", a.Name)
		}
		for _, vt := range a.VolumeTypes {
			if !slices.Contains(VolumeTypes(), vt) {
				t.Errorf("area %q claims volume type %q, which VolumeType does not know", a.Name, vt)
			}
			if other, dup := claimed[vt]; dup {
				t.Errorf("volume type %q claimed by %q and %q", vt, other, a.Name)
			}
			claimed[vt] = a.Name
		}
	}
	if len(Areas) != len(AreaInfos()) {
		t.Errorf("Areas lists %d areas, the registry %d", len(Areas), len(AreaInfos()))
	}
}

// TestVolumeType names each source by the API's field name, and one volperm does not check as
// unsupported.
func TestVolumeType(t *testing.T) {
	for want, src := range map[string]corev1.VolumeSource{
		"emptyDir":            {EmptyDir: &corev1.EmptyDirVolumeSource{}},
		"hostPath":            {HostPath: &corev1.HostPathVolumeSource{}},
		"secret":              {Secret: &corev1.SecretVolumeSource{}},
		"configMap":           {ConfigMap: &corev1.ConfigMapVolumeSource{}},
		"downwardAPI":         {DownwardAPI: &corev1.DownwardAPIVolumeSource{}},
		"projected":           {Projected: &corev1.ProjectedVolumeSource{}},
		"flexVolume":          {FlexVolume: &corev1.FlexVolumeSource{}},
		VolumeTypeUnsupported: {NFS: &corev1.NFSVolumeSource{}},
	} {
		if got := VolumeType(corev1.Volume{Name: "v", VolumeSource: src}); got != want {
			t.Errorf("VolumeType(%s) = %q", want, got)
		}
	}
}

// AreasOf names a batch's areas in report order, once each, what is not an area last.
func TestAreasOf(t *testing.T) {
	cases := []*Case{{Area: AreaSkew}, {Area: AreaFSGroup}, {Area: AreaSkew}, {Area: "zz"}, {Area: AreaEmptyDir}}
	if got, want := AreasOf(cases), "[emptydir, fsgroup, skew, zz]"; got != want {
		t.Errorf("AreasOf = %q, want %q", got, want)
	}
	if got := AreasOf(nil); got != "[]" {
		t.Errorf("AreasOf(nil) = %q, want []", got)
	}
}
