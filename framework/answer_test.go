package framework

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/volperm/volperm/hostfeature"
)

// askTarget answers each question as its fields say, and counts its observations.
type askTarget struct {
	na, unsupported, known string
	needs                  []hostfeature.Feature
	obs                    *Observation
	err                    error
	observed               int
}

func (t *askTarget) Info() TargetInfo                      { return TargetInfo{Name: "ask"} }
func (t *askTarget) Supports(*Case) (bool, string)         { return t.unsupported == "", t.unsupported }
func (t *askTarget) Close() error                          { return nil }
func (t *askTarget) NotApplicable(*Case) string            { return t.na }
func (t *askTarget) HostNeeds(*Case) []hostfeature.Feature { return t.needs }
func (t *askTarget) KnownDifference(*Case) (KnownDifference, bool) {
	return KnownDifference{Why: t.known}, t.known != ""
}
func (t *askTarget) Observe(context.Context, *Case) (*Observation, error) {
	t.observed++
	return t.obs, t.err
}

// timedTarget is a batching askTarget that says how long each observation took.
type timedTarget struct{ askTarget }

func (*timedTarget) Prepare(context.Context, []*Case) error  { return nil }
func (*timedTarget) ObserveTime(*Case) (time.Duration, bool) { return 7 * time.Second, true }

// batchTarget is a batching askTarget that does not.
type batchTarget struct{ askTarget }

func (*batchTarget) Prepare(context.Context, []*Case) error { return nil }

// router routes every case to to (nil: nowhere).
type router struct {
	askTarget
	to Target
}

func (r *router) Route(*Case) (Target, string) { return r.to, "no cell for it" }

// pools routes every case to one target per pool.
type pools struct {
	askTarget
	to []Target
}

func (p *pools) RoutePools(*Case) []PoolRoute {
	var out []PoolRoute
	for i, t := range p.to {
		n := string(rune('a' + i))
		out = append(out, PoolRoute{PoolNode: PoolNode{Pool: "pool " + n, Kubelet: "v1.37.1", Node: n + "1"}, Target: t})
	}
	return out
}

func obsAllowed(allowed bool) *Observation {
	return &Observation{APIVersion: ObservationVersion, Case: "c", Admission: Admission{Allowed: allowed}}
}

// TestAsk: the Answer of a case says the first reason the target did not observe it
// (not applicable, then a missing feature of this machine, the target's before the asker's,
// then not supported) and observes nothing then; otherwise the Observation, timed where it is
// known, with the known difference.
func TestAsk(t *testing.T) {
	c := &Case{Name: "c", Pod: podWithVolumes("v")}
	lacking := hostfeature.Feature("hugepages-3Mi") // no machine has 3 MiB pages
	for _, tt := range []struct {
		name   string
		target *askTarget
		assume []hostfeature.Feature
		want   func(Answer) string // "" when the answer is right
	}{
		{"not applicable before anything", &askTarget{na: "not a case of it", unsupported: "no", needs: []hostfeature.Feature{lacking}},
			nil, func(a Answer) string {
				return check(a.NotRun() == "not a case of it" && a.Missing == nil, "NotRun %q", a.NotRun())
			}},
		{"a missing feature before unsupported", &askTarget{unsupported: "no", needs: []hostfeature.Feature{lacking}},
			nil, func(a Answer) string {
				return check(a.Missing != nil && a.Missing.Feature == lacking && a.Unsupported == "", "Missing %v, Unsupported %q", a.Missing, a.Unsupported)
			}},
		{"what the asker assumes", &askTarget{}, []hostfeature.Feature{lacking},
			func(a Answer) string {
				return check(a.Missing != nil && a.Missing.Feature == lacking, "Missing %v", a.Missing)
			}},
		{"the target's needs before what the asker assumes", &askTarget{needs: []hostfeature.Feature{lacking}}, []hostfeature.Feature{"hugepages-5Mi"},
			func(a Answer) string {
				return check(a.Missing != nil && a.Missing.Feature == lacking, "Missing %v, want the target's", a.Missing)
			}},
		{"unsupported", &askTarget{unsupported: "needs root"},
			nil, func(a Answer) string { return check(a.NotRun() == "needs root", "NotRun %q", a.NotRun()) }},
		{"observed, with its known difference, timed here", &askTarget{obs: obsAllowed(true), known: "upstream differs"},
			nil, func(a Answer) string {
				return check(a.NotRun() == "" && a.Observation != nil && a.KnownDifference.Why == "upstream differs" && a.Timed && a.Err == nil,
					"%+v", a)
			}},
		{"the target's error", &askTarget{err: errors.New("agent crashed")},
			nil, func(a Answer) string { return check(a.Err != nil && a.Observation == nil, "%+v", a) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := Ask(context.Background(), tt.target, c, tt.assume...)
			if msg := tt.want(a); msg != "" {
				t.Error(msg)
			}
			if a.NotRun() != "" && tt.target.observed != 0 {
				t.Errorf("observed a case it did not run (%s)", a.NotRun())
			}
			if a.NotRun() == "" && tt.target.observed != 1 {
				t.Errorf("observed %d times, want once", tt.target.observed)
			}
			if r := Reasons(tt.target, c, tt.assume...); r.NotRun() != a.NotRun() || tt.target.observed > 1 {
				t.Errorf("Reasons %q, Ask %q (Reasons observed: %v)", r.NotRun(), a.NotRun(), tt.target.observed > 1)
			}
		})
	}

	timed := &timedTarget{askTarget{obs: obsAllowed(true)}}
	if a := Ask(context.Background(), timed, c); !a.Timed || a.Took != 7*time.Second {
		t.Errorf("a target that times its observations: took %v (%v), want its 7s", a.Took, a.Timed)
	}
	batched := &batchTarget{askTarget{obs: obsAllowed(true)}}
	if a := Ask(context.Background(), batched, c); a.Timed {
		t.Errorf("a batching target that does not say how long: timed %v", a.Took)
	}
}

