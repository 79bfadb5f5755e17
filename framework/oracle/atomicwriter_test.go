package oracle

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
)

// secretLayout is a secret volume holding one key "key" whose file has mode file.
func secretLayout(root, ts, file string, tsGID, fileGID, linkGID int64) []framework.PathObservation {
	return []framework.PathObservation{
		entry(".", "dir", root, 0, linkGID),
		entry("..TIMESTAMP", "dir", ts, 0, tsGID),
		entry("..TIMESTAMP/key", "file", file, 0, fileGID),
		link("..data", "..TIMESTAMP", linkGID),
		link("key", "..data/key", linkGID),
	}
}

// TestSecretDefaultModeWithFSGroup is seed 002's motivation: the walk ORs the read-only mask.
func TestSecretDefaultModeWithFSGroup(t *testing.T) {
	tests := []struct {
		defaultMode *int32
		want        string
	}{
		{i32(0400), "0440"}, {i32(0600), "0640"}, {i32(0000), "0440"}, {i32(0111), "0551"},
		{i32(0644), "0644"}, {nil, "0644"}, {i32(0777), "0777"}, {i32(0200), "0640"},
	}
	for _, tc := range tests {
		name := "defaultMode nil"
		if tc.defaultMode != nil {
			name = "defaultMode " + framework.FormatMode(uint32(*tc.defaultMode))
		}
		t.Run(name, func(t *testing.T) {
			c := &framework.Case{
				Name:    name,
				Pod:     withFSGroup(podWith(secretVol("s", "creds", tc.defaultMode)), 2000),
				Sources: map[string]map[string]string{"secret/creds": {"key": "v"}},
			}
			expectObservation(t, c, framework.Observation{Admission: allowed, Volumes: []framework.VolumeObservation{
				{Name: "s", Type: "secret", SetUp: "ok", Paths: secretLayout("3777", "2755", tc.want, 2000, 2000, 2000)},
			}})
		})
	}
}

func TestPreservePermissions(t *testing.T) {
	proposal := func(apiserver, kubelet bool) framework.Gates {
		return framework.Gates{
			APIServer: map[string]bool{framework.GatePreservePermissions: apiserver},
			Kubelet:   map[string]bool{framework.GatePreservePermissions: kubelet},
		}
	}
	// Walked: the ro walk after the payload; preserved: only the wrapped emptyDir's walk of its
	// empty root, so the timestamp dir keeps 0755 (setgid cleared by its chmod) and the file
	// keeps 0400 and root's group; what the kubelet makes after that inherits gid 2000.
	walked := secretLayout("3777", "2755", "0440", 2000, 2000, 2000)
	preserved := secretLayout("3777", "0755", "0400", 2000, 0, 2000)
	tests := []struct {
		name    string
		gates   framework.Gates
		old     []string
		oldPod  bool
		paths   []framework.PathObservation
		carried []string
		dropped []string
	}{
		{name: "both gates on: preserved", gates: proposal(true, true), paths: preserved, carried: []string{"s"}},
		{name: "kubelet gate off: walked", gates: proposal(true, false), paths: walked, carried: []string{"s"}},
		{name: "apiserver gate off: dropped, walked", gates: proposal(false, true), paths: walked, dropped: []string{"spec.volumes[0].secret.preservePermissions"}},
		{name: "apiserver gate off, old pod had it: kept", gates: proposal(false, true), old: []string{"s"}, oldPod: true, paths: preserved, carried: []string{"s"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &framework.Case{
				Name:                   tc.name,
				Gates:                  tc.gates,
				Pod:                    withFSGroup(podWith(secretVol("s", "creds", i32(0400))), 2000),
				PreservePermissions:    []string{"s"},
				OldPreservePermissions: tc.old,
				Sources:                map[string]map[string]string{"secret/creds": {"key": "v"}},
			}
			if tc.oldPod {
				c.OldPod = withFSGroup(podWith(secretVol("s", "creds", i32(0400))), 2000)
			}
			expectObservation(t, c, framework.Observation{
				Admission: framework.Admission{Allowed: true, Dropped: tc.dropped, PreservePermissions: tc.carried},
				Volumes:   []framework.VolumeObservation{{Name: "s", Type: "secret", SetUp: "ok", Paths: tc.paths}},
			})
		})
	}
}

func TestAtomicWriterVolumes(t *testing.T) {
	configMap := corev1.Volume{Name: "c", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: "conf"},
		Items:                []corev1.KeyToPath{{Key: "a", Path: "dir/a.conf", Mode: i32(0600)}, {Key: "b", Path: "b"}},
	}}}
	tests := []struct {
		name string
		c    *framework.Case
		want framework.VolumeObservation
	}{
		{
			name: "configMap: default medium root 0777, nested dirs 0755, item modes exact",
			c:    &framework.Case{Pod: podWith(configMap), Sources: map[string]map[string]string{"configmap/conf": {"a": "1", "b": "2"}}},
			want: framework.VolumeObservation{Name: "c", Type: "configMap", SetUp: "ok", Paths: []framework.PathObservation{
				entry(".", "dir", "0777", 0, 0), entry("..TIMESTAMP", "dir", "0755", 0, 0),
				entry("..TIMESTAMP/b", "file", "0644", 0, 0), entry("..TIMESTAMP/dir", "dir", "0755", 0, 0),
				entry("..TIMESTAMP/dir/a.conf", "file", "0600", 0, 0),
				link("..data", "..TIMESTAMP", 0), link("b", "..data/b", 0), link("dir", "..data/dir", 0),
			}},
		},
		{
			name: "secret: a missing key fails",
			c: &framework.Case{Pod: podWith(secretVol("s", "creds", nil, corev1.KeyToPath{Key: "nope", Path: "x"})),
				Sources: map[string]map[string]string{"secret/creds": {"key": "v"}}},
			want: framework.VolumeObservation{Name: "s", Type: "secret", SetUp: "references non-existent secret key: nope"},
		},
		{
			name: "secret: an absent object fails with the kubelet's NotFound",
			c:    &framework.Case{Pod: podWith(secretVol("s", "absent", nil))},
			want: framework.VolumeObservation{Name: "s", Type: "secret", SetUp: `secret "absent" not found`},
		},
		{
			name: "secret: an empty object is set up empty",
			c:    &framework.Case{Pod: podWith(secretVol("s", "empty", nil)), Sources: map[string]map[string]string{"secret/empty": {}}},
			want: framework.VolumeObservation{Name: "s", Type: "secret", SetUp: "ok", Paths: []framework.PathObservation{
				entry(".", "dir", "1777", 0, 0), entry("..TIMESTAMP", "dir", "0755", 0, 0), link("..data", "..TIMESTAMP", 0),
			}},
		},
		{
			name: "restart with an unchanged payload changes nothing a container did",
			c: &framework.Case{
				Pod:     withFSGroup(podWith(secretVol("s", "creds", i32(0400))), 2000),
				Sources: map[string]map[string]string{"secret/creds": {"key": "v"}},
				After:   []framework.Step{{Chmod: &framework.Chmod{Volume: "s", Path: "key", Mode: 0400}}, {RestartKubelet: true}},
			},
			want: framework.VolumeObservation{Name: "s", Type: "secret", SetUp: "ok", Paths: secretLayout("3777", "2755", "0400", 2000, 2000, 2000)},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.c.Name = tc.name
			expectObservation(t, tc.c, framework.Observation{Admission: allowed, Volumes: []framework.VolumeObservation{tc.want}})
		})
	}
}
