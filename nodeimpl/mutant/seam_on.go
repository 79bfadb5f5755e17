//go:build volperm_mutants

package mutant

import (
	"os"
	"sync"
	"sync/atomic"
)

// Built is true: this binary was built with -tags volperm_mutants (make mutants).
const Built = true

// EnvActive names the mutant an agent process runs (the exec target's reference agent).
const EnvActive = "VOLPERM_MUTANT"

var (
	active atomic.Pointer[Name]

	recMu    sync.Mutex
	recorder func(Name)
)

func init() {
	if n := os.Getenv(EnvActive); n != "" {
		Activate(Name(n))
	}
}

// On reports whether the mutant named is the one this process runs, and tells the recorder,
// if one is set, that the code behind the seam was reached.
func On(n Name) bool {
	recMu.Lock()
	r := recorder
	recMu.Unlock()
	if r != nil {
		r(n)
	}
	a := active.Load()
	return a != nil && *a == n
}

// Activate makes n the mutant this process runs ("" for none).
func Activate(n Name) {
	if n == "" {
		active.Store(nil)
		return
	}
	active.Store(&n)
}

// Record makes every On call report the seam it reached to fn (nil to stop).
func Record(fn func(Name)) {
	recMu.Lock()
	recorder = fn
	recMu.Unlock()
}
