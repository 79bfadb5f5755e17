package cluster

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/volperm/volperm/framework"
)

// Spread is the cluster target over several nodes (nodes.go): one Target per node, pinned to it
// (Options.Node), grouped in pools. Prepare splits the run's cases over the nodes of each pool
// and runs every node's batch at once; each case is observed on one node of every pool. When
// the pools observe a case differently, the case fails with what each pool saw: a node pool
// that sets volumes up otherwise than the others is what a vendor must hear about. Which node
// observed a case is in the reports (framework.Answer's Pools: Spread is a PoolRouter, and
// answers no question of a case but Supports itself).
type Spread struct {
	pools [][]*Target
	infos [][]NodeInfo

	mu sync.Mutex
	// where is, per case prepared, the node (index in its pool) that observed it, per pool.
	where map[*framework.Case][]int
	// cases counts the cases each node observed, by node name.
	cases map[string]int
}

// NewSpread makes a Target on each node (opts with Node set to it), the nodes grouped by pool.
func NewSpread(ctx context.Context, opts Options, pools [][]NodeInfo) (*Spread, error) {
	s := &Spread{infos: pools, where: map[*framework.Case][]int{}, cases: map[string]int{}}
	var first *Target
	for _, pool := range pools {
		var ts []*Target
		for _, n := range pool {
			o := opts
			o.Node = n.Name
			t, err := New(ctx, o)
			if err != nil {
				s.Close()
				return nil, fmt.Errorf("node %s: %w", n.Name, err)
			}
			if first == nil {
				first = t
			} else {
				t.admitOn(first) // one apiserver for every node
			}
			ts = append(ts, t)
		}
		s.pools = append(s.pools, ts)
	}
	return s, nil
}

var (
	_ framework.Target     = (*Spread)(nil)
	_ framework.RunBatcher = (*Spread)(nil)
	_ framework.PoolRouter = (*Spread)(nil)
)

// first is the first node's target, which speaks for all in what does not depend on a node.
func (s *Spread) first() *Target { return s.pools[0][0] }

// Info is the first node's, with every node and pool named.
func (s *Spread) Info() framework.TargetInfo {
	info := s.first().Info()
	d := map[string]string{}
	for k, v := range info.Details {
		d[k] = v
	}
	delete(d, "node")
	s.mu.Lock()
	for i, pool := range s.infos {
		var names []string
		for _, n := range pool {
			names = append(names, fmt.Sprintf("%s (%d cases, kernel %s)", n.Name, s.cases[n.Name], n.Kernel))
		}
		d["pool "+strconv.Itoa(i+1)] = pool[0].Pool() + ": " + strings.Join(names, ", ")
	}
	s.mu.Unlock()
	pods := 0
	for _, pool := range s.pools {
		for _, t := range pool {
			pods += t.PodStarts()
		}
	}
	d["podStarts"] = strconv.Itoa(pods)
	info.Details = d
	return info
}

// Supports asks each pool's first node: a case one pool cannot run is not run, that pool named.
func (s *Spread) Supports(c *framework.Case) (bool, string) {
	for i, pool := range s.pools {
		if ok, why := pool[0].Supports(c); !ok {
			if len(s.pools) > 1 {
				why = fmt.Sprintf("pool %d (%s): %s", i+1, s.infos[i][0].Pool(), why)
			}
			return false, why
		}
	}
	return true, ""
}

// Releases are the first node's (the apiserver's and its kubelet's).
func (s *Spread) Releases() framework.Releases { return s.first().Releases() }

// split deals cases to n nodes in contiguous runs (neighbours share pods best: plan.go packs
// them in order).
func split(cases []*framework.Case, n int) [][]*framework.Case {
	out := make([][]*framework.Case, n)
	for i, c := range cases {
		k := i * n / len(cases)
		out[k] = append(out[k], c)
	}
	return out
}

// BatchesRun: as each node's cluster target (framework.RunBatcher).
func (s *Spread) BatchesRun() bool { return true }

// Prepare splits the cases each pool supports over its nodes and prepares every node's share at
// once.
func (s *Spread) Prepare(ctx context.Context, cases []*framework.Case) error {
	var supported []*framework.Case
	for _, c := range cases {
		if ok, _ := s.Supports(c); ok {
			supported = append(supported, c)
		}
	}
	if len(supported) == 0 {
		return nil
	}
	var wg sync.WaitGroup
	errs := make([][]error, len(s.pools))
	for p, pool := range s.pools {
		errs[p] = make([]error, len(pool))
		for k, share := range split(supported, len(pool)) {
			s.mu.Lock()
			for _, c := range share {
				if s.where[c] == nil {
					s.where[c] = make([]int, len(s.pools))
				}
				s.where[c][p] = k
				s.cases[s.infos[p][k].Name]++
			}
			s.mu.Unlock()
			if len(share) == 0 {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[p][k] = pool[k].Prepare(ctx, share)
			}()
		}
	}
	wg.Wait()
	for p := range errs {
		for k, err := range errs[p] {
			if err != nil {
				return fmt.Errorf("node %s: %w", s.infos[p][k].Name, err)
			}
		}
	}
	return nil
}

// node is the target of pool p that observes c.
func (s *Spread) node(c *framework.Case, p int) (*Target, NodeInfo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := 0
	if w := s.where[c]; w != nil {
		k = w[p]
	}
	return s.pools[p][k], s.infos[p][k]
}

// RoutePools is the node of every pool that observes c (framework.PoolRouter): framework.Ask
// asks each whether c is its case and what it observed, and judges the pools together.
func (s *Spread) RoutePools(c *framework.Case) []framework.PoolRoute {
	out := make([]framework.PoolRoute, len(s.pools))
	for p := range s.pools {
		t, n := s.node(c, p)
		out[p] = framework.PoolRoute{PoolNode: framework.PoolNode{Pool: n.Pool(), Kubelet: n.Kubelet, Node: n.Name}, Target: t}
	}
	return out
}

// Observe has one node of every pool observe c; pools that disagree fail the case with what each
// saw (framework.Judge). The suites ask framework.Ask instead, and judge each pool against the
// oracle.
func (s *Spread) Observe(ctx context.Context, c *framework.Case) (*framework.Observation, error) {
	_, obs, err := framework.Judge(framework.ObservePools(ctx, s.RoutePools(c), c), nil)
	return obs, err
}

// Close closes every node's target.
func (s *Spread) Close() error {
	var errs []string
	for _, pool := range s.pools {
		for _, t := range pool {
			if err := t.Close(); err != nil {
				errs = append(errs, err.Error())
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}
