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
	// release is the cluster's Kubernetes release: a gate it lacks is never written into a
	// flag or a configuration, which its components would refuse (framework.GatesOfRelease).
	release string
}

// SetKubeletGates rewrites featureGates of the kubelet's configuration file.
func (n nodeControl) SetKubeletGates(_ context.Context, gates map[string]bool) error {
	gates = framework.GatesOfRelease(gates, n.release)
	return editKubeletConfig(n.kubelet, func(raw []byte) ([]byte, error) { return withKubeletGates(raw, gates) })
}

// editKubeletConfig rewrites node's kubelet configuration file with edit.
func editKubeletConfig(node nodes.Node, edit func(raw []byte) ([]byte, error)) error {
	var raw bytes.Buffer
	if err := node.Command("cat", kubeletConfig).SetStdout(&raw).Run(); err != nil {
		return fmt.Errorf("read %s on %s: %w", kubeletConfig, node, err)
	}
	out, err := edit(raw.Bytes())
	if err != nil {
		return fmt.Errorf("%s on %s: %w", kubeletConfig, node, err)
	}
	if err := node.Command("cp", "/dev/stdin", kubeletConfig).SetStdin(bytes.NewReader(out)).Run(); err != nil {
		return fmt.Errorf("write %s on %s: %w", kubeletConfig, node, err)
	}
	return nil
}

// withKubeletGates is a kubelet configuration whose featureGates are gates, the rest kept.
func withKubeletGates(raw []byte, gates map[string]bool) ([]byte, error) {
	var cfg map[string]any
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		return nil, err
	}
	cfg["featureGates"] = gates
	return yaml.Marshal(cfg)
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
func (n nodeControl) SetAPIServerGates(_ context.Context, gates map[string]bool) (string, error) {
	gates = framework.GatesOfRelease(gates, n.release)
	var raw bytes.Buffer
	if err := n.apiserver.Command("cat", apiserverManifest).SetStdout(&raw).Run(); err != nil {
		return "", fmt.Errorf("read %s on %s: %w", apiserverManifest, n.apiserver, err)
	}
	main, err := manifestGates(raw.Bytes())
	if err != nil {
		return "", fmt.Errorf("%s on %s: %w", apiserverManifest, n.apiserver, err)
	}
	if sameGates(main, gates) {
		return "", nil
	}
	key := gateFlag(gates)
	n.extra.mu.Lock()
	defer n.extra.mu.Unlock()
	if ep, ok := n.extra.byKey[key]; ok {
		return ep, nil
	}
	if n.extra.next == 0 {
		n.extra.next = firstExtraPort
	}
	port := n.extra.next
	ip, _, err := n.apiserver.IP()
	if err != nil || ip == "" {
		return "", fmt.Errorf("IP of %s: %v", n.apiserver, err)
	}
	out, err := extraAPIServer(raw.Bytes(), gates, port)
	if err != nil {
		return "", fmt.Errorf("%s on %s: %w", apiserverManifest, n.apiserver, err)
	}
	path := fmt.Sprintf("/etc/kubernetes/manifests/volperm-apiserver-%d.yaml", port)
	tmp := fmt.Sprintf("/etc/kubernetes/volperm-apiserver-%d.yaml", port)
	if err := n.apiserver.Command("sh", "-c", `cat > "$1" && mv "$1" "$2"`, "sh", tmp, path).SetStdin(bytes.NewReader(out)).Run(); err != nil {
		return "", fmt.Errorf("write %s on %s: %w", path, n.apiserver, err)
	}
	n.extra.next++
	ep := net.JoinHostPort(ip, strconv.Itoa(port))
	n.extra.byKey[key] = ep
	return ep, nil
}

// manifestGates are the gates of the --feature-gates flag of an apiserver manifest.
func manifestGates(manifest []byte) (map[string]bool, error) {
	gates := map[string]bool{}
	var perr error
	_, err := editAPIServer(manifest, func(_ *corev1.Pod, c *corev1.Container) {
		for _, a := range c.Command {
			if v, ok := strings.CutPrefix(a, "--feature-gates="); ok {
				gates, perr = parseGateFlag(v)
			}
		}
	})
	if err == nil {
		err = perr
	}
	return gates, err
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
// its own name and label, its secure port in the flag, the container port and the probes, and
// no endpoint reconciler.
func extraAPIServer(manifest []byte, gates map[string]bool, port int) ([]byte, error) {
	return editAPIServer(manifest, func(pod *corev1.Pod, c *corev1.Container) {
		pod.Name = fmt.Sprintf("volperm-apiserver-%d", port)
		pod.Labels = map[string]string{"component": "volperm-apiserver", "tier": "control-plane"}
		delete(pod.Annotations, "kubeadm.kubernetes.io/kube-apiserver.advertise-address.endpoint")
		c.Command = withFlags(c.Command, "--feature-gates="+gateFlag(gates), "--secure-port="+strconv.Itoa(port), "--endpoint-reconciler-type=none")
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
	})
}

// editAPIServer applies edit to the kube-apiserver container of a static pod manifest (and its
// pod) and returns the manifest.
func editAPIServer(manifest []byte, edit func(pod *corev1.Pod, c *corev1.Container)) ([]byte, error) {
	var pod corev1.Pod
	if err := yaml.Unmarshal(manifest, &pod); err != nil {
		return nil, err
	}
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == "kube-apiserver" {
			edit(&pod, &pod.Spec.Containers[i])
			return yaml.Marshal(&pod)
		}
	}
	return nil, fmt.Errorf("no kube-apiserver container")
}

// withFlags is cmd with each of flags ("--name=value") in place of the same flag, appended in
// the order given; a flag with an empty value ("--name=") is only removed.
func withFlags(cmd []string, flags ...string) []string {
	var out []string
	for _, a := range cmd {
		keep := true
		for _, f := range flags {
			name, _, _ := strings.Cut(f, "=")
			if strings.HasPrefix(a, name+"=") {
				keep = false
			}
		}
		if keep {
			out = append(out, a)
		}
	}
	for _, f := range flags {
		if !strings.HasSuffix(f, "=") {
			out = append(out, f)
		}
	}
	return out
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

// parseGateFlag reads a --feature-gates value, NAME=true|false comma-separated (gateFlag's
// inverse).
func parseGateFlag(v string) (map[string]bool, error) {
	gates := map[string]bool{}
	for _, kv := range strings.Split(v, ",") {
		k, val, ok := strings.Cut(kv, "=")
		if !ok || (val != "true" && val != "false") {
			return nil, fmt.Errorf("feature-gates %q: want NAME=true|false", kv)
		}
		gates[k] = val == "true"
	}
	return gates, nil
}

// withFeatureGates sets --feature-gates of the kube-apiserver container of a static pod
// manifest to gates (sorted NAME=BOOL, comma-separated).
func withFeatureGates(manifest []byte, gates map[string]bool) ([]byte, error) {
	return editAPIServer(manifest, func(_ *corev1.Pod, c *corev1.Container) {
		c.Command = withFlags(c.Command, "--feature-gates="+gateFlag(gates))
	})
}
