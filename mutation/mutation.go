// Package mutation is volperm's mutation self-test (docs/mutants.md): it runs the catalogue
// against the reference node once per mutant of nodeimpl/mutant and says which cases tell each
// mutant from the spec. A mutant no case fails is certified: a bug the catalogue would let
// through. It needs a binary built with -tags volperm_mutants (make mutants).
//
// Data flow: catalogue -> oracle (expected, once) -> a recording run that learns which cases
// reach which seam -> per mutant, those cases on a fresh target -> framework.Diff -> Result.
// A case that never reaches a mutant's seam runs exactly the code of the reference node, so
// it cannot tell the mutant apart; running only the reaching cases loses no kill.
package mutation

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/oracle"
	"github.com/volperm/volperm/nodeimpl/mutant"
)

// MinKillers is how many cases must fail under every non-equivalent mutant: with one, a
// renamed or dropped case would let the bug through.
const MinKillers = 2

// NewTarget makes a fresh target for one run (the reference target in a work dir).
type NewTarget func() (framework.Target, error)

// Outcome is what the catalogue did to one mutant.
type Outcome struct {
	Mutant  mutant.Mutant
	Reached int      // cases whose run reached the mutant's seam
	Killers []string // cases that failed under the mutant, in catalogue order
}

// Killed reports whether at least one case failed under the mutant.
func (o Outcome) Killed() bool { return len(o.Killers) > 0 }

// Result is one whole self-test.
type Result struct {
	Cases    int           // cases run in the recording run
	Skipped  []string      // cases not run here, each with its reason
	Baseline []string      // cases the unmutated node already fails (each is a bug to fix first)
	Outcomes []Outcome     // per mutant, in mutant.All order
	Record   time.Duration // the recording run
	Mutants  time.Duration // every mutant's run
}

