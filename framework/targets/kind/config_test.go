package kind

import (
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/targets/kind/nodeimage"
)

func TestConfigsSetTheGatesTheirNamesSay(t *testing.T) {
	on, off := map[string]bool{"EmptyDirVolumeMode": true, "PreservePermissions": false, "AtomicWriteVolumeUserFields": false, "VolumeBindMountOptions": false},
		map[string]bool{"EmptyDirVolumeMode": false, "PreservePermissions": false, "AtomicWriteVolumeUserFields": false, "VolumeBindMountOptions": false}
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

func TestWithWorkersAddsWorkerNodes(t *testing.T) {
	cfgs, err := Configs()
	if err != nil {
		t.Fatal(err)
	}
	raw := cfgs[0].Raw
	if got, _ := withWorkers(raw, 0); string(got) != string(raw) {
		t.Error("no workers changes the config")
	}
	out, err := withWorkers(raw, 1)
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Nodes []struct{ Role string } `json:"nodes"`
	}
	if err := yaml.Unmarshal(out, &cfg); err != nil {
		t.Fatal(err)
	}
	if len(cfg.Nodes) != 2 || cfg.Nodes[0].Role != "control-plane" || cfg.Nodes[1].Role != "worker" {
		t.Errorf("nodes %+v", cfg.Nodes)
	}
	g, err := configGates(out)
	if err != nil || !reflect.DeepEqual(g, cfgs[0].Gates) {
		t.Errorf("the gates changed: %v %v", g, err)
	}
}

func TestClusterName(t *testing.T) {
	if n := clusterName("", "emptydir-on"); n != "volperm-emptydir-on" {
		t.Error(n)
	}
	if n := clusterName("faults", "emptydir-on"); n != "volperm-faults-emptydir-on" {
		t.Error(n)
	}
	// Kind targets of another release, runtime or kind@matrix make clusters of names of their
	// own: CI runs them beside the default one (.ci/run's two kind lanes).
	seen := map[string]string{}
	for _, tt := range []struct {
		name    string
		opts    Options
		runtime string
		want    string
	}{
		{"default", Options{}, "", ""},
		{"the default release and runtime named", Options{Release: nodeimage.KubernetesVersion}, nodeimage.RuntimeContainerd2, ""},
		{"debian", Options{}, nodeimage.RuntimeDebian, "debian"},
		{"v1.36", Options{Release: "v1.36.3"}, "", "v1-36-3"},
		{"matrix", Options{KubeletReleases: []string{"v1.36.3", "v1.37.1"}}, "", "matrix"},
		{"all three", Options{Release: "v1.36.3", KubeletReleases: []string{"v1.35.7"}}, nodeimage.RuntimeDebian, "v1-36-3-debian-matrix"},
	} {
		got := nameTag(tt.opts, tt.runtime)
		if got != tt.want {
			t.Errorf("%s: tag %q, want %q", tt.name, got, tt.want)
		}
		if other, dup := seen[got]; dup && got != "" {
			t.Errorf("%s and %s make clusters of one name", tt.name, other)
		}
		seen[got] = tt.name
	}
}

// A cluster of a release without volperm's v1.37 gates gets configs without them: its
// apiserver and kubelet would refuse the flag (framework.GatesOfRelease); everything else of
// the config stays, and the default release's configs are not touched.
func TestConfigOfRelease(t *testing.T) {
	cfgs, err := Configs()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cfgs {
		same, err := configOfRelease(c, "v1.37.1")
		if err != nil || string(same.Raw) != string(c.Raw) {
			t.Errorf("%s for v1.37.1: changed (%v)", c.Name, err)
		}
		old, err := configOfRelease(c, "v1.36.3")
		if err != nil {
			t.Fatalf("%s for v1.36.3: %v", c.Name, err)
		}
		raw := string(old.Raw)
		for _, gone := range []string{"EmptyDirVolumeMode", "AtomicWriteVolumeUserFields", "feature-gates"} {
			if strings.Contains(raw, gone) {
				t.Errorf("%s for v1.36.3 still names %s:\n%s", c.Name, gone, raw)
			}
		}
		for _, kept := range []string{"skipPhases", "failCgroupV1", "disableDefaultCNI", "restrict_oom_score_adj", "control-plane"} {
			if !strings.Contains(raw, kept) {
				t.Errorf("%s for v1.36.3 lost %s:\n%s", c.Name, kept, raw)
			}
		}
		reread, err := configGates(old.Raw)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := old.Gates.APIServer["EmptyDirVolumeMode"]; ok {
			t.Errorf("%s for v1.36.3: gates %v still have EmptyDirVolumeMode", c.Name, old.Gates)
		}
		if !reflect.DeepEqual(framework.GatesOfRelease(reread.Kubelet, "v1.36.3"), old.Gates.Kubelet) {
			t.Errorf("%s for v1.36.3: gates %v, the config reads %v", c.Name, old.Gates, reread)
		}
	}
}

// The cgroupfs patch is added to a config's own containerd patches (cgroup.go), and the
// containerd major version is read from what `containerd --version` prints.
func TestCgroupfsPatch(t *testing.T) {
	cfgs, err := Configs()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := withCgroupfs(cfgs[0].Raw)
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		ContainerdConfigPatches []string `json:"containerdConfigPatches"`
	}
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	if n := len(cfg.ContainerdConfigPatches); n != 2 || !strings.Contains(cfg.ContainerdConfigPatches[0], "restrict_oom_score_adj") ||
		!strings.Contains(cfg.ContainerdConfigPatches[1], "SystemdCgroup = false") {
		t.Errorf("patches %q: want the config's own, then SystemdCgroup = false", cfg.ContainerdConfigPatches)
	}
	for out, want := range map[string]string{
		"containerd github.com/containerd/containerd/v2 v2.4.2 f1b2c3\n":           "2",
		"containerd github.com/containerd/containerd 1.6.20~ds1 1.6.20~ds1-1+b1\n": "1",
	} {
		m := containerdMajor.FindStringSubmatch(out)
		if m == nil || m[1] != want {
			t.Errorf("%q: major %v, want %s", out, m, want)
		}
	}
}
