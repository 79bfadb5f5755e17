package needs

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
)

// Each need is found on the case shape it names and on no other; Label is idempotent; Half
// splits them between the halves.
func TestNeeds(t *testing.T) {
	pod := func(vs ...corev1.VolumeSource) *corev1.Pod {
		p := &corev1.Pod{}
		for _, v := range vs {
			p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "v", VolumeSource: v})
		}
		return p
	}
	token := corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "t"}}}}}
	uid := int64(1000)
	asApp := pod(token)
	asApp.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: &uid}
	asApp.Spec.Containers = []corev1.Container{{Name: "c"}}
	asApp.Spec.ServiceAccountName = "default"
	for _, tc := range []struct {
		name string
		c    framework.Case
		want []string
		node bool
	}{
		{"plain emptyDir", framework.Case{Pod: pod(corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}})}, nil, false},
		{"huge pages", framework.Case{Pod: pod(corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: "HugePages-2Mi"}})}, []string{HugePages}, true},
		{"preservePermissions", framework.Case{Pod: pod(), PreservePermissions: []string{"v"}}, []string{PreservePermissions}, false},
		{"pod update", framework.Case{Pod: pod(), OldPod: pod()}, []string{PodUpdate}, false},
		{"source update", framework.Case{Pod: pod(), After: []framework.Step{{UpdateSources: map[string]map[string]string{"secret/s": {}}}}}, []string{SourceUpdate}, true},
		{"token, runAsUser 1000, probed as 1000", framework.Case{Pod: asApp, Probes: []framework.Probe{{Name: "p", As: framework.User{UID: 1000, GID: 1000}}}}, nil, false},
		{"token, runAsUser 1000, probed as 1001", framework.Case{Pod: asApp, Probes: []framework.Probe{{Name: "p", As: framework.User{UID: 1001, GID: 1001}}}}, []string{FsUserProbesLabel}, true},
		{"token without serviceAccountName", framework.Case{Pod: pod(token), AdmissionOnly: true}, []string{NoServiceAccount}, false},
		{"clusterTrustBundle", framework.Case{Pod: pod(corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{{ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{}}}}})}, []string{PodCredentials}, true},
	} {
		var got []string
		for _, n := range Of(&tc.c) {
			got = append(got, n.Label)
			if n.Reason == "" || n.Node != tc.node {
				t.Errorf("%s: need %s: reason %q, node %v (want %v)", tc.name, n.Label, n.Reason, n.Node, tc.node)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: needs %v, want %v", tc.name, got, tc.want)
		}
		Label(&tc.c)
		Label(&tc.c)
		if !slices.Equal(tc.c.Labels, tc.want) {
			t.Errorf("%s: labels %v after Label twice, want %v", tc.name, tc.c.Labels, tc.want)
		}
		if _, lacks := Half(&tc.c, !tc.node); lacks {
			t.Errorf("%s: the other half lacks something too", tc.name)
		}
		if n, lacks := Half(&tc.c, tc.node); lacks != (len(tc.want) > 0) || lacks && !strings.Contains(n.Reason, " ") {
			t.Errorf("%s: Half(%v) = %v, %v", tc.name, tc.node, n, lacks)
		}
	}
}

// NotOnClusters: a real cluster is not the implementation of a case that needs what its nodes
// are not (huge pages, the other side of a runtime capability) or what volperm cannot show on
// any cluster; a node need counts only for a case that reaches the node.
func TestNotOnClusters(t *testing.T) {
	huge := &corev1.Pod{Spec: corev1.PodSpec{Volumes: []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: "HugePages"}}}}}}
	if n, lacks := NotOnClusters(&framework.Case{Pod: huge}); !lacks || n.Label != HugePages || n.Harness {
		t.Errorf("huge pages on a cluster without them: %+v %v, want the node need %s", n, lacks, HugePages)
	}
	if n, lacks := NotOnClusters(&framework.Case{Pod: huge}, HugePages); lacks {
		t.Errorf("huge pages on a cluster with them: %+v, want none", n)
	}
	if n, lacks := NotOnClusters(&framework.Case{Pod: huge, AdmissionOnly: true}); lacks {
		t.Errorf("an admission-only huge-pages case: %+v, want none (it never reaches a node)", n)
	}
	plain := &corev1.Pod{Spec: corev1.PodSpec{Volumes: []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}}}
	if n, lacks := NotOnClusters(&framework.Case{Pod: plain, PreservePermissions: []string{"v"}}, HugePages); !lacks || !n.Harness {
		t.Errorf("preservePermissions: %+v %v, want a need volperm cannot give on any cluster", n, lacks)
	}
	if n, lacks := NotOnClusters(&framework.Case{Pod: plain, RuntimeLacks: []framework.RuntimeFeature{framework.RuntimeUserNamespaces}}, UserNamespaces); !lacks || n.Label != RuntimeWithoutUserNamespaces {
		t.Errorf("a case of a runtime without user namespaces on a cluster that has them: %+v %v", n, lacks)
	}
	if n, lacks := NotOnClusters(&framework.Case{Pod: plain, Labels: []string{RuntimeDefined}}, HugePages); !lacks || n.Label != RuntimeDefined || !n.Harness {
		t.Errorf("a runtime-defined hostPath case: %+v %v, want the need %s", n, lacks, RuntimeDefined)
	}
	if _, lacks := NotOnClusters(&framework.Case{Pod: plain}); lacks {
		t.Error("a plain emptyDir is a case of every cluster")
	}
}

// Every runtime feature a case may say its runtime lacks is a capability of the table, and each
// capability's needs are rows of the needs table.
func TestCapabilities(t *testing.T) {
	names := map[string]bool{}
	for _, c := range Capabilities {
		names[c.Name] = true
		for _, l := range []string{c.Has, c.Without} {
			if l != "" && !slices.ContainsFunc(table, func(r row) bool { return r.label == l }) {
				t.Errorf("capability %s: need %q is no row of the needs table", c.Name, l)
			}
		}
	}
	for _, f := range framework.RuntimeFeatures {
		if !names[string(f)] {
			t.Errorf("runtime feature %s (runtimeLacks) is no capability of needs.Capabilities", f)
		}
	}
	if got := Met(func(c Capability) bool { return c.Containerd2 }); len(got) != len(Capabilities) {
		t.Errorf("Met of containerd 2: %v, want one label per capability", got)
	}
}