// TestAskRoutes: a Router's case is asked of its route, and of none, not supported with the
// router's reason; a PoolRouter's of every pool, judged together.
func TestAskRoutes(t *testing.T) {
	c := &Case{Name: "c", Pod: podWithVolumes("v")}
	cell := &askTarget{na: "not on this cell"}
	if a := Ask(context.Background(), &router{askTarget: askTarget{na: "the router's own"}, to: cell}, c); a.NotApplicable != "not on this cell" {
		t.Errorf("routed: %q, want the cell's answer", a.NotRun())
	}
	if a := Ask(context.Background(), &router{}, c); a.Unsupported != "no cell for it" {
		t.Errorf("routed nowhere: %q, want the router's reason", a.NotRun())
	}
	// A router of releases: a case its releases cannot have is not applicable before routing.
	gated := &Case{Name: "gated", Pod: podWithVolumes("v"), Gates: Gates{Kubelet: map[string]bool{GateEmptyDirVolumeMode: true}}}
	routed := &askTarget{obs: obsAllowed(true)}
	if a := Ask(context.Background(), &releasedRouter{router{to: routed}}, gated); !strings.HasPrefix(a.NotApplicable, "not a case of kube-apiserver") || routed.observed != 0 {
		t.Errorf("a case the router's releases cannot have: %q (observed %d)", a.NotRun(), routed.observed)
	}

	same := &pools{to: []Target{&askTarget{obs: obsAllowed(true), known: "first's"}, &askTarget{obs: obsAllowed(true), known: "second's"}}}
	a := Ask(context.Background(), same, c)
	if a.Err != nil || a.Observation == nil || len(a.Pools) != 2 || a.Node() != "a1; b1" || a.KnownDifference.Why != "first's" {
		t.Errorf("pools that agree: %+v", a)
	}
	differ := &pools{to: []Target{&askTarget{obs: obsAllowed(true)}, &askTarget{obs: obsAllowed(false)}}}
	if a := Ask(context.Background(), differ, c); a.Err == nil || !strings.Contains(a.Err.Error(), "node pools disagree: pool 1 (pool a) on node a1: as pool 1 saw | pool 2 (pool b) on node b1: admission.allowed") {
		t.Errorf("pools that disagree: %v", a.Err)
	}
	oneNA := &pools{to: []Target{&askTarget{obs: obsAllowed(true)}, &askTarget{na: "no user namespaces"}}}
	if a := Ask(context.Background(), oneNA, c); a.NotApplicable != "" {
		t.Errorf("a case of one pool's nodes is the cluster's: not applicable %q", a.NotApplicable)
	}
	firstNA := &pools{to: []Target{&askTarget{na: "no user namespaces"}, &askTarget{obs: obsAllowed(true)}}}
	if a := Ask(context.Background(), firstNA, c); a.NotApplicable != "" || a.Unsupported != "pool 1 (pool a): no user namespaces" {
		t.Errorf("a case of the second pool's nodes only: not applicable %q, unsupported %q, want pool 1 named", a.NotApplicable, a.Unsupported)
	}
	allNA := &pools{to: []Target{&askTarget{na: "first pool's words"}, &askTarget{na: "second's"}}}
	if a := Ask(context.Background(), allNA, c); a.NotApplicable != "first pool's words" {
		t.Errorf("a case of no pool's nodes: %q, want the first pool's words", a.NotApplicable)
	}
	oneCannot := &pools{to: []Target{&askTarget{obs: obsAllowed(true)}, &askTarget{unsupported: "needs root"}}}
	if a := Ask(context.Background(), oneCannot, c); a.Unsupported != "pool 2 (pool b): needs root" {
		t.Errorf("a pool that cannot run it: %q, want that pool named", a.Unsupported)
	}
}

