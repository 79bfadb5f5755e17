package kind

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/cluster"
	"github.com/volperm/volperm/framework/knowndiff"
)

// perCell is where kind:per-cell's cases go: a cluster per kind-config the cases need, each
// made, given its cases to prepare and deleted (unless Keep) before the next, configs in name
// order. Each case is then answered by the target of its config's cluster from what it
// prepared: that target's pair keeps the results (the one prepared-results cache, issue 35),
// which outlive its cluster; a case not prepared runs alone in a cluster made for it.
type perCell struct {
	t *Target

	mu sync.Mutex
	// on is the cluster target that prepared each case of the last Prepare; failed is the
	// error of a case whose config's cluster could not be made.
	on     map[*framework.Case]*cluster.Target
	failed map[*framework.Case]error
}

var _ casesTarget = (*perCell)(nil)

// Info is the kind target's.
func (p *perCell) Info() framework.TargetInfo { return p.t.Info() }

// Close holds nothing: the kind target's Close deletes what clusters are left.
func (p *perCell) Close() error { return nil }

// NotApplicable is what the nodes of the cluster that prepared c are not (its target's
// NotApplicable); "" for a case not prepared.
func (p *perCell) NotApplicable(c *framework.Case) string {
	if ct, _ := p.route(c); ct != nil {
		return ct.NotApplicable(c)
	}
	return ""
}

// KnownDifference explains a failure the real v1.37 kubelet is known for (knowndiff).
func (p *perCell) KnownDifference(c *framework.Case) (framework.KnownDifference, bool) {
	return knowndiff.Explain(c)
}

// supports is kind's own check: the node image's release and a kind-config with c's gates.
func (p *perCell) supports(c *framework.Case) (bool, string) { return p.t.supportsOn(p.t.release())(c) }

// route is the cluster target that prepared c (nil: none) and the error of its config's cluster.
func (p *perCell) route(c *framework.Case) (*cluster.Target, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.on[c], p.failed[c]
}

// Supports asks kind, then the target of c's config's cluster once it prepared c.
func (p *perCell) Supports(c *framework.Case) (bool, string) {
	if ok, why := p.supports(c); !ok {
		return false, why
	}
	if ct, _ := p.route(c); ct != nil {
		return ct.Supports(c)
	}
	return true, ""
}

// Prepare runs the cases kind supports a config at a time, replacing what an earlier Prepare
// routed.
func (p *perCell) Prepare(ctx context.Context, cases []*framework.Case) error {
	on, failed, err := p.prepare(ctx, cases)
	p.mu.Lock()
	p.on, p.failed = on, failed
	p.mu.Unlock()
	return err
}

func (p *perCell) prepare(ctx context.Context, cases []*framework.Case) (map[*framework.Case]*cluster.Target, map[*framework.Case]error, error) {
	on, failed := map[*framework.Case]*cluster.Target{}, map[*framework.Case]error{}
	groups := map[string][]*framework.Case{}
	for _, c := range cases {
		if ok, _ := p.supports(c); ok {
			cfg, _ := p.t.ConfigFor(c) // supports: there is one
			groups[cfg.Name] = append(groups[cfg.Name], c)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(groups)) {
		if err := ctx.Err(); err != nil {
			return on, failed, err
		}
		batch := groups[name]
		lc, err := p.t.cluster(ctx, name)
		if err != nil {
			for _, c := range batch {
				failed[c] = err
			}
		} else {
			start, pods := time.Now(), lc.target.PodStarts()
			_ = lc.target.Prepare(ctx, batch) // its error is ctx's, checked above and below
			p.t.countPods(lc.target.PodStarts() - pods)
			p.t.logf("%s: %s %d cases, %d pod starts, in %s", lc.name, framework.AreasOf(batch), len(batch), lc.target.PodStarts()-pods, time.Since(start).Round(100*time.Millisecond))
			for _, c := range batch {
				on[c] = lc.target
			}
		}
		if !p.t.opts.Keep {
			p.t.deleteCluster(name)
		}
	}
	return on, failed, ctx.Err()
}

// Observe hands out what c's config's cluster target prepared, or runs c alone.
func (p *perCell) Observe(ctx context.Context, c *framework.Case) (*framework.Observation, error) {
	ct, err := p.route(c)
	if ct == nil && err == nil {
		on, failed, perr := p.prepare(ctx, []*framework.Case{c})
		if ct, err = on[c], failed[c]; ct == nil && err == nil {
			err = perr
		}
	}
	if err != nil {
		return nil, err
	}
	if ct == nil {
		_, why := p.supports(c)
		return nil, fmt.Errorf("kind target: %s", why)
	}
	return ct.Observe(ctx, c)
}