// Run runs cases against targets made by newTarget: once unmutated, recording which cases reach
// which seam, then once per mutant of mutants on the cases that reach it.
func Run(ctx context.Context, cases []*framework.Case, mutants []mutant.Mutant, newTarget NewTarget) (*Result, error) {
	if !mutant.Built {
		return nil, fmt.Errorf("this binary has no mutation seam: build it with -tags volperm_mutants (make mutants)")
	}
	res := &Result{}
	expected := make([]*framework.Observation, len(cases))
	for i, c := range cases {
		expected[i] = oracle.Expect(c)
	}

	// The recording run: one case at a time, so that every seam reached belongs to it.
	t, err := newTarget()
	if err != nil {
		return nil, err
	}
	reached := map[mutant.Name][]int{}
	var current int
	var mu sync.Mutex
	seen := map[mutant.Name]bool{}
	mutant.Record(func(n mutant.Name) {
		mu.Lock()
		defer mu.Unlock()
		if !seen[n] {
			seen[n] = true
			reached[n] = append(reached[n], current)
		}
	})
	start := time.Now()
	var runnable []int
	for i, c := range cases {
		if ctx.Err() != nil {
			break
		}
		if why, skip := notRunHere(t, c); skip {
			res.Skipped = append(res.Skipped, c.Name+": "+why)
			continue
		}
		mu.Lock()
		current, seen = i, map[mutant.Name]bool{}
		mu.Unlock()
		obs, err := t.Observe(ctx, c)
		if err != nil || len(framework.Diff(expected[i], obs)) > 0 {
			res.Baseline = append(res.Baseline, c.Name)
			continue
		}
		runnable = append(runnable, i)
	}
	mutant.Record(nil)
	res.Record = time.Since(start)
	res.Cases = len(runnable)
	if err := t.Close(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	good := map[int]bool{}
	for _, i := range runnable {
		good[i] = true
	}

	start = time.Now()
	defer mutant.Activate("")
	for _, m := range mutants {
		var sel []int
		for _, i := range reached[m.Name] {
			if good[i] {
				sel = append(sel, i)
			}
		}
		killers, err := runMutant(ctx, m.Name, cases, expected, sel, newTarget)
		if err != nil {
			return nil, fmt.Errorf("mutant %s: %w", m.Name, err)
		}
		res.Outcomes = append(res.Outcomes, Outcome{Mutant: m, Reached: len(sel), Killers: killers})
	}
	res.Mutants = time.Since(start)
	return res, nil
}

// notRunHere says why c cannot run on t on this machine (a host feature it lacks, or a case
// the target does not support).
func notRunHere(t framework.Target, c *framework.Case) (string, bool) {
	if m := framework.MissingHostFeature(t, c); m != nil {
		return m.Error(), true
	}
	if ok, why := t.Supports(c); !ok {
		return why, true
	}
	return "", false
}

// runMutant runs the cases sel with mutant n active and returns the names of those that fail.
func runMutant(ctx context.Context, n mutant.Name, cases []*framework.Case, expected []*framework.Observation, sel []int, newTarget NewTarget) ([]string, error) {
	if len(sel) == 0 {
		return nil, nil
	}
	mutant.Activate(n)
	defer mutant.Activate("")
	t, err := newTarget()
	if err != nil {
		return nil, err
	}
	defer t.Close()
	if b, ok := t.(framework.Batcher); ok {
		batch := make([]*framework.Case, len(sel))
		for j, i := range sel {
			batch[j] = cases[i]
		}
		if err := b.Prepare(ctx, batch); err != nil {
			return nil, err
		}
	}
	var killers []string
	for _, i := range sel {
		obs, err := t.Observe(ctx, cases[i])
		if err != nil || len(framework.Diff(expected[i], obs)) > 0 {
			killers = append(killers, cases[i].Name)
		}
	}
	return killers, ctx.Err()
}

// Survivors are the non-equivalent mutants no case killed.
func (r *Result) Survivors() []Outcome {
	var out []Outcome
	for _, o := range r.Outcomes {
		if o.Mutant.Equivalent == "" && !o.Killed() {
			out = append(out, o)
		}
	}
	return out
}

// Weak are the killed mutants fewer than MinKillers cases catch.
func (r *Result) Weak() []Outcome {
	var out []Outcome
	for _, o := range r.Outcomes {
		if o.Mutant.Equivalent == "" && o.Killed() && len(o.Killers) < MinKillers {
			out = append(out, o)
		}
	}
	return out
}

// Ratio is killed over non-equivalent mutants.
func (r *Result) Ratio() (killed, total int) {
	for _, o := range r.Outcomes {
		if o.Mutant.Equivalent != "" {
			continue
		}
		total++
		if o.Killed() {
			killed++
		}
	}
	return killed, total
}

// Markdown is the report: the ratio, then one row per mutant with its family, how many cases
// reached it, how many killed it and the first killer.
func (r *Result) Markdown() string {
	var b strings.Builder
	killed, total := r.Ratio()
	fmt.Fprintf(&b, "# Mutation self-test\n\n")
	fmt.Fprintf(&b, "Killed %d of %d mutants (%.1f%%); %d equivalent; %d cases run, %d not run here, %d failing unmutated. Recording run %s, mutant runs %s.\n\n",
		killed, total, 100*float64(killed)/float64(max(total, 1)), len(r.Outcomes)-total, r.Cases, len(r.Skipped), len(r.Baseline),
		r.Record.Round(time.Millisecond), r.Mutants.Round(time.Millisecond))
	fam := map[mutant.Family][2]int{}
	var fams []string
	for _, o := range r.Outcomes {
		f := fam[o.Mutant.Family]
		if f == [2]int{} {
			fams = append(fams, string(o.Mutant.Family))
		}
		f[1]++
		if o.Killed() || o.Mutant.Equivalent != "" {
			f[0]++
		}
		fam[o.Mutant.Family] = f
	}
	sort.Strings(fams)
	b.WriteString("| family | killed |\n|---|---|\n")
	for _, f := range fams {
		fmt.Fprintf(&b, "| %s | %d/%d |\n", f, fam[mutant.Family(f)][0], fam[mutant.Family(f)][1])
	}
	b.WriteString("\n| mutant | family | reached | killed by | verdict | first killer |\n|---|---|---|---|---|---|\n")
	for _, o := range r.Outcomes {
		verdict := "killed"
		switch {
		case o.Mutant.Equivalent != "":
			verdict = "equivalent: " + o.Mutant.Equivalent
		case !o.Killed():
			verdict = "SURVIVED"
		case len(o.Killers) < MinKillers:
			verdict = "weak"
		}
		first := ""
		if o.Killed() {
			first = o.Killers[0]
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %s | %s |\n", o.Mutant.Name, o.Mutant.Family, o.Reached, len(o.Killers), verdict, first)
	}
	return b.String()
}
