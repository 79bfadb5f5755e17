package cluster

import "testing"

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
