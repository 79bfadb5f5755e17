package nodeimage

import (
	"os"
	"regexp"
	"testing"
)

// The tags a node image of a release holds are the ones its kubeadm lists.
func TestParseImageList(t *testing.T) {
	out := `registry.k8s.io/kube-apiserver:v1.36.3
registry.k8s.io/kube-controller-manager:v1.36.3
registry.k8s.io/kube-scheduler:v1.36.3
registry.k8s.io/kube-proxy:v1.36.3
registry.k8s.io/coredns/coredns:v1.14.2
registry.k8s.io/pause:3.10.2
registry.k8s.io/etcd:3.6.8-0
`
	etcd, pause, err := parseImageList(out)
	if err != nil || etcd != "3.6.8-0" || pause != "3.10.2" {
		t.Errorf("parseImageList = %q, %q, %v; want 3.6.8-0, 3.10.2", etcd, pause, err)
	}
	if v := etcdVersion(etcd); v != "v3.6.8" {
		t.Errorf("etcdVersion(%q) = %q, want v3.6.8", etcd, v)
	}
	for _, bad := range []string{"", "registry.k8s.io/pause:3.10.2\n", "registry.k8s.io/etcd:latest\nregistry.k8s.io/pause:3.10.2\n"} {
		if _, _, err := parseImageList(bad); err == nil {
			t.Errorf("parseImageList(%q): no error", bad)
		}
	}
}

// The default release is the one build/kindnode compiles.
func TestKubernetesVersionIsBuildKindnodes(t *testing.T) {
	mod, err := os.ReadFile("../../../../build/kindnode/go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*k8s\.io/kubernetes (v\S+)`).FindSubmatch(mod)
	if m == nil || string(m[1]) != KubernetesVersion {
		t.Errorf("build/kindnode/go.mod requires k8s.io/kubernetes %q, KubernetesVersion is %s", m, KubernetesVersion)
	}
}
