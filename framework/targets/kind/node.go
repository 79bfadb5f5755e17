package kind

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/volperm/volperm/framework"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/yaml"
)

// kubeletConfig is where kubeadm writes the kubelet's configuration on a kind node.
const kubeletConfig = "/var/lib/kubelet/config.yaml"

// nodeControl is cluster.NodeControl for a kind cluster, through `docker exec`: the kubelet of
// the node the probe pods run on, the apiserver of the control-plane node (the same node
// unless the cluster has workers, Options.Workers).
type nodeControl struct {
	apiserver, kubelet nodes.Node
	// extra are the cluster's apiservers by gate setting (SetAPIServerGates).
	extra *apiservers
}

// SetKubeletGates rewrites featureGates of the kubelet's configuration file.
func (n nodeControl) SetKubeletGates(_ context.Context, gates map[string]bool) error {
	var raw bytes.Buffer
	if err := n.kubelet.Command("cat", kubeletConfig).SetStdout(&raw).Run(); err != nil {
		return fmt.Errorf("read %s on %s: %w", kubeletConfig, n.kubelet, err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(raw.Bytes(), &cfg); err != nil {
		return fmt.Errorf("%s on %s: %w", kubeletConfig, n.kubelet, err)
	}
	cfg["featureGates"] = gates
	out, err := yaml.Marshal(cfg)
	if err != nil {
		return err
	}
	if err := n.kubelet.Command("cp", "/dev/stdin", kubeletConfig).SetStdin(bytes.NewReader(out)).Run(); err != nil {
		return fmt.Errorf("write %s on %s: %w", kubeletConfig, n.kubelet, err)
	}
	return nil
}

// RestartKubelet restarts the kubelet's systemd unit.
func (n nodeControl) RestartKubelet(context.Context) error {
	if err := n.kubelet.Command("systemctl", "restart", "kubelet").Run(); err != nil {
		return fmt.Errorf("restart kubelet on %s: %w", n.kubelet, err)
	}
	return nil
}

// apiserverManifest is kubeadm's static pod manifest of the apiserver on a kind node.
const apiserverManifest = "/etc/kubernetes/manifests/kube-apiserver.yaml"

// apiservers are the apiservers of one cluster by gate setting (shared by the node controls of
// every worker of kind@matrix): the kubeadm one, whose gates are the kind-config's and which is
// never restarted, and one more static pod per other setting, started the first time a case
// needs it and kept until the cluster goes (framework/cluster/endpoint.go).
type apiservers struct {
	mu sync.Mutex
	// byKey is the endpoint (IP:port) of each setting's extra apiserver.
	byKey map[string]string
	// next is the secure port of the next extra apiserver.
	next int
}

// firstExtraPort is the secure port of the first extra apiserver (kubeadm's is 6443).
const firstExtraPort = 6444

// SetAPIServerGates gives the cluster an apiserver with these gates: the kubeadm one when its
// --feature-gates say the same ("" endpoint), else a static pod of its own on the control-plane
// node (the kubeadm manifest with those gates, another secure port, and
// --endpoint-reconciler-type=none so that the kubernetes Service keeps naming the kubeadm one),
// made once per setting and reached at the node's IP. Nothing is restarted: measured here, an
// apiserver restart per flip took 14-19 s and made the kubelet's watch back off.
func (n nodeControl) SetAPIServerGates(_ context.Context, gates map[string]bool) (string, bool, error) {
	var raw bytes.Buffer
	if err := n.apiserver.Command("cat", apiserverManifest).SetStdout(&raw).Run(); err != nil {
		return "", false, fmt.Errorf("read %s on %s: %w", apiserverManifest, n.apiserver, err)
	}
	main, err := manifestGates(raw.Bytes())
	if err != nil {
		return "", false, fmt.Errorf("%s on %s: %w", apiserverManifest, n.apiserver, err)
	}
	if sameGates(main, gates) {
		return "", false, nil
	}
	key := gateFlag(gates)
	n.extra.mu.Lock()
	defer n.extra.mu.Unlock()
	if ep, ok := n.extra.byKey[key]; ok {
		return ep, false, nil
	}
	if n.extra.next == 0 {
		n.extra.next = firstExtraPort
	}
	port := n.extra.next
	ip, _, err := n.apiserver.IP()
	if err != nil || ip == "" {
		return "", false, fmt.Errorf("IP of %s: %v", n.apiserver, err)
	}
	out, err := extraAPIServer(raw.Bytes(), gates, port)
	if err != nil {
		return "", false, fmt.Errorf("%s on %s: %w", apiserverManifest, n.apiserver, err)
	}
	path := fmt.Sprintf("/etc/kubernetes/manifests/volperm-apiserver-%d.yaml", port)
	tmp := fmt.Sprintf("/etc/kubernetes/volperm-apiserver-%d.yaml", port)
	if err := n.apiserver.Command("sh", "-c", `cat > "$1" && mv "$1" "$2"`, "sh", tmp, path).SetStdin(bytes.NewReader(out)).Run(); err != nil {
		return "", false, fmt.Errorf("write %s on %s: %w", path, n.apiserver, err)
	}
	n.extra.next++
	ep := net.JoinHostPort(ip, strconv.Itoa(port))
	n.extra.byKey[key] = ep
	return ep, false, nil
}

// manifestGates are the gates of the --feature-gates flag of an apiserver manifest.
func manifestGates(manifest []byte) (map[string]bool, error) {
	var pod corev1.Pod
	if err := yaml.Unmarshal(manifest, &pod); err != nil {
		return nil, err
	}
	gates := map[string]bool{}
	for _, c := range pod.Spec.Containers {
		if c.Name != "kube-apiserver" {
			continue
		}
		for _, a := range c.Command {
			v, ok := strings.CutPrefix(a, "--feature-gates=")
			if !ok {
				continue
			}
			for _, kv := range strings.Split(v, ",") {
				k, val, _ := strings.Cut(kv, "=")
				gates[k] = val == "true"
			}
		}
		return gates, nil
	}
	return nil, fmt.Errorf("no kube-apiserver container")
}

// sameGates says whether a and b set every gate volperm knows alike (unset: its default).
func sameGates(a, b map[string]bool) bool {
	for name, def := range framework.KnownGates {
		va, ok := a[name]
		if !ok {
			va = def
		}
		vb, ok := b[name]
		if !ok {
			vb = def
		}
		if va != vb {
			return false
		}
	}
	return true
}

// extraAPIServer is the kubeadm apiserver manifest made a second apiserver with gates on port:
// its own name and label, its secure port in the flag and the probes, and no endpoint
// reconciler.
func extraAPIServer(manifest []byte, gates map[string]bool, port int) ([]byte, error) {
	withGates, err := withFeatureGates(manifest, gates)
	if err != nil {
		return nil, err
	}
	var pod corev1.Pod
	if err := yaml.Unmarshal(withGates, &pod); err != nil {
		return nil, err
	}
	pod.Name = fmt.Sprintf("volperm-apiserver-%d", port)
	pod.Labels = map[string]string{"component": "volperm-apiserver", "tier": "control-plane"}
	delete(pod.Annotations, "kubeadm.kubernetes.io/kube-apiserver.advertise-address.endpoint")
	found := false
	for i, c := range pod.Spec.Containers {
		if c.Name != "kube-apiserver" {
			continue
		}
		found = true
		var cmd []string
		for _, a := range c.Command {
			if strings.HasPrefix(a, "--secure-port=") || strings.HasPrefix(a, "--endpoint-reconciler-type=") {
				continue
			}
			cmd = append(cmd, a)
		}
		cmd = append(cmd, "--secure-port="+strconv.Itoa(port), "--endpoint-reconciler-type=none")
		c.Command = cmd
		// kubeadm names the secure port (probe-port) for the probes: a host-network pod's
		// container port is a host port, which the kubelet admits once per node.
		for j := range c.Ports {
			c.Ports[j].ContainerPort = int32(port)
		}
		for _, p := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
			if p != nil && p.HTTPGet != nil {
				p.HTTPGet.Port = intstr.FromInt(port)
			}
		}
		pod.Spec.Containers[i] = c
	}
	if !found {
		return nil, fmt.Errorf("no kube-apiserver container")
	}
	return yaml.Marshal(&pod)
}

// gateFlag is gates as a --feature-gates value: sorted NAME=BOOL, comma-separated.
func gateFlag(gates map[string]bool) string {
	names := make([]string, 0, len(gates))
	for g := range gates {
		names = append(names, g)
	}
	sort.Strings(names)
	var kv []string
	for _, g := range names {
		kv = append(kv, fmt.Sprintf("%s=%v", g, gates[g]))
	}
	return strings.Join(kv, ",")
}

// withFeatureGates sets --feature-gates of the kube-apiserver container of a static pod
// manifest to gates (sorted NAME=BOOL, comma-separated).
func withFeatureGates(manifest []byte, gates map[string]bool) ([]byte, error) {
	var pod corev1.Pod
	if err := yaml.Unmarshal(manifest, &pod); err != nil {
		return nil, err
	}
	flag := gateFlag(gates)
	found := false
	for i, c := range pod.Spec.Containers {
		if c.Name != "kube-apiserver" {
			continue
		}
		found = true
		var cmd []string
		for _, a := range c.Command {
			if !strings.HasPrefix(a, "--feature-gates=") {
				cmd = append(cmd, a)
			}
		}
		if flag != "" {
			cmd = append(cmd, "--feature-gates="+flag)
		}
		pod.Spec.Containers[i].Command = cmd
	}
	if !found {
		return nil, fmt.Errorf("no kube-apiserver container")
	}
	return yaml.Marshal(&pod)
}
