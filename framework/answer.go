package framework

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/volperm/volperm/hostfeature"
)

// Answer is all a target says of one case (issue 35: one answer per case). Ask is the one place
// that puts a target's questions to it; the suites, mutation, bench and the commands read the
// Answer, and a target that hands cases to others (Router, PoolRouter) answers none itself.
type Answer struct {
	// NotApplicable: the target's releases or nodes cannot have the case (docs/certify.md "Not
	// applicable"): not run, never a failure.
	NotApplicable string
	// Missing: a feature of this machine the case needs on the target (HostNeeds) or that the
	// asker assumes (Ask's assumes).
	Missing *hostfeature.Missing
	// Unsupported: why the target cannot run the case.
	Unsupported string

	// Observation is what the target observed (what every pool observed, when Pools); Err is why
	// there is none: the target failed, or its pools disagree.
	Observation *Observation
	Err         error
	// Pools are what one node of each pool observed (a PoolRouter), in the order of its pools.
	Pools []PoolObservation
	// Took is how long observing took, when Timed: what the target measured when it observed
	// the case before it was asked (ObserveTimer), else measured here; unknown for any other
	// batching target, whose Observe hands out what it prepared.
	Took  time.Duration
	Timed bool
	// KnownDifference is the target's documented difference for the case (its Why "" when none).
	KnownDifference KnownDifference
}

// NotRun is why the target did not observe the case, "" when it did: the first of
// NotApplicable, Missing and Unsupported.
func (a Answer) NotRun() string {
	switch {
	case a.NotApplicable != "":
		return a.NotApplicable
	case a.Missing != nil:
		return a.Missing.Error()
	}
	return a.Unsupported
}

// Node names the nodes that observed the case (of every pool, "; "-separated), "" for a target
// that does not say.
func (a Answer) Node() string {
	var out []string
	for _, p := range a.Pools {
		out = append(out, p.Node)
	}
	return strings.Join(out, "; ")
}

// Router is a target that hands each case to another target (a matrix's cell): Ask asks that
// one, so a router answers no question of its own and cannot forget one.
type Router interface {
	// Route is the target that answers c, or nil and why no target of the router runs c.
	Route(c *Case) (Target, string)
}

// PoolRouter is a target that observes each case on one node of every pool of nodes (the
// cluster target over node pools: framework/cluster/spread.go): Ask asks each pool's target and
// decides what the pools observed together (Judge).
type PoolRouter interface {
	// RoutePools is the target of each pool that observes c, in the order of the pools.
	RoutePools(c *Case) []PoolRoute
}

// PoolNode names one pool of nodes and its node that observes a case.
type PoolNode struct {
	// Pool names the pool by what its nodes share: "kubelet v1.37.1, Debian GNU/Linux 12,
	// containerd://2.1.1"; Kubelet is its kubelet's release; Node is the pool's node that
	// observes the case.
	Pool, Kubelet, Node string
}

// PoolRoute is the target of one pool that observes a case.
type PoolRoute struct {
	PoolNode
	Target Target
}

// PoolObservation is what one pool of nodes observed of a case.
type PoolObservation struct {
	PoolNode
	Observation *Observation
	// Err is why the pool has no Observation.
	Err error
}

// PoolVerdict is one pool's Observation judged against what it should be (Judge).
type PoolVerdict struct {
	PoolObservation
	// Difference is the first difference from what it should be, "" when it is that (and Err
	// is nil).
	Difference string
}

// Passed says whether the pool observed what it should.
func (v PoolVerdict) Passed() bool { return v.Err == nil && v.Difference == "" }

// Ask is t's Answer of c: whether c is t's (NotApplicable, this machine's features, Supports),
// and when it is, t's Observation, timed, and t's known difference. assumes are the features of
// this machine the asker's expectation assumes (the suites': docs/spec.md
// [probes.protected-symlinks]); they are checked after the target's own. A Router is asked
// through its route, a PoolRouter through each pool's.
func Ask(ctx context.Context, t Target, c *Case, assumes ...hostfeature.Feature) Answer {
	return ask(ctx, t, c, assumes, true)
}

// Reasons is Ask without observing: why t would not observe c, "" (NotRun) when it would (for
// those that choose cases before preparing them: bench, the mutation self-test's record).
func Reasons(t Target, c *Case, assumes ...hostfeature.Feature) Answer {
	return ask(context.Background(), t, c, assumes, false)
}

func ask(ctx context.Context, t Target, c *Case, assumes []hostfeature.Feature, observe bool) Answer {
	if r, ok := t.(Router); ok {
		if why := NotInReleases(t, c); why != "" {
			return Answer{NotApplicable: why}
		}
		to, why := r.Route(c)
		if to == nil {
			return Answer{Unsupported: why}
		}
		return ask(ctx, to, c, assumes, observe)
	}
	if pr, ok := t.(PoolRouter); ok {
		return askPools(ctx, t, pr.RoutePools(c), c, assumes, observe)
	}
	var a Answer
	if a.NotApplicable = NotApplicable(t, c); a.NotApplicable != "" {
		return a
	}
	if a.Missing = hostfeature.First(append(hostNeeds(t, c), assumes...)); a.Missing != nil {
		return a
	}
	if ok, why := t.Supports(c); !ok {
		a.Unsupported = why
		return a
	}
	if kd, ok := t.(KnownDifferences); ok {
		a.KnownDifference, _ = kd.KnownDifference(c)
	}
	if !observe {
		return a
	}
	start := time.Now()
	a.Observation, a.Err = t.Observe(ctx, c)
	switch ot, timer := t.(ObserveTimer); {
	case timer:
		a.Took, a.Timed = ot.ObserveTime(c)
	case !isBatcher(t):
		a.Took, a.Timed = time.Since(start), true
	}
	return a
}

