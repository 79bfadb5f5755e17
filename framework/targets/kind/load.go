package kind

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"

	kindcluster "sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cluster/nodeutils"
)

// LoadImage puts the Docker image tag on every node of kind cluster name, as `kind load
// docker-image` does (its archive imported into each node's containerd, namespace k8s.io): for
// images the cluster's pods run with imagePullPolicy Never, such as the runner image of an
// in-cluster run.
func LoadImage(ctx context.Context, name, tag string, log io.Writer) error {
	provider := kindcluster.NewProvider(kindcluster.ProviderWithDocker(), kindcluster.ProviderWithLogger(logger{log}))
	nodes, err := provider.ListNodes(name)
	if err != nil {
		return fmt.Errorf("kind cluster %s: %w", name, err)
	}
	if len(nodes) == 0 {
		return fmt.Errorf("no kind cluster named %s (docker ps shows none of its nodes)", name)
	}
	archive, err := exec.CommandContext(ctx, "docker", "save", tag).Output()
	if err != nil {
		return fmt.Errorf("docker save %s: %w", tag, err)
	}
	for _, n := range nodes {
		if err := nodeutils.LoadImageArchive(n, bytes.NewReader(archive)); err != nil {
			return fmt.Errorf("load %s into node %s: %w", tag, n, err)
		}
	}
	fmt.Fprintf(log, "kind: %s loaded into %d nodes of %s\n", tag, len(nodes), name)
	return nil
}
