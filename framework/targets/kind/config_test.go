package kind

import (
	"reflect"
	"testing"

	"github.com/volperm/volperm/framework"
)

func TestConfigsSetTheGatesTheirNamesSay(t *testing.T) {
	on, off := map[string]bool{"EmptyDirVolumeMode": true, "PreservePermissions": false},
		map[string]bool{"EmptyDirVolumeMode": false, "PreservePermissions": false}
	want := map[string]framework.Gates{
		"emptydir-on":       {APIServer: on, Kubelet: on},
		"emptydir-off":      {APIServer: off, Kubelet: off},
		"skew-apiserver-on": {APIServer: on, Kubelet: off},
		"skew-kubelet-on":   {APIServer: off, Kubelet: on},
	}
	cfgs, err := Configs()
	if err != nil {
		t.Fatal(err)
	}
	if len(cfgs) != len(want) {
		t.Fatalf("%d configs, want %d", len(cfgs), len(want))
	}
	for _, c := range cfgs {
		if !reflect.DeepEqual(c.Gates, want[c.Name]) {
			t.Errorf("kind-config/%s.yaml: gates %v, want %v", c.Name, c.Gates, want[c.Name])
		}
	}
}

func TestConfigGatesRejectsMalformedFeatureGates(t *testing.T) {
	for _, raw := range []string{
		"kubeadmConfigPatches:\n- |\n  kind: ClusterConfiguration\n  apiServer:\n    extraArgs:\n    - name: feature-gates\n      value: EmptyDirVolumeMode\n",
		"kubeadmConfigPatches:\n- |\n  kind: ClusterConfiguration\n  apiServer:\n    extraArgs:\n    - name: feature-gates\n      value: EmptyDirVolumeMode=yes\n",
	} {
		if _, err := configGates([]byte(raw)); err == nil {
			t.Errorf("no error for %q", raw)
		}
	}
}
