package oracle

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
)

func TestEmptyDirModePerMedium(t *testing.T) {
	const dropped = "spec.volumes[0].emptyDir.mode"
	tests := []struct {
		name    string
		medium  corev1.StorageMedium
		mode    *int32
		gate    bool
		root    string
		dropped []string
	}{
		{"default 0750 gate on", "", i32(0750), true, "0750", nil},
		{"default 01777 gate on", "", i32(01777), true, "1777", nil},
		{"default nil gate on", "", nil, true, "0777", nil},
		{"default 0750 gate off", "", i32(0750), false, "0777", []string{dropped}},
		{"default 01777 gate off", "", i32(01777), false, "0777", []string{dropped}},
		{"default nil gate off", "", nil, false, "0777", nil},
		{"memory 0750 gate on", corev1.StorageMediumMemory, i32(0750), true, "0750", nil},
		{"memory 01777 gate on", corev1.StorageMediumMemory, i32(01777), true, "1777", nil},
		{"memory nil gate on", corev1.StorageMediumMemory, nil, true, "1777", nil},
		{"memory 0750 gate off", corev1.StorageMediumMemory, i32(0750), false, "1777", []string{dropped}},
		{"memory 01777 gate off", corev1.StorageMediumMemory, i32(01777), false, "1777", []string{dropped}},
		{"memory nil gate off", corev1.StorageMediumMemory, nil, false, "1777", nil},
		{"hugepages 0750 gate on", corev1.StorageMediumHugePages, i32(0750), true, "0750", nil},
		{"hugepages 01777 gate on", corev1.StorageMediumHugePages, i32(01777), true, "1777", nil},
		{"hugepages nil gate on", corev1.StorageMediumHugePages, nil, true, "0755", nil},
		{"hugepages 0750 gate off", corev1.StorageMediumHugePages, i32(0750), false, "0755", []string{dropped}},
		{"hugepages 01777 gate off", corev1.StorageMediumHugePages, i32(01777), false, "0755", []string{dropped}},
		{"hugepages nil gate off", corev1.StorageMediumHugePages, nil, false, "0755", nil},
		{"hugepages-2Mi 0700 gate on", "HugePages-2Mi", i32(0700), true, "0700", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &framework.Case{
				Name:  tc.name,
				Gates: both(framework.GateEmptyDirVolumeMode, tc.gate),
				Pod:   withHugePages(podWith(emptyDir("scratch", tc.medium, tc.mode)), "2Mi"),
			}
			expectObservation(t, c, framework.Observation{
				Admission: framework.Admission{Allowed: true, Dropped: tc.dropped},
				Volumes: []framework.VolumeObservation{{
					Name: "scratch", Type: "emptyDir", Medium: string(tc.medium), SetUp: framework.SetUpOK,
					Paths: []framework.PathObservation{entry(".", "dir", tc.root, 0, 0)},
				}},
			})
		})
	}
}

func TestEmptyDirFSGroupAndFailures(t *testing.T) {
	tests := []struct {
		name string
		c    *framework.Case
		want framework.VolumeObservation
	}{
		{
			name: "0750 + fsGroup 2000 -> 2770 gid 2000",
			c: &framework.Case{
				Gates: both(framework.GateEmptyDirVolumeMode, true),
				Pod:   withFSGroup(podWith(emptyDir("v", "", i32(0750))), 2000),
			},
			want: framework.VolumeObservation{Name: "v", Type: "emptyDir", SetUp: "ok", Paths: []framework.PathObservation{entry(".", "dir", "2770", 0, 2000)}},
		},
		{
			name: "01777 + fsGroup keeps sticky",
			c: &framework.Case{
				Gates: both(framework.GateEmptyDirVolumeMode, true),
				Pod:   withFSGroup(podWith(emptyDir("v", corev1.StorageMediumMemory, i32(01777))), 2000),
			},
			want: framework.VolumeObservation{Name: "v", Type: "emptyDir", Medium: "Memory", SetUp: "ok", Paths: []framework.PathObservation{entry(".", "dir", "3777", 0, 2000)}},
		},
		{
			name: "hugepages without a request",
			c:    &framework.Case{Pod: podWith(emptyDir("v", corev1.StorageMediumHugePages, nil))},
			want: framework.VolumeObservation{Name: "v", Type: "emptyDir", Medium: "HugePages",
				SetUp: "medium HugePages: hugePages storage requested, but there is no resource request for huge pages"},
		},
		{
			name: "hugepages-1Gi medium with a 2Mi request",
			c:    &framework.Case{Pod: withHugePages(podWith(emptyDir("v", "HugePages-1Gi", nil)), "2Mi")},
			want: framework.VolumeObservation{Name: "v", Type: "emptyDir", Medium: "HugePages-1Gi",
				SetUp: "medium HugePages-1Gi: hugePages storage requested, but there is no resource request for huge pages"},
		},
		{
			name: "unknown medium",
			c:    &framework.Case{Pod: podWith(emptyDir("v", "Disk", nil))},
			want: framework.VolumeObservation{Name: "v", Type: "emptyDir", Medium: "Disk", SetUp: `unknown storage medium "Disk"`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.c.Name = tc.name
			expectObservation(t, tc.c, framework.Observation{Admission: allowed, Volumes: []framework.VolumeObservation{tc.want}})
		})
	}
}

// TestSkew is KEP-5502 "Version Skew Strategy" plus running pods across a gate flip
// ("Upgrade / Downgrade Strategy": running pods are not affected).
func TestSkew(t *testing.T) {
	const dropped = "spec.volumes[0].emptyDir.mode"
	tests := []struct {
		name              string
		apiserver, kubelt bool
		after             []framework.Step
		root              string
		dropped           []string
	}{
		{name: "apiserver on kubelet off", apiserver: true, kubelt: false, root: "0777"},
		{name: "apiserver off kubelet on", apiserver: false, kubelt: true, root: "0777", dropped: []string{dropped}},
		{name: "both on", apiserver: true, kubelt: true, root: "0750"},
		{name: "both off", apiserver: false, kubelt: false, root: "0777", dropped: []string{dropped}},
		{
			name: "created before the kubelet gate is turned on keeps 0777", apiserver: true, kubelt: false, root: "0777",
			after: []framework.Step{{SetGates: &framework.Gates{Kubelet: map[string]bool{framework.GateEmptyDirVolumeMode: true}}}, {RestartKubelet: true}},
		},
		{
			name: "created before the kubelet gate is turned off keeps 0750", apiserver: true, kubelt: true, root: "0750",
			after: []framework.Step{{SetGates: &framework.Gates{Kubelet: map[string]bool{framework.GateEmptyDirVolumeMode: false}}}, {RestartKubelet: true}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &framework.Case{
				Name: tc.name,
				Gates: framework.Gates{
					APIServer: map[string]bool{framework.GateEmptyDirVolumeMode: tc.apiserver},
					Kubelet:   map[string]bool{framework.GateEmptyDirVolumeMode: tc.kubelt},
				},
				Pod:   podWith(emptyDir("v", "", i32(0750))),
				After: tc.after,
			}
			expectObservation(t, c, framework.Observation{
				Admission: framework.Admission{Allowed: true, Dropped: tc.dropped},
				Volumes:   []framework.VolumeObservation{{Name: "v", Type: "emptyDir", SetUp: "ok", Paths: []framework.PathObservation{entry(".", "dir", tc.root, 0, 0)}}},
			})
		})
	}
}
