package container

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"

	"github.com/volperm/volperm/framework/owner"
	"github.com/volperm/volperm/framework/sweep"
	"github.com/volperm/volperm/hostfeature"
)

// containerLabels mark a probe container with the target, the run and the run's owner, so that
// the next run removes it when this one is killed (sweep).
func containerLabels(run string) map[string]string {
	l := owner.Self().Labels()
	l[LabelTarget] = Name
	l[LabelRun] = run
	return l
}

func init() {
	sweep.Register("probe containers", sweepContainers)
}

// sweepContainers removes the probe containers (label volperm.dev/target=container) whose run
// is no longer alive. Without an engine there is nothing to sweep.
func sweepContainers(ctx context.Context, o sweep.Options) ([]string, error) {
	if hostfeature.Check(hostfeature.ContainerEngine) != nil {
		return nil, nil
	}
	cli, err := client.New(client.FromEnv)
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	list, err := cli.ContainerList(lctx, client.ContainerListOptions{All: true, Filters: make(client.Filters).Add("label", LabelTarget+"="+Name)})
	if err != nil {
		return nil, fmt.Errorf("list probe containers: %w", err)
	}
	var found []string
	var errs []error
	for _, c := range list.Items {
		m, ok := owner.FromLabels(c.Labels)
		if !ok || m.Alive() {
			continue
		}
		found = append(found, fmt.Sprintf("container %.12s of %s", c.ID, m))
		if o.DryRun {
			continue
		}
		// Each removal has its own bound: a busy engine takes seconds to kill and remove one
		// (three in a row once exceeded one shared 30 s bound in CI). One at a time: Debian's
		// dockerd 20.10 once deadlocked in libnetwork while containers were removed concurrently.
		rctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		err := removeContainer(rctx, cli, c.ID)
		cancel()
		if err != nil {
			errs = append(errs, fmt.Errorf("remove container %.12s: %w", c.ID, err))
		}
	}
	return found, errors.Join(errs...)
}

// removeContainer force-removes a container and returns once it is gone. A removal the engine
// is already doing (a killed run's, still going after its client died) is waited for: the
// engine answers a second one with a conflict "removal of container ... is already in progress"
// (TestRunKilled met it).
func removeContainer(ctx context.Context, cli *client.Client, id string) error {
	_, err := cli.ContainerRemove(ctx, id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
	switch {
	case err == nil, cerrdefs.IsNotFound(err):
		return nil
	case !cerrdefs.IsConflict(err) || !strings.Contains(err.Error(), "already in progress"):
		return err
	}
	for {
		if _, ierr := cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{}); cerrdefs.IsNotFound(ierr) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w; still there after %v", err, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}
