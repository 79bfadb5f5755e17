package oracle

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
)

func TestAdmission(t *testing.T) {
	emptyDirOn := both(framework.GateEmptyDirVolumeMode, true)
	allTypes := &framework.FlexVolumePolicy{AllowedVolumeTypes: []string{"emptyDir", "flexVolume"}, AllowedDrivers: []string{"a/b", "c/d"}}
	tests := []struct {
		name string
		c    framework.Case
		want framework.Admission
	}{
		{
			name: "emptyDir mode out of range (gate on)",
			c:    framework.Case{Gates: emptyDirOn, Pod: podWith(emptyDir("v", "", i32(1024)))},
			// A volume with errors is not a valid mount target: upstream also reports the mount.
			want: framework.Admission{Errors: []string{
				`spec.containers[0].volumeMounts[0].name: Not found: "v"`,
				"spec.volumes[0].emptyDir.mode: Invalid value: 1024: must be a number between 0 and 01777 (octal), both inclusive",
			}},
		},
		{
			name: "emptyDir mode out of range, gate off: dropped first, then valid",
			c:    framework.Case{AdmissionOnly: true, Pod: podWith(emptyDir("v", "", i32(1024)))},
			want: framework.Admission{Allowed: true, Dropped: []string{"spec.volumes[0].emptyDir.mode"}},
		},
		{
			name: "update keeps a mode the old pod had",
			c:    framework.Case{AdmissionOnly: true, Pod: podWith(emptyDir("v", "", i32(0700))), OldPod: podWith(emptyDir("w", "", i32(0750)))},
			want: framework.Admission{Allowed: true},
		},
		{
			name: "secret defaultMode and item mode",
			c:    framework.Case{Pod: podWith(secretVol("s", "x", i32(512), corev1.KeyToPath{Key: "k", Path: "../k", Mode: i32(-1)}))},
			want: framework.Admission{Errors: []string{
				`spec.containers[0].volumeMounts[0].name: Not found: "s"`,
				"spec.volumes[0].secret.defaultMode: Invalid value: 512: must be a number between 0 and 0777 (octal), both inclusive",
				"spec.volumes[0].secret.items[0].mode: Invalid value: -1: must be a number between 0 and 0777 (octal), both inclusive",
				`spec.volumes[0].secret.items[0].path: Invalid value: "../k": must not contain '..'`,
			}},
		},
		{
			name: "hostPath path, backsteps and type",
			c: framework.Case{AdmissionOnly: true, Pod: &corev1.Pod{Spec: corev1.PodSpec{
				Volumes:    []corev1.Volume{hostPath("a", "", ""), hostPath("b", "/a/../b", ""), hostPath("c", "/c", "Dir")},
				Containers: []corev1.Container{{Name: "c", Image: "i"}},
			}}},
			want: framework.Admission{Errors: []string{
				`spec.volumes[0].hostPath.path: Required value`,
				`spec.volumes[1].hostPath.path: Invalid value: "/a/../b": must not contain '..'`,
				`spec.volumes[2].hostPath.type: Unsupported value: "Dir": supported values: "", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket"`,
			}},
		},
		{
			name: "names, duplicates, two sources, flexVolume driver",
			c: framework.Case{AdmissionOnly: true, Pod: &corev1.Pod{Spec: corev1.PodSpec{
				Volumes: []corev1.Volume{
					emptyDir("Bad_Name", "", nil), emptyDir("a", "", nil), emptyDir("a", "", nil), flexVol("f", ""),
					{Name: "two", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}, DownwardAPI: &corev1.DownwardAPIVolumeSource{}}},
				},
				Containers: []corev1.Container{{Name: "c", Image: "i", VolumeMounts: []corev1.VolumeMount{{Name: "a", MountPath: "/a"}, {Name: "gone", MountPath: "/a"}}}},
			}}},
			want: framework.Admission{Errors: []string{
				`spec.containers[0].volumeMounts[1].mountPath: Invalid value: "/a": must be unique`,
				`spec.containers[0].volumeMounts[1].name: Not found: "gone"`,
				`spec.volumes[0].name: Invalid value: "Bad_Name": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
				`spec.volumes[2].name: Duplicate value: "a"`,
				`spec.volumes[3].flexVolume.driver: Required value`,
				`spec.volumes[4].downwarAPI: Forbidden: may not specify more than 1 volume type`,
			}},
		},
		{
			name: "a volume without a source defaults to emptyDir",
			c:    framework.Case{AdmissionOnly: true, Pod: podWith(corev1.Volume{Name: "plain"})},
			want: framework.Admission{Allowed: true},
		},
		{
			name: "policy: empty driver name and drivers without flexVolume",
			c: framework.Case{AdmissionOnly: true, Pod: podWith(emptyDir("v", "", nil)),
				FlexVolumePolicy: &framework.FlexVolumePolicy{AllowedVolumeTypes: []string{"emptyDir"}, AllowedDrivers: []string{"a/b", "c/d", ""}}},
			want: framework.Admission{Errors: []string{
				"flexVolumePolicy.allowedDrivers: Forbidden: must be empty when flexVolume is not an allowed volume type",
				"flexVolumePolicy.allowedDrivers[2]: Required value: driver name must be non-empty",
			}},
		},
		{
			name: "policy: type and driver",
			c: framework.Case{AdmissionOnly: true, FlexVolumePolicy: allTypes,
				Pod: podWith(flexVol("ok", "a/b"), hostPath("h", "/h", ""), flexVol("nfs", "example/nfs"))},
			want: framework.Admission{Errors: []string{
				`spec.volumes[1]: Forbidden: hostPath volumes are not allowed by the policy`,
				`spec.volumes[2].flexVolume.driver: Forbidden: driver "example/nfs" is not in the allowed flexVolume drivers [a/b, c/d]`,
			}},
		},
		{
			name: "policy: empty allowlist allows every driver, * every type",
			c: framework.Case{AdmissionOnly: true, FlexVolumePolicy: &framework.FlexVolumePolicy{AllowedVolumeTypes: []string{"*"}},
				Pod: podWith(flexVol("x", "example/nfs"), hostPath("h", "/h", ""))},
			want: framework.Admission{Allowed: true},
		},
		{
			name: "policy: PersistentVolume driver",
			c: framework.Case{FlexVolumePolicy: allTypes, PersistentVolume: &corev1.PersistentVolume{Spec: corev1.PersistentVolumeSpec{
				PersistentVolumeSource: corev1.PersistentVolumeSource{FlexVolume: &corev1.FlexPersistentVolumeSource{Driver: "example/nfs"}}}}},
			want: framework.Admission{Errors: []string{`spec.flexVolume.driver: Forbidden: driver "example/nfs" is not in the allowed flexVolume drivers [a/b, c/d]`}},
		},
		{
			name: "policy: PersistentVolume type",
			c: framework.Case{FlexVolumePolicy: &framework.FlexVolumePolicy{AllowedVolumeTypes: []string{"hostPath"}}, PersistentVolume: &corev1.PersistentVolume{Spec: corev1.PersistentVolumeSpec{
				PersistentVolumeSource: corev1.PersistentVolumeSource{FlexVolume: &corev1.FlexPersistentVolumeSource{Driver: "a/b"}}}}},
			want: framework.Admission{Errors: []string{`spec.flexVolume: Forbidden: flexVolume volumes are not allowed by the policy`}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.c
			c.Name = tc.name
			got := Expect(&c)
			want := framework.Observation{Admission: tc.want}
			if len(got.Volumes) > 0 {
				t.Errorf("admission-only or rejected case has volumes: %+v", got.Volumes)
			}
			want.Case, want.APIVersion = c.Name, framework.ObservationVersion
			if d := framework.Diff(&want, got); len(d) > 0 {
				t.Errorf("%v\ngot:\n%s", d, got.JSON())
			}
		})
	}
}
