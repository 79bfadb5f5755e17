package framework

import (
	"context"
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
func (s *slowNode) ObserveNode(_ context.Context, c *Case, _ Admitted) ([]VolumeObservation, []ProbeResult, error) {
	s.mu.Lock()
	d := s.delay[c.Name]
	s.mu.Unlock()
	time.Sleep(d)
	return []VolumeObservation{{Name: "v", Type: "emptyDir", SetUp: SetUpOK}}, nil, nil
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
