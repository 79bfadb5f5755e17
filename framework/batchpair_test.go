package framework

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// slowNode takes its case's delay to observe it, several cases at once.
type slowNode struct {
	mu    sync.Mutex
	delay map[string]time.Duration
}

func (s *slowNode) Info() TargetInfo                            { return TargetInfo{Name: "slow"} }
func (s *slowNode) SupportsNode(*Case, Admitted) (bool, string) { return true, "" }
func (s *slowNode) Concurrency() int                            { return 2 }
func (s *slowNode) Close() error                                { return nil }
func (s *slowNode) ObserveNode(_ context.Context, c *Case, _ Admitted) NodeResult {
	s.mu.Lock()
	d := s.delay[c.Name]
	s.mu.Unlock()
	time.Sleep(d)
	return NodeResult{Volumes: []VolumeObservation{{Name: "v", Type: "emptyDir", SetUp: SetUpOK}}}
}

// A batched pair times each case's own observation, in Prepare or in Observe, so that a timed
// case's report says how long the target took for it (ObserveTimer), not how long handing out
// the prepared Observation took.
func TestBatchPairObserveTime(t *testing.T) {
	node := &slowNode{delay: map[string]time.Duration{"slow": 60 * time.Millisecond, "fast": 0, "late": 30 * time.Millisecond}}
	target := NewTargetPair("slow", fakeAPI{allow: true}, node)
	timer, ok := target.(ObserveTimer)
	if !ok {
		t.Fatal("a pair with a concurrent node does not time its observations")
	}
	slow, fast, late := &Case{Name: "slow", Pod: podWithVolumes("v")}, &Case{Name: "fast", Pod: podWithVolumes("v")}, &Case{Name: "late", Pod: podWithVolumes("v")}
	ctx := context.Background()
	if err := target.(Batcher).Prepare(ctx, []*Case{slow, fast}); err != nil {
		t.Fatal(err)
	}
	if _, ok := timer.ObserveTime(slow); ok {
		t.Error("a time before Observe handed the case out")
	}
	for _, c := range []*Case{slow, fast, late} {
		if _, err := target.Observe(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	times := map[string]time.Duration{}
	for _, c := range []*Case{slow, fast, late} {
		d, ok := timer.ObserveTime(c)
		if !ok || d < node.delay[c.Name] {
			t.Errorf("%s: ObserveTime = %s, %v; want at least its %s", c.Name, d, ok, node.delay[c.Name])
		}
		times[c.Name] = d
	}
	if times["fast"] >= times["slow"] {
		t.Errorf("fast took %s, slow %s: each case must have its own time", times["fast"], times["slow"])
	}
}

// batchNode batches: it records each ObserveBatch and each ObserveNode.
type batchNode struct {
	fakeNode
	batches  [][]string
	single   []string
	failWith error
}

func (b *batchNode) Batching() bool { return true }
func (b *batchNode) ObserveNode(ctx context.Context, c *Case, a Admitted) NodeResult {
	b.single = append(b.single, c.Name)
	return b.fakeNode.ObserveNode(ctx, c, a)
}
func (b *batchNode) ObserveBatch(ctx context.Context, cases []NodeCase) []NodeResult {
	var names []string
	out := make([]NodeResult, len(cases))
	for i, nc := range cases {
		names = append(names, nc.Case.Name)
		out[i] = b.fakeNode.ObserveNode(ctx, nc.Case, nc.Admitted)
		if b.failWith != nil {
			out[i] = NodeResult{Err: b.failWith}
		}
	}
	b.batches = append(b.batches, names)
	return out
}

// A pair whose node batches admits each case once, hands the node in one batch only the cases
// that reach it, keeps the admission-only answers itself, and observes a case it did not prepare
// (or a case changed since) alone; every answer is the one the plain pair gives.
func TestBatchNodePair(t *testing.T) {
	admits, observed := 0, 0
	node := &batchNode{fakeNode: fakeNode{observed: &observed, support: true}}
	target := NewTargetPair("b", countingAPI{fakeAPI{allow: true}, &admits}, node)
	if _, ok := target.(Batcher); !ok {
		t.Fatal("a pair with a batching node is not a Batcher")
	}
	a := &Case{Name: "a", Pod: podWithVolumes("v")}
	b := &Case{Name: "b", Pod: podWithVolumes("v")}
	only := &Case{Name: "admission only", Pod: podWithVolumes("v"), AdmissionOnly: true}
	late := &Case{Name: "late", Pod: podWithVolumes("v")}
	ctx := context.Background()
	for _, c := range []*Case{a, b, only} { // as the suites do: HostNeeds and Supports first
		target.(HostNeeds).HostNeeds(c)
		target.Supports(c)
	}
	if err := target.(Batcher).Prepare(ctx, []*Case{a, b, only}); err != nil {
		t.Fatal(err)
	}
	if len(node.batches) != 1 || strings.Join(node.batches[0], ",") != "a,b" {
		t.Errorf("batches %q, want one of a and b", node.batches)
	}
	plainAdmits, plainObserved := 0, 0
	plain := NewPair("b", countingAPI{fakeAPI{allow: true}, &plainAdmits}, fakeNode{observed: &plainObserved, support: true})
	for _, c := range []*Case{a, b, only, late} {
		target.Supports(c)
		got, err := target.Observe(ctx, c)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		want, err := plain.Observe(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		if d := Diff(want, got); len(d) > 0 {
			t.Errorf("%s: batched differs from the plain pair: %q", c.Name, d)
		}
	}
	if admits != 4 {
		t.Errorf("%d admissions for 4 cases, want one each", admits)
	}
	if strings.Join(node.single, ",") != "late" {
		t.Errorf("observed alone: %q, want only the case not prepared", node.single)
	}
	changed := a.DeepCopy()
	changed.Probes = []Probe{{Name: "p", Volume: "v", Op: OpList, Path: "."}}
	if _, err := target.Observe(ctx, a); err != nil {
		t.Fatal(err)
	}
	if _, err := target.Observe(ctx, changed); err != nil {
		t.Fatal(err)
	}
	if len(node.single) != 3 {
		t.Errorf("a case handed out once, and one changed since Prepare, must be observed again: alone %q", node.single)
	}

	// The batch's failure is each case's error, not an observation.
	node.failWith = errors.New("engine gone")
	if err := target.(Batcher).Prepare(ctx, []*Case{a}); err != nil {
		t.Fatal(err)
	}
	if _, err := target.Observe(ctx, a); err == nil || err.Error() != "engine gone" {
		t.Errorf("Observe after a failed batch: %v, want the batch's error", err)
	}
}

// slowAPI admits after a round trip (the cluster half's dry-run), counting the admissions in
// flight at once.
type slowAPI struct {
	fakeAPI
	mu             sync.Mutex
	inFlight, most int
}

func (s *slowAPI) Admit(ctx context.Context, c *Case) (Admitted, error) {
	s.mu.Lock()
	s.inFlight++
	s.most = max(s.most, s.inFlight)
	s.mu.Unlock()
	time.Sleep(5 * time.Millisecond)
	s.mu.Lock()
	s.inFlight--
	s.mu.Unlock()
	return s.fakeAPI.Admit(ctx, c)
}

// A batch admits its cases admitWorkers at a time (issue 34: a real apiserver's answer is a
// round trip) and still hands the node the cases that reach it in their order, the others'
// answers kept.
func TestBatchAdmitsConcurrently(t *testing.T) {
	api := &slowAPI{fakeAPI: fakeAPI{allow: true}}
	observed := 0
	node := &batchNode{fakeNode: fakeNode{observed: &observed, support: true}}
	target := NewTargetPair("b", api, node)
	var cases []*Case
	var want []string
	for i := range 40 {
		c := &Case{Name: fmt.Sprintf("c%02d", i), Pod: podWithVolumes("v"), AdmissionOnly: i%5 == 0}
		cases = append(cases, c)
		if !c.AdmissionOnly {
			want = append(want, c.Name)
		}
	}
	if err := target.(Batcher).Prepare(context.Background(), cases); err != nil {
		t.Fatal(err)
	}
	if len(node.batches) != 1 || !slices.Equal(node.batches[0], want) {
		t.Errorf("batches %q, want one of %q in order", node.batches, want)
	}
	if api.most < 2 || api.most > admitWorkers {
		t.Errorf("at most %d admissions at once, want 2 to %d", api.most, admitWorkers)
	}
	for _, c := range cases {
		if _, err := target.Observe(context.Background(), c); err != nil {
			t.Errorf("%s: %v", c.Name, err)
		}
	}
	if len(node.single) != 0 {
		t.Errorf("observed alone after Prepare: %q, want none", node.single)
	}
}
