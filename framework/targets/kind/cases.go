package kind

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/cluster"
	"github.com/volperm/volperm/framework/knowndiff"
)

// casesTarget is the target of a case on kind (the kind target's Route, a kind@matrix cell's):
// it answers every question framework.Ask puts, its cluster's target's answers after kind's
// own, and prepares cases in batches.
type casesTarget interface {
	framework.Target
	framework.Batcher
	framework.KnownDifferences
	NotApplicable(*framework.Case) string
}

// onCluster hands cases to a cluster target of the kind target's one cluster, which is a pair
// (framework/cluster apiserver.go and kubelet.go: each case admitted once, the node's batches,
// the one prepared-results cache): the kind target's cases, and those of each cell of
// kind@matrix on its release's worker. What kind knows without a cluster (the release of its
// node image, the gates it can give a cluster) is asked first, so that no cluster is created
// for cases it cannot run. The kind target and its cells route their cases here.
type onCluster struct {
	t *Target
	// release is the kubelet release of the worker the cases run on (kind@matrix); "" is the
	// cluster's one target.
	release string
	// supports is kind's own check.
	supports func(*framework.Case) (bool, string)
}

// on is the cluster of the cases, created (from the kind-config most of cases need, with a
// steps node when they ask for one: shared) by the first caller.
func (o onCluster) on(ctx context.Context, cases []*framework.Case) (*liveCluster, error) {
	return o.t.shared(ctx, cases)
}

// of is the cluster target c runs on in lc: the worker of the cell's release (kind@matrix),
// else the cluster's (its steps node's for a case with steps: liveCluster.of).
func (o onCluster) of(lc *liveCluster, c *framework.Case) (*cluster.Target, error) {
	if o.release == "" {
		return lc.of(c), nil
	}
	if ct := lc.byRelease[o.release]; ct != nil {
		return ct, nil
	}
	return nil, fmt.Errorf("kind target: cluster %s has no worker of kubelet %s", lc.name, o.release)
}

// live is c's cluster target when the cluster has been created, else nil.
func (o onCluster) live(c *framework.Case) *cluster.Target {
	lc := o.t.created()
	if lc == nil {
		return nil
	}
	ct, _ := o.of(lc, c)
	return ct
}

var _ casesTarget = onCluster{}

// Info is the kind target's, or the cell's on the worker of its release.
func (o onCluster) Info() framework.TargetInfo {
	if o.release == "" {
		return o.t.Info()
	}
	return cellInfo(o.t, o.release)
}

// Close holds nothing: the kind target's Close deletes the cluster.
func (o onCluster) Close() error { return nil }

// NotApplicable is what the cluster's nodes are not (cluster.Target.NotApplicable: the needs
// they do not meet, runtime-defined), once the cluster exists; "" before.
func (o onCluster) NotApplicable(c *framework.Case) string {
	if ct := o.live(c); ct != nil {
		return ct.NotApplicable(c)
	}
	return ""
}

// KnownDifference explains a failure the real v1.37 kubelet is known for (knowndiff).
func (o onCluster) KnownDifference(c *framework.Case) (framework.KnownDifference, bool) {
	return knowndiff.Explain(c)
}

// Supports asks kind, then the cluster once it exists (its apiserver and its kubelet: a case
// Prepare observed is not asked again).
func (o onCluster) Supports(c *framework.Case) (bool, string) {
	if ok, why := o.supports(c); !ok {
		return false, why
	}
	if ct := o.live(c); ct != nil {
		return ct.Supports(c)
	}
	return true, ""
}

// Prepare has the cluster targets prepare the cases kind can run, each node's share at once
// (the cluster is created by the first batch). A cluster that could not be created is each
// case's error (Observe).
func (o onCluster) Prepare(ctx context.Context, cases []*framework.Case) error {
	var todo []*framework.Case
	for _, c := range cases {
		if ok, _ := o.supports(c); ok {
			todo = append(todo, c)
		}
	}
	if len(todo) == 0 {
		return ctx.Err()
	}
	lc, err := o.on(ctx, todo)
	if err != nil {
		return ctx.Err()
	}
	var targets []*cluster.Target
	share := map[*cluster.Target][]*framework.Case{}
	for _, c := range todo {
		ct, err := o.of(lc, c)
		if err != nil {
			return err
		}
		if share[ct] == nil {
			targets = append(targets, ct)
		}
		share[ct] = append(share[ct], c)
	}
	errs := make([]error, len(targets))
	var wg sync.WaitGroup
	for i, ct := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start, pods := time.Now(), ct.PodStarts()
			errs[i] = ct.Prepare(ctx, share[ct])
			o.t.countPods(ct.PodStarts() - pods)
			where := lc.name
			if o.release != "" {
				where += ", kubelet " + o.release
			}
			if len(targets) > 1 {
				where += ", node " + ct.Node()
			}
			o.t.logf("%s: %s %d cases, %d pod starts, in %s", where, framework.AreasOf(share[ct]), len(share[ct]), ct.PodStarts()-pods, time.Since(start).Round(100*time.Millisecond))
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Observe hands out what Prepare observed for c, or has the cluster observe it now.
func (o onCluster) Observe(ctx context.Context, c *framework.Case) (*framework.Observation, error) {
	lc, err := o.on(ctx, []*framework.Case{c})
	if err != nil {
		return nil, err
	}
	ct, err := o.of(lc, c)
	if err != nil {
		return nil, err
	}
	pods := ct.PodStarts()
	defer func() { o.t.countPods(ct.PodStarts() - pods) }()
	return ct.Observe(ctx, c)
}
