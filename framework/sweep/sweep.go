// Package sweep removes what killed volperm runs left behind: every kind of resource volperm
// creates registers a Sweeper (case roots, containers, kind clusters), and every `volperm run`
// and `volperm cleanup` runs them all (docs/cleanup.md). A sweeper removes only what carries the
// mark of a run that is no longer alive (framework/owner), and says what it removed.
package sweep

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// Options are what every sweeper is given.
type Options struct {
	// WorkDir is where the targets made their temporary roots ("" = os.TempDir()).
	WorkDir string
	// DryRun lists what would be removed, and removes nothing.
	DryRun bool
}

// Sweeper finds what dead runs left of one kind of resource and, unless DryRun, removes it. It
// returns one line per item ("case root /tmp/volperm-ref-123 of pid 42 (2 mounts)").
type Sweeper func(ctx context.Context, o Options) (found []string, err error)

type entry struct {
	name string
	fn   Sweeper
}

var (
	mu       sync.Mutex
	sweepers []entry
)

// Register adds a sweeper, named for its resource ("case roots"); packages call it from init.
// Sweepers run in registration order.
func Register(name string, fn Sweeper) {
	mu.Lock()
	defer mu.Unlock()
	sweepers = append(sweepers, entry{name, fn})
}

// Found is one item a sweeper found.
type Found struct {
	Sweeper string
	Item    string
}

// All runs every sweeper; an error of one does not stop the others.
func All(ctx context.Context, o Options) ([]Found, error) {
	mu.Lock()
	list := append([]entry(nil), sweepers...)
	mu.Unlock()
	var found []Found
	var errs []error
	for _, s := range list {
		items, err := s.fn(ctx, o)
		for _, it := range items {
			found = append(found, Found{s.name, it})
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", s.name, err))
		}
	}
	return found, errors.Join(errs...)
}
