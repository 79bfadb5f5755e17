package kind

import (
	"bytes"
	"context"
	"fmt"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/yaml"
)

// kubeletConfig is where kubeadm writes the kubelet's configuration on a kind node.
const kubeletConfig = "/var/lib/kubelet/config.yaml"

// nodeControl is cluster.NodeControl for a kind cluster's single node, through `docker exec`.
type nodeControl struct {
	node nodes.Node
}

// SetKubeletGates rewrites featureGates of the kubelet's configuration file.
func (n nodeControl) SetKubeletGates(_ context.Context, gates map[string]bool) error {
	var raw bytes.Buffer
	if err := n.node.Command("cat", kubeletConfig).SetStdout(&raw).Run(); err != nil {
		return fmt.Errorf("read %s on %s: %w", kubeletConfig, n.node, err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(raw.Bytes(), &cfg); err != nil {
		return fmt.Errorf("%s on %s: %w", kubeletConfig, n.node, err)
	}
	cfg["featureGates"] = gates
	out, err := yaml.Marshal(cfg)
	if err != nil {
		return err
	}
	if err := n.node.Command("cp", "/dev/stdin", kubeletConfig).SetStdin(bytes.NewReader(out)).Run(); err != nil {
		return fmt.Errorf("write %s on %s: %w", kubeletConfig, n.node, err)
	}
	return nil
}

// RestartKubelet restarts the kubelet's systemd unit.
func (n nodeControl) RestartKubelet(context.Context) error {
	if err := n.node.Command("systemctl", "restart", "kubelet").Run(); err != nil {
		return fmt.Errorf("restart kubelet on %s: %w", n.node, err)
	}
	return nil
}
