package cluster

import (
	"maps"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// A kubelet's /metrics lines as v1.37 writes them (pkg/kubelet/volumemanager/metrics).
const volumeMetrics = `# HELP volume_manager_total_volumes [ALPHA] Number of volumes in Volume Manager
# TYPE volume_manager_total_volumes gauge
volume_manager_total_volumes{plugin_name="kubernetes.io/configmap",state="actual_state_of_world"} 3
volume_manager_total_volumes{plugin_name="kubernetes.io/configmap",state="desired_state_of_world"} 3
volume_manager_total_volumes{plugin_name="kubernetes.io/empty-dir",state="actual_state_of_world"} 12
volume_manager_total_volumes{plugin_name="kubernetes.io/empty-dir",state="desired_state_of_world"} 14
volume_manager_total_volumes_other{plugin_name="kubernetes.io/host-path",state="actual_state_of_world"} 9
kubernetes_feature_enabled{name="EmptyDirVolumeMode",stage="ALPHA"} 1
`

func TestParseMountedVolumes(t *testing.T) {
	got, err := parseMountedVolumes([]byte(volumeMetrics))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"kubernetes.io/configmap": 3, "kubernetes.io/empty-dir": 12}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v (desired counts and other metrics left out)", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: got %d, want %d", k, got[k], v)
		}
	}
	if _, err := parseMountedVolumes([]byte(`volume_manager_total_volumes{plugin_name="x",state="actual_state_of_world"} many` + "\n")); err == nil {
		t.Error("a value that is not a number was accepted")
	}
}

// Each volume of a pod counts for its plugin, by the names the kubelet's metrics use; volumes
// of plugins volperm cannot name are not counted, and those plugins are left out.
func TestDeclaredVolumes(t *testing.T) {
	pods := []corev1.Pod{{Spec: corev1.PodSpec{Volumes: []corev1.Volume{
		{Name: "a", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "b", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "c", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{}}},
		{Name: "d", VolumeSource: corev1.VolumeSource{FlexVolume: &corev1.FlexVolumeSource{Driver: "volperm/fixture"}}},
	}}}, {Spec: corev1.PodSpec{Volumes: []corev1.Volume{
		{Name: "e", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/x"}}},
	}}}}
	got := declaredVolumes(pods)
	want := map[string]int{"kubernetes.io/empty-dir": 2, "kubernetes.io/projected": 1, "kubernetes.io/host-path": 1,
		"kubernetes.io/secret": 0, "kubernetes.io/configmap": 0, "kubernetes.io/downward-api": 0}
	if !maps.Equal(got, want) {
		t.Errorf("declaredVolumes = %v, want %v", got, want)
	}
	// Every name is one the metrics of TestParseMountedVolumes use or the kubelet's pkg/volume.
	mounted, err := parseMountedVolumes([]byte(volumeMetrics))
	if err != nil {
		t.Fatal(err)
	}
	for name := range mounted {
		if _, ok := got[name]; !ok {
			t.Errorf("plugin %s of the kubelet's metrics has no declared count", name)
		}
	}
}
