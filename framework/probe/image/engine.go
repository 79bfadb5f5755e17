package image

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// Engine is what importing an image needs of a container engine: the container target speaks to
// Docker through its API client (framework/targets/container), kind's image builds through the
// docker command (CLI). Ensure is the one importer and pruner of the probe and runner images.
type Engine interface {
	// Has says whether the engine has the image tag.
	Has(ctx context.Context, tag string) (bool, error)
	// Import makes the image tag of one layer (a tar) with the configuration changes
	// (`docker import --change`).
	Import(ctx context.Context, tag string, changes []string, layer []byte) error
	// Tags are the engine's tags of the repository repo (repo:TAG).
	Tags(ctx context.Context, repo string) ([]string, error)
	// Remove removes the image tag; the engine refuses while a container uses it.
	Remove(ctx context.Context, tag string) error
}

// Ensure imports i into e unless e has it, then removes e's other tags of i's repository (one per
// change of the binaries: they only accumulated; a tag another run's container still uses is
// refused by the engine and stays). It returns whether it imported i and the tags it removed.
func Ensure(ctx context.Context, e Engine, i Image) (imported bool, removed []string, err error) {
	defer func() {
		if err == nil {
			removed = prune(ctx, e, i.Tag)
		}
	}()
	if has, err := e.Has(ctx, i.Tag); err != nil {
		return false, nil, fmt.Errorf("image %s: %w", i.Tag, err)
	} else if has {
		return false, nil, nil
	}
	layer, err := i.Layer()
	if err != nil {
		return false, nil, fmt.Errorf("image %s: its layer: %w", i.Tag, err)
	}
	if err := e.Import(ctx, i.Tag, i.Changes(), layer); err != nil {
		return false, nil, fmt.Errorf("import image %s: %w", i.Tag, err)
	}
	if has, err := e.Has(ctx, i.Tag); err != nil || !has {
		return false, nil, fmt.Errorf("image %s missing after its import (%v)", i.Tag, err)
	}
	return true, nil, nil
}

// prune removes e's tags of keep's repository but keep, and returns those it removed.
func prune(ctx context.Context, e Engine, keep string) []string {
	repo := Repository(keep)
	tags, err := e.Tags(ctx, repo)
	if err != nil {
		return nil
	}
	var removed []string
	for _, tag := range tags {
		if tag == keep || !strings.HasPrefix(tag, repo+":") {
			continue
		}
		if e.Remove(ctx, tag) == nil {
			removed = append(removed, tag)
		}
	}
	return removed
}

// CLI is the docker command as an Engine (the engine DOCKER_HOST names, or the default one).
type CLI struct{}

// Has runs `docker image inspect`.
func (CLI) Has(ctx context.Context, tag string) (bool, error) {
	out, err := exec.CommandContext(ctx, "docker", "image", "inspect", "--format", "{{.Id}}", tag).CombinedOutput()
	switch {
	case err == nil:
		return true, nil
	case strings.Contains(strings.ToLower(string(out)), "no such image"):
		return false, nil
	}
	return false, fmt.Errorf("docker image inspect %s: %w: %s", tag, err, strings.TrimSpace(string(out)))
}

// Import runs `docker import`.
func (CLI) Import(ctx context.Context, tag string, changes []string, layer []byte) error {
	args := []string{"import"}
	for _, c := range changes {
		args = append(args, "--change", c)
	}
	cmd := exec.CommandContext(ctx, "docker", append(args, "-", tag)...)
	cmd.Stdin = bytes.NewReader(layer)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("docker import: %w\n%s", err, out)
	}
	return nil
}

// Tags runs `docker images REPO`.
func (CLI) Tags(ctx context.Context, repo string) ([]string, error) {
	out, err := exec.CommandContext(ctx, "docker", "images", "--format", "{{.Repository}}:{{.Tag}}", repo).Output()
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(out)), nil
}

// Remove runs `docker rmi`.
func (CLI) Remove(ctx context.Context, tag string) error {
	return exec.CommandContext(ctx, "docker", "rmi", tag).Run()
}
