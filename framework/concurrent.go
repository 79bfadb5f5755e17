package framework

import (
	"context"
	"encoding/json"
	"sync"
	"time"
)

// ConcurrentNode is implemented by a kubelet half whose ObserveNode may run for several cases at
// once (each case under its own root, nothing shared): a pair with such a node observes an
// area's cases in parallel in Prepare (framework.Batcher), Concurrency at a time.
type ConcurrentNode interface {
	Node
	Concurrency() int
}

// batchPair is a Pair whose node is a ConcurrentNode. Prepare observes the cases in parallel;
// Observe hands each prepared Observation out once, and observes any other case itself. What a
// case observes does not depend on which way it ran (TestConcurrentPairSameObservations).
type batchPair struct {
	*Pair
	workers int

	mu       sync.Mutex
	prepared map[string]preparedCase
	// took is how long each case's last observation took, by case name (ObserveTime).
	took map[string]time.Duration
}

type preparedCase struct {
	obs  *Observation
	err  error
	took time.Duration
}

// ObserveTimer is implemented by a target that observes cases before their specs run
// (framework.Batcher): how long the observation of c took (set-up, steps, snapshot, probes,
// teardown), since the spec's own run time does not include it. The reports name it for the
// cases labelled "timed" (framework/report LabelTimed).
type ObserveTimer interface {
	ObserveTime(c *Case) (time.Duration, bool)
}

// NewTargetPair names a target made of api and node, as NewPair does, batched when node is a
// ConcurrentNode.
func NewTargetPair(name string, api APIServer, node Node) Target {
	p := NewPair(name, api, node)
	if cn, ok := node.(ConcurrentNode); ok && cn.Concurrency() > 1 {
		return &batchPair{Pair: p, workers: cn.Concurrency(), prepared: map[string]preparedCase{}, took: map[string]time.Duration{}}
	}
	return p
}

// preparedKey is a case's name and content: a case changed since Prepare is observed again.
func preparedKey(c *Case) string {
	b, _ := json.Marshal(c)
	return c.Name + "\x00" + string(b)
}

// Prepare observes the cases this machine and the target can run, workers at a time (Batcher).
func (b *batchPair) Prepare(ctx context.Context, cases []*Case) error {
	jobs := make(chan *Case)
	var wg sync.WaitGroup
	for range b.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range jobs {
				start := time.Now()
				obs, err := b.Pair.Observe(ctx, c)
				took := time.Since(start)
				b.mu.Lock()
				b.prepared[preparedKey(c)] = preparedCase{obs, err, took}
				b.mu.Unlock()
			}
		}()
	}
	for _, c := range cases {
		if ctx.Err() != nil {
			break
		}
		// Supports also says no when this machine lacks a feature the node needs.
		if ok, _ := b.Pair.Supports(c); !ok {
			continue
		}
		jobs <- c
	}
	close(jobs)
	wg.Wait()
	return ctx.Err()
}

// Observe returns what Prepare observed for c, once, or observes c now.
func (b *batchPair) Observe(ctx context.Context, c *Case) (*Observation, error) {
	k := preparedKey(c)
	b.mu.Lock()
	p, ok := b.prepared[k]
	delete(b.prepared, k)
	if ok {
		b.took[c.Name] = p.took
	}
	b.mu.Unlock()
	if ok {
		return p.obs, p.err
	}
	start := time.Now()
	obs, err := b.Pair.Observe(ctx, c)
	b.mu.Lock()
	b.took[c.Name] = time.Since(start)
	b.mu.Unlock()
	return obs, err
}

// ObserveTime is how long the observation Observe last returned for c took (ObserveTimer).
func (b *batchPair) ObserveTime(c *Case) (time.Duration, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	d, ok := b.took[c.Name]
	return d, ok
}

var (
	_ Batcher      = (*batchPair)(nil)
	_ ObserveTimer = (*batchPair)(nil)
)
