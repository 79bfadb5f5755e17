package mutation_test

import (
	"context"
	"strings"
	"testing"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/mutation"
	"github.com/volperm/volperm/nodeimpl/mutant"
)

// A binary without the seam refuses to judge mutants, with what to do, rather than report every
// mutant as certified.
func TestRunNeedsTheSeam(t *testing.T) {
	if mutant.Built {
		t.Skip("built with -tags volperm_mutants")
	}
	_, err := mutation.Run(context.Background(), nil, mutant.All, func() (framework.Target, error) { return nil, nil })
	if err == nil || !strings.Contains(err.Error(), "-tags volperm_mutants") {
		t.Fatalf("Run without the seam: %v; want an error naming -tags volperm_mutants", err)
	}
}

// The verdicts: a survivor, a weak kill and an equivalent mutant are each told apart, and the
// ratio counts non-equivalent mutants only.
func TestVerdicts(t *testing.T) {
	r := &mutation.Result{Outcomes: []mutation.Outcome{
		{Mutant: mutant.Mutant{Name: "a", Family: "f", Bug: "x"}},
		{Mutant: mutant.Mutant{Name: "b", Family: "f", Bug: "x"}, Killers: []string{"c1"}},
		{Mutant: mutant.Mutant{Name: "c", Family: "g", Bug: "x"}, Killers: []string{"c1", "c2"}},
		{Mutant: mutant.Mutant{Name: "d", Family: "g", Bug: "x", Equivalent: "proof"}},
	}}
	if s := r.Survivors(); len(s) != 1 || s[0].Mutant.Name != "a" {
		t.Errorf("survivors %v; want a", s)
	}
	if w := r.Weak(); len(w) != 1 || w[0].Mutant.Name != "b" {
		t.Errorf("weak %v; want b", w)
	}
	if k, n := r.Ratio(); k != 2 || n != 3 {
		t.Errorf("ratio %d/%d; want 2/3", k, n)
	}
	md := r.Markdown()
	for _, want := range []string{"Killed 2 of 3 mutants", "| a | f | 0 | 0 | SURVIVED |", "| b | f | 0 | 1 | weak | c1 |", "equivalent: proof"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}
