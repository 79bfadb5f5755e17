package kind

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"

	"github.com/distribution/reference"
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
		if imageID(n, tag) != strings.TrimSpace(string(id)) {
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

// imageID is the image ID (its config's digest, what Docker calls the image's Id) of the image
// named ref in node n's containerd (namespace k8s.io), "" when it has none or cannot say. volperm's
// node images have ctr, not crictl (which kind's nodeutils.ImageID asks): the image's manifest
// digest from `ctr images ls`, then the manifest's config digest from its content.
func imageID(n nodes.Node, ref string) string {
	var ls bytes.Buffer
	if err := n.Command("ctr", "-n", "k8s.io", "images", "ls", "name=="+fullRef(ref)).SetStdout(&ls).Run(); err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(ls.String()), "\n")
	if len(lines) != 2 { // the header and the image
		return ""
	}
	fields := strings.Fields(lines[1])
	if len(fields) < 3 || !strings.HasPrefix(fields[2], "sha256:") {
		return ""
	}
	var manifest bytes.Buffer
	if err := n.Command("ctr", "-n", "k8s.io", "content", "get", fields[2]).SetStdout(&manifest).Run(); err != nil {
		return ""
	}
	var m struct {
		Config struct {
			Digest string `json:"digest"`
		} `json:"config"`
	}
	if json.Unmarshal(manifest.Bytes(), &m) != nil {
		return ""
	}
	return m.Config.Digest
}

// fullRef is ref as containerd names a Docker image (Docker's normalization: docker.io/ for a
// name without a registry, library/ for one of one path element, :latest for one without a tag
// or digest); ref itself when it does not parse.
func fullRef(ref string) string {
	named, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return ref
	}
	return reference.TagNameOnly(named).String()
}
