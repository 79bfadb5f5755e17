package kind

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"

	kindcluster "sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/cluster/nodeutils"
)

// LoadImage puts the Docker image tag on every node of kind cluster name, as `kind load
// docker-image` does (its archive imported into each node's containerd, namespace k8s.io): for
// images the cluster's pods run with imagePullPolicy Never, such as the runner image of an
// in-cluster run. A node that has the image already (the same image ID under that name, as
// `kind load` checks) is left alone: a second load of the runner image into a 4-node cluster
// took 36 s of CI (issue 34).
func LoadImage(ctx context.Context, name, tag string, log io.Writer) error {
	provider := kindcluster.NewProvider(kindcluster.ProviderWithDocker(), kindcluster.ProviderWithLogger(logger{log}))
	all, err := provider.ListNodes(name)
	if err != nil {
		return fmt.Errorf("kind cluster %s: %w", name, err)
	}
	if len(all) == 0 {
		return fmt.Errorf("no kind cluster named %s (docker ps shows none of its nodes)", name)
	}
	id, err := exec.CommandContext(ctx, "docker", "image", "inspect", "-f", "{{.Id}}", tag).Output()
	if err != nil {
		return fmt.Errorf("docker image inspect %s: %w", tag, err)
	}
	var missing []nodes.Node
	for _, n := range all {
		if have, err := nodeutils.ImageID(n, tag); err != nil || have != strings.TrimSpace(string(id)) {
			missing = append(missing, n)
		}
	}
	if len(missing) == 0 {
		fmt.Fprintf(log, "kind: %s is on the %d nodes of %s already\n", tag, len(all), name)
		return nil
	}
	archive, err := exec.CommandContext(ctx, "docker", "save", tag).Output()
	if err != nil {
		return fmt.Errorf("docker save %s: %w", tag, err)
	}
	for _, n := range missing {
		if err := nodeutils.LoadImageArchive(n, bytes.NewReader(archive)); err != nil {
			return fmt.Errorf("load %s into node %s: %w", tag, n, err)
		}
	}
	fmt.Fprintf(log, "kind: %s loaded into %d nodes of %s\n", tag, len(missing), name)
	return nil
}
