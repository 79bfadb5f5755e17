package cluster

import (
	"context"
	"sync"

	"github.com/volperm/volperm/framework"
)

// Batch runs many cases together and keeps each one's Result for its Observe: the
// framework.Batcher of a target that has ObserveBatch (cluster, kind). Pod start-up dominates a
// cluster's time, so the suites Prepare an area's cases in one batch.
type Batch struct {
	observe  func(ctx context.Context, cases []*framework.Case) []Result
	supports func(c *framework.Case) (bool, string)

	mu   sync.Mutex
	kept map[string]Result
}

// NewBatch wraps a target's ObserveBatch and Supports.
func NewBatch(observe func(context.Context, []*framework.Case) []Result, supports func(*framework.Case) (bool, string)) *Batch {
	return &Batch{observe: observe, supports: supports, kept: map[string]Result{}}
}

// Prepare observes every supported case of cases in one batch and keeps the results; it
// replaces what an earlier Prepare kept.
func (b *Batch) Prepare(ctx context.Context, cases []*framework.Case) error {
	var todo []*framework.Case
	for _, c := range cases {
		if ok, _ := b.supports(c); ok {
			todo = append(todo, c)
		}
	}
	res := b.observe(ctx, todo)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.kept = map[string]Result{}
	for i, c := range todo {
		b.kept[c.Name] = res[i]
	}
	return ctx.Err()
}

// Observe returns what Prepare kept for c, or runs c alone.
func (b *Batch) Observe(ctx context.Context, c *framework.Case) (*framework.Observation, error) {
	b.mu.Lock()
	r, ok := b.kept[c.Name]
	delete(b.kept, c.Name)
	b.mu.Unlock()
	if !ok {
		r = b.observe(ctx, []*framework.Case{c})[0]
	}
	return r.Observation, r.Err
}
