package cluster

import (
	"context"

	"github.com/volperm/volperm/framework"
)

// Batch runs many cases together and keeps each one's Result for its Observe (in a
// framework.Prepared): the framework.Batcher of kind --per-cell, whose clusters (one per
// kind-config, each a cluster Target: a pair with its own prepared results) are deleted before
// the specs that read their results run.
type Batch struct {
	observe  func(ctx context.Context, cases []*framework.Case) []Result
	supports func(c *framework.Case) (bool, string)
	prepared framework.Prepared
}

// NewBatch wraps a target's ObserveBatch and its check of a case.
func NewBatch(observe func(context.Context, []*framework.Case) []Result, supports func(*framework.Case) (bool, string)) *Batch {
	return &Batch{observe: observe, supports: supports}
}

// Supports says yes to a case Prepare kept (it kept only those it supported), and asks the
// target about any other.
func (b *Batch) Supports(c *framework.Case) (bool, string) {
	if _, ok := b.prepared.Peek(c); ok {
		return true, ""
	}
	return b.supports(c)
}

// Prepare observes every supported case of cases in one batch and keeps the results; it
// replaces what an earlier Prepare kept.
func (b *Batch) Prepare(ctx context.Context, cases []*framework.Case) error {
	b.prepared.Reset()
	var todo []*framework.Case
	for _, c := range cases {
		if ok, _ := b.supports(c); ok {
			todo = append(todo, c)
		}
	}
	for i, r := range b.observe(ctx, todo) {
		b.prepared.Keep(todo[i], framework.Kept{Observation: r.Observation, Err: r.Err})
	}
	return ctx.Err()
}

// Observe returns what Prepare kept for c, or runs c alone.
func (b *Batch) Observe(ctx context.Context, c *framework.Case) (*framework.Observation, error) {
	if k, ok := b.prepared.Take(c); ok {
		return k.Observation, k.Err
	}
	r := b.observe(ctx, []*framework.Case{c})[0]
	return r.Observation, r.Err
}
