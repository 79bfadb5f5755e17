package cluster

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/nodeimpl/kubelet"
)

// The disk's owner goes into UID/GID, the pod's into PodUID/PodGID only where it differs (an
// owner outside the pod's range shows as 65534 in the pod); an entry the node lacks is an error.
func TestDiskOwners(t *testing.T) {
	inPod := []framework.PathObservation{
		{Path: ".", UID: 0, GID: 2000},
		{Path: "far", UID: framework.Overflow, GID: framework.Overflow},
		{Path: "near", UID: 1000, GID: 1000},
	}
	onDisk := []framework.PathObservation{
		{Path: ".", UID: 0, GID: 2000},
		{Path: "far", UID: 70000, GID: 1000},
		{Path: "near", UID: 1000, GID: 1000},
		{Path: "made-after", UID: 1000, GID: 1000},
	}
	if missing := framework.PodOwners(onDisk, inPod); len(missing) > 0 {
		t.Fatal(missing)
	}
	far := onDisk[1]
	if far.UID != 70000 || far.PodUID == nil || *far.PodUID != framework.Overflow || far.GID != 1000 || far.PodGID == nil || *far.PodGID != framework.Overflow {
		t.Errorf("far: %+v, want 70000:1000 on disk, 65534:65534 in the pod", far)
	}
	for _, p := range []framework.PathObservation{onDisk[0], onDisk[2]} {
		if p.PodUID != nil || p.PodGID != nil {
			t.Errorf("%+v: the same in both views, want no pod owner", p)
		}
	}
	if missing := framework.PodOwners(onDisk, []framework.PathObservation{{Path: "gone"}}); len(missing) == 0 {
		t.Error("an entry missing on the node: want an error")
	}
}

// The kubelet's directory of each volume type the target sets up.
func TestPluginDir(t *testing.T) {
	for want, src := range map[string]corev1.VolumeSource{
		"kubernetes.io~empty-dir":    {EmptyDir: &corev1.EmptyDirVolumeSource{}},
		"kubernetes.io~secret":       {Secret: &corev1.SecretVolumeSource{}},
		"kubernetes.io~configmap":    {ConfigMap: &corev1.ConfigMapVolumeSource{}},
		"kubernetes.io~downward-api": {DownwardAPI: &corev1.DownwardAPIVolumeSource{}},
		"kubernetes.io~projected":    {Projected: &corev1.ProjectedVolumeSource{}},
		"volperm~fixture":            {FlexVolume: &corev1.FlexVolumeSource{Driver: framework.FixtureDriver}},
		"":                           {HostPath: &corev1.HostPathVolumeSource{}},
	} {
		if got := kubelet.PluginDir(corev1.Volume{VolumeSource: src}); got != want {
			t.Errorf("%+v: %q, want %q", src, got, want)
		}
	}
}

// TestLiveRangesShared: two running pods with one host id in common are named; a pod deleted
// (or its namespace) is forgotten, so a later pod may have its range.
func TestLiveRangesShared(t *testing.T) {
	var l liveRanges
	if s, n := l.add("ns/a", framework.IDMap{HostID: 65536, Length: 65536}); s != "" || n != 0 {
		t.Errorf("first pod: shared %q, others %d", s, n)
	}
	if s, n := l.add("ns/b", framework.IDMap{HostID: 131072, Length: 65536}); s != "" || n != 1 {
		t.Errorf("disjoint pod: shared %q, others %d", s, n)
	}
	if s, _ := l.add("ns/c", framework.IDMap{HostID: 131071, Length: 2}); s != "ns/a" && s != "ns/b" {
		t.Errorf("a range over both: shared %q, want a or b", s)
	}
	l.remove("ns/c")
	if s, _ := l.add("ns/d", framework.IDMap{HostID: 131072, Length: 65536}); s != "ns/b" {
		t.Errorf("b's range again while b runs: shared %q, want ns/b", s)
	}
	l.remove("ns/")
	if s, n := l.add("other/e", framework.IDMap{HostID: 131072, Length: 65536}); s != "" || n != 0 {
		t.Errorf("after the namespace is gone: shared %q, others %d", s, n)
	}
}