// TestAnswerNotRun: the first reason of an Answer is what NotRun says: not applicable, then a
// missing feature, then unsupported.
func TestAnswerNotRun(t *testing.T) {
	a := Answer{NotApplicable: "na", Missing: &hostfeature.Missing{Feature: "hugepages-3Mi"}, Unsupported: "no"}
	if a.NotRun() != "na" {
		t.Errorf("all three: %q", a.NotRun())
	}
	a.NotApplicable = ""
	if a.NotRun() != a.Missing.Error() {
		t.Errorf("missing and unsupported: %q", a.NotRun())
	}
	a.Missing = nil
	if a.NotRun() != "no" {
		t.Errorf("unsupported: %q", a.NotRun())
	}
}

// releasedRouter is a router whose own releases are a skewed cell.
type releasedRouter struct{ router }

func (*releasedRouter) Releases() Releases { return Releases{APIServer: "v1.37", Kubelet: "v1.34"} }

// TestJudge: against the oracle, each pool's first difference; the Observation only when
// every pool saw it; a pool's error names its node.
func TestJudge(t *testing.T) {
	want := obsAllowed(true)
	pools := []PoolObservation{
		{PoolNode: PoolNode{Pool: "A", Node: "a1"}, Observation: obsAllowed(true)},
		{PoolNode: PoolNode{Pool: "B", Node: "b1"}, Observation: obsAllowed(false)},
	}
	v, obs, err := Judge(pools, want)
	if !v[0].Passed() || v[1].Passed() || v[1].Difference == "" || obs != nil || err == nil || !strings.Contains(err.Error(), "pool 1 (A) on node a1: as the oracle expects") {
		t.Errorf("disagreeing pools: %+v %v %v", v, obs, err)
	}
	pools[1] = PoolObservation{PoolNode: PoolNode{Pool: "B", Node: "b1"}, Err: errors.New("pod never started")}
	if _, obs, err := Judge(pools, want); obs != nil || err == nil || err.Error() != "node b1 (pool 2): pod never started" {
		t.Errorf("a pool's error: %v %v", obs, err)
	}
	pools[1] = PoolObservation{PoolNode: PoolNode{Pool: "B", Node: "b1"}}
	if v, obs, err := Judge(pools, want); obs != nil || v[1].Passed() || err == nil || err.Error() != "node b1 (pool 2): the target observed nothing and gave no error" {
		t.Errorf("a pool that observed nothing and gave no error: %+v %v %v", v, obs, err)
	}
	pools[1] = PoolObservation{PoolNode: PoolNode{Pool: "B", Node: "b1"}, Observation: obsAllowed(false)}
	pools[0].Observation = obsAllowed(false)
	v, obs, err = Judge(pools, want)
	if err != nil || obs == nil || v[0].Passed() || v[1].Passed() {
		t.Errorf("pools that agree on a difference: one Observation, each pool failed: %+v %v %v", v, obs, err)
	}
}

func check(ok bool, format string, args ...any) string {
	if ok {
		return ""
	}
	return "wrong answer: " + strings.TrimSpace(fmt.Sprintf(format, args...))
}
