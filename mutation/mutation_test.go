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
	_, err := mutation.Run(context.Background(), nil, mutant.All, func() (framework.Target, error) { return nil, nil }, mutation.Exec{})
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
		{Mutant: mutant.Mutant{Name: "c", Family: "g", Bug: "x"}, Killers: []string{"c1", "c2", "c3"}},
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

// Spread keeps a short list whole, and takes k of a longer one in order, distinct, from its first
// to its last element, evenly spaced: a sample of killers covers every area they come from.
func TestSpread(t *testing.T) {
	xs := make([]int, 100)
	for i := range xs {
		xs[i] = i
	}
	if got := mutation.Spread(xs[:16], 16); len(got) != 16 || got[0] != 0 || got[15] != 15 {
		t.Errorf("Spread of 16 at most 16: %v; want all of them", got)
	}
	if got := mutation.Spread(xs[:3], 16); len(got) != 3 {
		t.Errorf("Spread of 3 at most 16: %v; want all 3", got)
	}
	if got := mutation.Spread(xs, 1); len(got) != 1 || got[0] != 0 {
		t.Errorf("Spread of 100 at most 1: %v; want [0]", got)
	}
	if got := mutation.Spread(xs, 0); len(got) != 0 {
		t.Errorf("Spread of 100 at most 0: %v; want none", got)
	}
	if got := mutation.Spread([]int(nil), 16); len(got) != 0 {
		t.Errorf("Spread of none: %v; want none", got)
	}
	got := mutation.Spread(xs, 16)
	if len(got) != 16 || got[0] != 0 || got[15] != 99 {
		t.Fatalf("Spread of 100 at most 16: %v; want 16 from 0 to 99", got)
	}
	for i := 1; i < len(got); i++ {
		if d := got[i] - got[i-1]; d < 6 || d > 7 {
			t.Errorf("Spread of 100 at most 16: %v; step %d at %d, want 6 or 7 (evenly spaced)", got, d, i)
		}
	}
	// Runs of one area: the first 90 killers are of area a, the last 10 of area b.
	areas := make([]string, 100)
	for i := range areas {
		areas[i] = "a"
		if i >= 90 {
			areas[i] = "b"
		}
	}
	b := 0
	for _, a := range mutation.Spread(areas, 16) {
		if a == "b" {
			b++
		}
	}
	if b == 0 {
		t.Errorf("Spread of 90 killers of area a then 10 of b at most 16 has none of b")
	}
}

// The exec mode comes from VOLPERM_MUTANTS_EXEC: sample when unset, an error naming the choices
// for anything else than the three.
func TestParseExecMode(t *testing.T) {
	for in, want := range map[string]mutation.ExecMode{"": mutation.ExecSample, "sample": mutation.ExecSample, "full": mutation.ExecFull, "off": mutation.ExecOff} {
		if got, err := mutation.ParseExecMode(in); err != nil || got != want {
			t.Errorf("ParseExecMode(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := mutation.ParseExecMode("all"); err == nil || !strings.Contains(err.Error(), "sample, full or off") {
		t.Errorf("ParseExecMode(all): %v; want an error naming sample, full or off", err)
	}
}

// Run refuses an exec pass without an agent target factory rather than skip it.
func TestRunExecNeedsAnAgent(t *testing.T) {
	_, err := mutation.Run(context.Background(), nil, nil, func() (framework.Target, error) { return nil, nil }, mutation.Exec{Mode: mutation.ExecSample})
	if err == nil || !strings.Contains(err.Error(), "target factory") {
		t.Fatalf("Run with exec mode sample and no factory: %v; want an error", err)
	}
}

// The exec verdicts: a mutant killed through exec, one the exec path lost, one whose seam the
// agent never reached (not required, not counted), one the harness runs itself, and a weak one
// (one in-process killer: one exec killer is enough). ExecRatio counts the mutants whose seam
// the agent reached; the report has the exec line and columns.
func TestExecVerdicts(t *testing.T) {
	r := &mutation.Result{ExecMode: mutation.ExecSample, ExecCases: 7, Outcomes: []mutation.Outcome{
		{Mutant: mutant.Mutant{Name: "a", Family: "f"}, Killers: []string{"c1", "c2", "c3"},
			Exec: &mutation.ExecOutcome{Ran: 3, Killers: []string{"c1", "c2", "c3"}, InAgent: true}},
		{Mutant: mutant.Mutant{Name: "b", Family: "f"}, Killers: []string{"c1", "c2", "c3"},
			Exec: &mutation.ExecOutcome{Ran: 3, Killers: []string{"c2"}, InAgent: true}},
		{Mutant: mutant.Mutant{Name: "c", Family: "f"}, Killers: []string{"c1", "c2", "c3"},
			Exec: &mutation.ExecOutcome{Ran: 3}},
		{Mutant: mutant.Mutant{Name: "d", Family: "g"}, Killers: []string{"c4", "c5", "c7"},
			Exec: &mutation.ExecOutcome{Ran: 3, InHarness: true}},
		{Mutant: mutant.Mutant{Name: "e", Family: "g"}, Killers: []string{"c6"},
			Exec: &mutation.ExecOutcome{Ran: 1, Killers: []string{"c6"}, InAgent: true}},
		{Mutant: mutant.Mutant{Name: "q", Family: "g", Equivalent: "proof"}, Exec: &mutation.ExecOutcome{}},
	}}
	if l := r.ExecLost(); len(l) != 1 || l[0].Mutant.Name != "b" {
		t.Errorf("exec lost %v; want b", l)
	}
	var away []mutant.Name
	for _, o := range r.NotInAgent() {
		away = append(away, o.Mutant.Name)
	}
	if len(away) != 2 || away[0] != "c" || away[1] != "d" {
		t.Errorf("not in the agent %v; want c, d", away)
	}
	if k, n := r.ExecRatio(); k != 3 || n != 3 {
		t.Errorf("exec ratio %d/%d; want 3/3", k, n)
	}
	md := r.Markdown()
	for _, want := range []string{
		"Exec (sample: at most 16 of its in-process killers): killed 3 of 3 mutants whose code the agent reached (100.0%); 2 killed in-process not reached in the agent: c, d; 7 cases through the unmutated agent, 0 failing there.",
		"| first killer | exec ran | exec killed by | exec verdict |",
		"| a | f | 0 | 3 | killed | c1 | 3 | 3 | killed |",
		"| b | f | 0 | 3 | killed | c1 | 3 | 1 | LOST |",
		"| c | f | 0 | 3 | killed | c1 | 3 | 0 | not in the agent |",
		"| d | g | 0 | 3 | killed | c4 | 3 | 0 | harness's code |",
		"| e | g | 0 | 1 | weak | c6 | 1 | 1 | killed |",
		"| q | g | 0 | 0 | equivalent: proof |  | 0 | 0 | equivalent |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains((&mutation.Result{}).Markdown(), "exec") {
		t.Errorf("a report without an exec pass mentions exec")
	}
}
