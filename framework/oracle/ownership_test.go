package oracle

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
)

// blogFiles is seed 003's "before kubelet restarts" listing: root-owned, group 2000.
var blogFiles = []framework.File{
	{Path: "test1", Mode: 0644, GID: 2000}, {Path: "test2", Mode: 0000, GID: 2000},
	{Path: "test3", Mode: 0410, GID: 2000}, {Path: "test4", Mode: 0111, GID: 2000},
	{Path: "test5", Mode: 0440, GID: 2000}, {Path: "test6", Mode: 0660, GID: 2000},
}

// TestBlogFlexVolumeRestart is seed 003: files a container made read-only become group-writable
// again when the kubelet restarts and walks the flexVolume (rw mask).
func TestBlogFlexVolumeRestart(t *testing.T) {
	var chmods []framework.Step
	for _, f := range blogFiles {
		chmods = append(chmods, framework.Step{Chmod: &framework.Chmod{Volume: "data", Path: f.Path, Mode: f.Mode}})
	}
	onRoot := corev1.FSGroupChangeOnRootMismatch
	tests := []struct {
		name   string
		policy *corev1.PodFSGroupChangePolicy
		files  []string
	}{
		{name: "Always: the walk ORs 0660 back", files: []string{"0664", "0660", "0670", "0771", "0660", "0660"}},
		{name: "OnRootMismatch: the root matches, the walk is skipped", policy: &onRoot, files: []string{"0644", "0000", "0410", "0111", "0440", "0660"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := withFSGroup(podWith(flexVol("data", fixtureDriver)), 2000)
			p.Spec.SecurityContext.FSGroupChangePolicy = tc.policy
			c := &framework.Case{
				Name:    tc.name,
				Pod:     p,
				Storage: map[string][]framework.File{"data": blogFiles},
				// The container puts the blog's modes back after the first walk, then the kubelet restarts.
				After: append(append([]framework.Step{}, chmods...), framework.Step{RestartKubelet: true}),
			}
			paths := []framework.PathObservation{entry(".", "dir", "2770", 0, 2000)}
			for i, f := range blogFiles {
				paths = append(paths, entry(f.Path, "file", tc.files[i], 0, 2000))
			}
			expectObservation(t, c, framework.Observation{Admission: allowed, Volumes: []framework.VolumeObservation{
				{Name: "data", Type: "flexVolume", SetUp: "ok", Paths: paths},
			}})
		})
	}
}

func TestFlexVolumeSetUp(t *testing.T) {
	readOnly := withFSGroup(podWith(flexVol("data", fixtureDriver)), 2000)
	readOnly.Spec.Volumes[0].FlexVolume.ReadOnly = true
	tests := []struct {
		name string
		c    *framework.Case
		want framework.VolumeObservation
	}{
		{
			name: "first SetUp walks storage with owners kept",
			c: &framework.Case{
				Pod: withFSGroup(podWith(flexVol("data", fixtureDriver)), 2000),
				Storage: map[string][]framework.File{"data": {
					{Path: "sub", Dir: true, Mode: 0700, UID: 1001, GID: 1001},
					{Path: "sub/f", Mode: 0400, UID: 1001, GID: 1001},
					{Path: "l", Symlink: "sub/f", UID: 1001, GID: 1001},
				}},
			},
			want: framework.VolumeObservation{Paths: []framework.PathObservation{
				entry(".", "dir", "2770", 0, 2000), {Path: "l", Type: "symlink", Mode: "0777", UID: 1001, GID: 2000, Link: "sub/f"},
				entry("sub", "dir", "2770", 1001, 2000), entry("sub/f", "file", "0660", 1001, 2000),
			}},
		},
		{
			name: "readOnly: no walk",
			c:    &framework.Case{Pod: readOnly, Storage: map[string][]framework.File{"data": {{Path: "f", Mode: 0400, UID: 7, GID: 7}}}},
			want: framework.VolumeObservation{Paths: []framework.PathObservation{entry(".", "dir", "0750", 0, 0), entry("f", "file", "0400", 7, 7)}},
		},
		{
			name: "no fsGroup: no walk",
			c:    &framework.Case{Pod: podWith(flexVol("data", fixtureDriver))},
			want: framework.VolumeObservation{Paths: []framework.PathObservation{entry(".", "dir", "0750", 0, 0)}},
		},
		{
			name: "driver not installed",
			c:    &framework.Case{Pod: podWith(flexVol("data", "example/nfs"))},
			want: framework.VolumeObservation{SetUp: `flexVolume driver "example/nfs" is not installed on this node`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.c.Name = tc.name
			tc.want.Name, tc.want.Type = "data", "flexVolume"
			if tc.want.SetUp == "" {
				tc.want.SetUp = "ok"
			}
			expectObservation(t, tc.c, framework.Observation{Admission: allowed, Volumes: []framework.VolumeObservation{tc.want}})
		})
	}
}
