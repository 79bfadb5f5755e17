package kind

import (
	"github.com/volperm/volperm/framework/targets/kind/nodeimage"
	"strings"
	"testing"
)

// manifest is the shape of kubeadm's kube-apiserver static pod manifest on a kind node.
const manifest = `apiVersion: v1
kind: Pod
metadata:
  name: kube-apiserver
  namespace: kube-system
spec:
  containers:
  - command:
    - kube-apiserver
    - --advertise-address=172.18.0.2
    - --feature-gates=EmptyDirVolumeMode=false
    - --tls-private-key-file=/etc/kubernetes/pki/apiserver.key
    image: registry.k8s.io/kube-apiserver:v1.37.1
    name: kube-apiserver
  hostNetwork: true
`

func TestWithFeatureGates(t *testing.T) {
	out, err := withFeatureGates([]byte(manifest), map[string]bool{"EmptyDirVolumeMode": true, "Another": false})
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	if strings.Count(s, "--feature-gates=") != 1 || !strings.Contains(s, "- --feature-gates=Another=false,EmptyDirVolumeMode=true\n") {
		t.Errorf("want one sorted --feature-gates flag, got:\n%s", s)
	}
	for _, keep := range []string{"- kube-apiserver\n", "--advertise-address=172.18.0.2", "--tls-private-key-file=", "image: registry.k8s.io/kube-apiserver:v1.37.1", "hostNetwork: true"} {
		if !strings.Contains(s, keep) {
			t.Errorf("lost %q:\n%s", keep, s)
		}
	}
	if _, err := withFeatureGates([]byte("apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: etcd\n"), nil); err == nil {
		t.Error("a manifest without a kube-apiserver container was rewritten")
	}
}

func TestParseArg(t *testing.T) {
	for _, tc := range []struct {
		arg             string
		perCell, perPod bool
		err             string
	}{
		{"", false, false, ""},
		{"per-cell", true, false, ""},
		{"pod-per-case", false, true, ""},
		{"per-cell,pod-per-case", true, true, ""},
		{"percell", false, false, `unknown option "percell" in "kind:percell"`},
		{"matrix,per-cell", false, false, "kind@matrix is one cluster"},
	} {
		var o Options
		err := parseArg(tc.arg, &o)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.arg, err, tc.err)
			}
			continue
		}
		if err != nil || o.PerCell != tc.perCell || o.PodPerCase != tc.perPod {
			t.Errorf("%q: %+v, %v", tc.arg, o, err)
		}
	}
}

// kind@matrix: the node image's kubelet, then every older release the skew policy allows.
func TestMatrixReleases(t *testing.T) {
	all := []string{"v1.33.9", "v1.34.4", "v1.35.4", "v1.36.3", nodeimage.KubernetesVersion}
	got := MatrixReleases(nodeimage.KubernetesVersion, all)
	want := []string{nodeimage.KubernetesVersion, "v1.36.3", "v1.35.4", "v1.34.4"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("MatrixReleases = %v, want %v (v1.33 is four minors older than v1.37)", got, want)
	}
	// A control plane of v1.36 (--kubernetes-version): no newer kubelet, v1.33 allowed.
	got = MatrixReleases("v1.36.3", all)
	want = []string{"v1.36.3", "v1.35.4", "v1.34.4", "v1.33.9"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("MatrixReleases(v1.36.3) = %v, want %v", got, want)
	}
	var o Options
	if err := parseArg(MatrixArg, &o); err != nil || len(o.KubeletReleases) != 4 {
		t.Errorf("parseArg(matrix) = %v, %v: want four kubelet releases", o.KubeletReleases, err)
	}
}

// A kubelet refuses a feature gate it does not know: an older worker's configuration keeps
// only the gates its release has, and every other setting.
func TestGatesOfRelease(t *testing.T) {
	cfg := "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nfailCgroupV1: false\nfeatureGates:\n  EmptyDirVolumeMode: false\n  SomeOtherGate: true\n"
	out, err := gatesOfRelease([]byte(cfg), "v1.34.4")
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	if strings.Contains(s, "EmptyDirVolumeMode") || !strings.Contains(s, "SomeOtherGate: true") || !strings.Contains(s, "failCgroupV1: false") {
		t.Errorf("v1.34 configuration:\n%s\nwant EmptyDirVolumeMode gone, the rest kept", s)
	}
	out, err = gatesOfRelease([]byte(cfg), "v1.37.1")
	if err != nil || !strings.Contains(string(out), "EmptyDirVolumeMode: false") {
		t.Errorf("v1.37 configuration:\n%s\n%v: want EmptyDirVolumeMode kept", out, err)
	}
}

// An apiserver per gate setting: the kubeadm manifest made a second apiserver on another port,
// with its own name, the gates, no endpoint reconciler, and probes on its port.
func TestExtraAPIServer(t *testing.T) {
	kubeadm := strings.Replace(manifest, "    - --tls-private-key-file=/etc/kubernetes/pki/apiserver.key\n",
		"    - --tls-private-key-file=/etc/kubernetes/pki/apiserver.key\n    - --secure-port=6443\n", 1)
	kubeadm = strings.Replace(kubeadm, "    name: kube-apiserver\n",
		"    name: kube-apiserver\n    ports:\n    - containerPort: 6443\n      name: probe-port\n      protocol: TCP\n    livenessProbe:\n      httpGet:\n        host: 172.18.0.2\n        path: /livez\n        port: 6443\n        scheme: HTTPS\n    readinessProbe:\n      httpGet:\n        path: /readyz\n        port: 6443\n        scheme: HTTPS\n", 1)
	out, err := extraAPIServer([]byte(kubeadm), map[string]bool{"EmptyDirVolumeMode": true}, 6444)
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, want := range []string{"name: volperm-apiserver-6444\n", "component: volperm-apiserver\n", "- --secure-port=6444\n",
		"- --endpoint-reconciler-type=none\n", "- --feature-gates=EmptyDirVolumeMode=true\n", "--advertise-address=172.18.0.2"} {
		if !strings.Contains(s, want) {
			t.Errorf("extra apiserver lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "6443") || strings.Count(s, "port: 6444") != 2 || !strings.Contains(s, "containerPort: 6444") {
		t.Errorf("extra apiserver still names port 6443 or has not both probes on 6444:\n%s", s)
	}
	g, err := manifestGates([]byte(kubeadm))
	if err != nil || len(g) != 1 || g["EmptyDirVolumeMode"] {
		t.Errorf("manifestGates = %v, %v", g, err)
	}
	// Unset gates are their defaults (off): {} and EmptyDirVolumeMode=false are one setting.
	if !sameGates(g, map[string]bool{}) || sameGates(g, map[string]bool{"EmptyDirVolumeMode": true}) {
		t.Error("sameGates does not compare by defaults")
	}
}
