package kind

import (
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