func hostNeeds(t Target, c *Case) []hostfeature.Feature {
	if hn, ok := t.(HostNeeds); ok {
		return hn.HostNeeds(c)
	}
	return nil
}

func isBatcher(t Target) bool {
	_, ok := t.(Batcher)
	return ok
}

// askPools is the Answer of a target over pools (as the cluster target over node pools has
// always answered): c is not applicable when it is no case of any pool's nodes (the first pool's
// words: a case of some pools' kind of node only is the cluster's, and the pools that cannot run
// it say so in Supports); it is not run when one pool cannot run it, that pool named; else every
// pool observes it, and the Observation is theirs when they agree (Judge). The known difference
// is the first pool's.
func askPools(ctx context.Context, t Target, routes []PoolRoute, c *Case, assumes []hostfeature.Feature, observe bool) Answer {
	if len(routes) == 0 {
		return Answer{Unsupported: fmt.Sprintf("target %s has no node pool", t.Info().Name)}
	}
	var a Answer
	if a.NotApplicable = NotInReleases(t, c); a.NotApplicable != "" {
		return a
	}
	notApplicable := make([]string, len(routes))
	for i, r := range routes {
		if na, ok := r.Target.(interface{ NotApplicable(*Case) string }); ok {
			notApplicable[i] = na.NotApplicable(c)
		}
	}
	if !slices.Contains(notApplicable, "") {
		a.NotApplicable = notApplicable[0]
		return a
	}
	var needs []hostfeature.Feature
	for _, r := range routes {
		needs = append(needs, hostNeeds(r.Target, c)...)
	}
	if a.Missing = hostfeature.First(append(needs, assumes...)); a.Missing != nil {
		return a
	}
	for i, r := range routes {
		ok, why := r.Target.Supports(c)
		if notApplicable[i] != "" {
			ok, why = false, notApplicable[i]
		}
		if !ok {
			if len(routes) > 1 {
				why = fmt.Sprintf("pool %d (%s): %s", i+1, r.Pool, why)
			}
			a.Unsupported = why
			return a
		}
	}
	if kd, ok := routes[0].Target.(KnownDifferences); ok {
		a.KnownDifference, _ = kd.KnownDifference(c)
	}
	if !observe {
		return a
	}
	a.Pools = ObservePools(ctx, routes, c)
	_, a.Observation, a.Err = Judge(a.Pools, nil)
	return a
}

// ObservePools is what each route's target observed of c, in the order of routes.
func ObservePools(ctx context.Context, routes []PoolRoute, c *Case) []PoolObservation {
	out := make([]PoolObservation, len(routes))
	for i, r := range routes {
		obs, err := r.Target.Observe(ctx, c)
		out[i] = PoolObservation{PoolNode: r.PoolNode, Observation: obs, Err: err}
	}
	return out
}

// Judge is each pool's verdict against want (nil: against the first pool's Observation), the
// Observation of them all when every pool observed it without error, and otherwise the error
// that fails the case: the pools that failed, or what each pool saw when they disagree. The
// one place where pools are judged (issue 35): Ask with no oracle, the suites with one.
func Judge(pools []PoolObservation, want *Observation) ([]PoolVerdict, *Observation, error) {
	pools = slices.Clone(pools)
	for i := range pools {
		if pools[i].Err == nil && pools[i].Observation == nil {
			pools[i].Err = errors.New("the target observed nothing and gave no error")
		}
	}
	verdicts := make([]PoolVerdict, len(pools))
	var errs, words []string
	same := true
	ref := want
	if ref == nil && len(pools) > 0 {
		ref = pools[0].Observation
	}
	for i, p := range pools {
		v := PoolVerdict{PoolObservation: p}
		switch {
		case p.Err != nil:
			errs = append(errs, fmt.Sprintf("node %s (pool %d): %v", p.Node, i+1, p.Err))
		case ref != nil:
			if d := Diff(ref, p.Observation); len(d) > 0 {
				v.Difference = d[0]
			}
		}
		if i > 0 && p.Err == nil && pools[0].Err == nil && len(Diff(pools[0].Observation, p.Observation)) > 0 {
			same = false
		}
		verdict := "as the oracle expects"
		if want == nil {
			verdict = "as pool 1 saw"
		}
		switch {
		case p.Err != nil:
			verdict = p.Err.Error()
		case v.Difference != "":
			verdict = v.Difference
		}
		words = append(words, fmt.Sprintf("pool %d (%s) on node %s: %s", i+1, p.Pool, p.Node, verdict))
		verdicts[i] = v
	}
	switch {
	case len(pools) == 0:
		return nil, nil, errors.New("no node pool observed the case")
	case len(errs) > 0:
		return verdicts, nil, errors.New(strings.Join(errs, "; "))
	case !same:
		return verdicts, nil, fmt.Errorf("node pools disagree: %s", strings.Join(words, " | "))
	}
	return verdicts, pools[0].Observation, nil
}
