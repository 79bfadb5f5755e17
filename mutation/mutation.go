// Package mutation is volperm's mutation self-test (docs/mutants.md): it runs the catalogue
// against the reference node once per mutant of nodeimpl/mutant and says which cases tell each
// mutant from the spec. A mutant no case fails is certified: a bug the catalogue would let
// through. It needs a binary built with -tags volperm_mutants (make mutants).
//
// Data flow: catalogue -> oracle (expected, once) -> a recording run that learns which cases
// reach which seam -> per mutant, those cases on a fresh target -> framework.Diff -> Result.
// A case that never reaches a mutant's seam runs exactly the code of the reference node, so
// it cannot tell the mutant apart; running only the reaching cases loses no kill.
//
// An optional second pass (Exec) runs each mutant again in an agent process behind the exec
// target, on the cases the recording run selected (all of them, or a spread sample of those that
// killed the mutant in-process), against the same expected Observations: the catalogue must
// reject a mutated agent through the exec protocol as it rejects the mutated node in-process.
package mutation

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/oracle"
	"github.com/volperm/volperm/nodeimpl/mutant"
	"github.com/volperm/volperm/suites"
)

// MinKillers is how many cases must fail under every non-equivalent mutant: with one, a
// renamed or dropped case would let the bug through.
const MinKillers = 3

// NewTarget makes a fresh target for one run (the reference target in a work dir).
type NewTarget func() (framework.Target, error)

// ExecMode says which cases the exec pass runs for each mutant.
type ExecMode string

const (
	// ExecOff runs no exec pass.
	ExecOff ExecMode = "off"
	// ExecSample runs at most SampleKillers of the cases that killed the mutant in-process,
	// spread across them (Spread): what CI runs on every commit.
	ExecSample ExecMode = "sample"
	// ExecFull runs every case that reached the mutant's seam in the recording run, as the
	// in-process pass does.
	ExecFull ExecMode = "full"
)

// SampleKillers caps how many of a mutant's in-process killers ExecSample runs through exec.
const SampleKillers = 16

// ParseExecMode reads the value of VOLPERM_MUTANTS_EXEC ("" is ExecSample).
func ParseExecMode(s string) (ExecMode, error) {
	switch m := ExecMode(s); m {
	case "":
		return ExecSample, nil
	case ExecOff, ExecSample, ExecFull:
		return m, nil
	}
	return "", fmt.Errorf("exec mode %q: write %s, %s or %s", s, ExecSample, ExecFull, ExecOff)
}

// AgentTarget is a target whose agent processes run one mutant, and can tell afterwards which
// seams they reached (mutation/seamfile).
type AgentTarget interface {
	framework.Target
	// Reached lists the seams the target's agent processes reached; called after Close.
	Reached() ([]mutant.Name, error)
}

// NewAgentTarget makes a fresh target whose agent processes run mutant n; n "" is the
// unmutated agent (the exec baseline).
type NewAgentTarget func(n mutant.Name) (AgentTarget, error)

// Exec configures Run's second pass through agent processes. The zero Exec runs none.
type Exec struct {
	Mode      ExecMode       // which cases per mutant; "" is ExecOff
	NewTarget NewAgentTarget // the targets the mutated agents run behind
}

// on reports whether the exec pass runs.
func (e Exec) on() bool { return e.Mode != "" && e.Mode != ExecOff }

// Outcome is what the catalogue did to one mutant.
type Outcome struct {
	Mutant  mutant.Mutant
	Reached int          // cases whose run reached the mutant's seam
	Killers []string     // cases that failed under the mutant, in catalogue order
	Exec    *ExecOutcome // the exec pass's, nil when none ran
}

// ExecOutcome is what the exec pass did to one mutant.
type ExecOutcome struct {
	Ran     int      // cases run through exec with the mutated agent
	Killers []string // of those, the cases that failed, in catalogue order
	// InAgent: the agent processes reached the mutant's seam on those cases. A mutant they
	// never reach cannot be killed through exec, whatever the catalogue: its code is not the
	// agent's behind this target, or the exec path never leads to it (Result.NotInAgent).
	InAgent bool
	// InHarness: the harness's own process reached the seam during the exec pass, where no
	// mutant is active: on the exec target the harness runs that code itself (the flexVolume
	// fixture driver's mount, populateFixtures in framework/targets/exec/exec.go).
	InHarness bool
}

// Killed reports whether at least one case failed under the mutant.
func (o Outcome) Killed() bool { return len(o.Killers) > 0 }

// execRequired reports whether the exec pass must kill o: a non-equivalent mutant killed
// in-process whose seam the agent reached.
func (o Outcome) execRequired() bool {
	return o.Exec != nil && o.Mutant.Equivalent == "" && o.Exec.InAgent && o.Killed()
}

// Result is one whole self-test.
type Result struct {
	Cases    int           // cases run in the recording run
	Skipped  []string      // cases not run here, each with its reason
	Baseline []string      // cases the unmutated node already fails (each is a bug to fix first)
	Outcomes []Outcome     // per mutant, in mutant.All order
	Record   time.Duration // the recording run
	Mutants  time.Duration // every mutant's run

	ExecMode     ExecMode      // the exec pass's mode; "" or ExecOff when none ran
	ExecCases    int           // cases the unmutated agent ran (every case some mutant runs through exec)
	ExecBaseline []string      // of those, the cases the unmutated agent already fails
	ExecTime     time.Duration // the whole exec pass, its baseline included
	// AdmissionShortcut counts the case runs of mutants whose seam is in the apiserver's code
	// that were not run in full: their admission came out as unmutated (admissions.changedBy).
	AdmissionShortcut int
}

// Run runs cases against targets made by newTarget: once unmutated, recording which cases reach
// which seam, then once per mutant of mutants on the cases that reach it; then, when exec is on,
// once per mutant through exec.NewTarget (runExec).
func Run(ctx context.Context, cases []*framework.Case, mutants []mutant.Mutant, newTarget NewTarget, exec Exec) (*Result, error) {
	if exec.on() && exec.NewTarget == nil {
		return nil, fmt.Errorf("exec mode %s needs a target factory for the agent", exec.Mode)
	}
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
	// inAdmission are the seams whose mutant.On call is in the apiserver's code.
	inAdmission := map[mutant.Name]bool{}
	mutant.Record(func(n mutant.Name) {
		mu.Lock()
		defer mu.Unlock()
		if !seen[n] {
			seen[n] = true
			reached[n] = append(reached[n], current)
			if _, file, _, ok := runtime.Caller(2); ok && strings.Contains(file, admissionCode) {
				inAdmission[n] = true
			}
		}
	})
	start := time.Now()
	var runnable []int
	for i, c := range cases {
		if ctx.Err() != nil {
			break
		}
		// current is set before notRunHere: a Pair admits a case once, in its HostNeeds, so
		// the admission's seams are reached there and belong to this case.
		mu.Lock()
		current, seen = i, map[mutant.Name]bool{}
		mu.Unlock()
		if why, skip := notRunHere(t, c); skip {
			res.Skipped = append(res.Skipped, c.Name+": "+why)
			continue
		}
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

	// Per mutant, the cases that reach its seam; the exec pass picks from these and from
	// the in-process killers.
	sels := make([][]int, len(mutants))
	kills := make([][]int, len(mutants))
	admitted := admissions{cases: cases, api: apiServerOf(t), of: map[int]framework.Admitted{}}
	start = time.Now()
	for j, m := range mutants {
		for _, i := range reached[m.Name] {
			if good[i] {
				sels[j] = append(sels[j], i)
			}
		}
		run := sels[j]
		if inAdmission[m.Name] {
			if run, err = admitted.changedBy(ctx, m.Name, run); err != nil {
				return nil, fmt.Errorf("mutant %s: %w", m.Name, err)
			}
			res.AdmissionShortcut += len(sels[j]) - len(run)
		}
		killers, err := runMutant(ctx, m.Name, cases, expected, run, newTarget)
		if err != nil {
			return nil, fmt.Errorf("mutant %s: %w", m.Name, err)
		}
		kills[j] = killers
		res.Outcomes = append(res.Outcomes, Outcome{Mutant: m, Reached: len(sels[j]), Killers: names(cases, killers)})
	}
	res.Mutants = time.Since(start)

	if !exec.on() {
		return res, nil
	}
	plan := sels
	if exec.Mode == ExecSample {
		plan = make([][]int, len(mutants))
		for j := range kills {
			plan[j] = Spread(kills[j], SampleKillers)
		}
	}
	if err := runExec(ctx, exec, cases, expected, plan, res); err != nil {
		return nil, err
	}
	return res, nil
}

// admissionCode is where the apiserver's code lives: a seam there changes a case only through
// what its admission answers.
const admissionCode = "/nodeimpl/admission/"

// apiServerOf is t's apiserver half when t is a pair (framework.Pair), else nil.
func apiServerOf(t framework.Target) framework.APIServer {
	if p, ok := t.(interface{ APIServerHalf() framework.APIServer }); ok {
		return p.APIServerHalf()
	}
	return nil
}

// admissions are the unmutated admissions of the cases, made when first asked for.
type admissions struct {
	cases []*framework.Case
	api   framework.APIServer
	of    map[int]framework.Admitted
}

// changedBy returns the cases of sel whose admission the mutant n (its seam in the apiserver's
// code) changes: the answer or the pod as stored. The others run exactly as unmutated (the
// node is the same code given the same pod), so no case of them can kill n: they are not run
// in full (issue 34; Result.AdmissionShortcut counts them). Without an apiserver half, sel.
func (a *admissions) changedBy(ctx context.Context, n mutant.Name, sel []int) ([]int, error) {
	if a.api == nil {
		return sel, nil
	}
	admit := func(i int) (framework.Admitted, error) {
		c := a.cases[i].DeepCopy()
		c.Complete()
		return a.api.Admit(ctx, c)
	}
	for _, i := range sel {
		if _, ok := a.of[i]; !ok {
			adm, err := admit(i)
			if err != nil {
				return nil, err
			}
			a.of[i] = adm
		}
	}
	mutant.Activate(n)
	defer mutant.Activate("")
	var out []int
	for _, i := range sel {
		adm, err := admit(i)
		if err != nil {
			return nil, err
		}
		if !reflect.DeepEqual(adm, a.of[i]) {
			out = append(out, i)
		}
	}
	return out, nil
}

// Spread returns at most k of xs, in order, evenly spaced from the first to the last: all of xs
// when it has no more than k. A sample of a mutant's killers taken this way covers the areas of
// the catalogue they come from (killers in catalogue order come in runs of one area) rather
// than its first k cases.
func Spread[T any](xs []T, k int) []T {
	n := len(xs)
	if n <= k {
		return xs
	}
	if k <= 0 {
		return nil
	}
	if k == 1 {
		return xs[:1]
	}
	out := make([]T, k)
	for i := range k {
		out[i] = xs[i*(n-1)/(k-1)]
	}
	return out
}

// runExec is the exec pass: for every mutant, the cases plan gives it (plan[j] for
// res.Outcomes[j]) on a fresh target from exec.NewTarget whose agent runs that mutant, compared
// with the same expected Observations. No mutant is active in this process meanwhile, so a
// kill here is the agent's alone. First the unmutated agent runs every case of the plan once:
// a case it already fails is an exec baseline failure, left out of every mutant's run (it would
// kill them all). Each mutant's target then says whether its agents reached the mutant's seam
// (ExecOutcome.InAgent); the seams reached in this process meanwhile are code the harness runs
// itself on this target (ExecOutcome.InHarness).
func runExec(ctx context.Context, exec Exec, cases []*framework.Case, expected []*framework.Observation, plan [][]int, res *Result) error {
	start := time.Now()
	res.ExecMode = exec.Mode
	mutant.Activate("")
	var mu sync.Mutex
	inHarness := map[mutant.Name]bool{}
	mutant.Record(func(n mutant.Name) {
		mu.Lock()
		inHarness[n] = true
		mu.Unlock()
	})
	defer mutant.Record(nil)

	inPlan := map[int]bool{}
	for _, sel := range plan {
		for _, i := range sel {
			inPlan[i] = true
		}
	}
	var all []int
	for i := range cases {
		if inPlan[i] {
			all = append(all, i)
		}
	}
	failing, _, ran, err := runAgent(ctx, "", cases, expected, all, exec.NewTarget)
	if err != nil {
		return fmt.Errorf("exec baseline: %w", err)
	}
	res.ExecCases = ran
	res.ExecBaseline = names(cases, failing)
	bad := map[int]bool{}
	for _, i := range failing {
		bad[i] = true
	}

	for j := range res.Outcomes {
		o := &res.Outcomes[j]
		var sel []int
		for _, i := range plan[j] {
			if !bad[i] {
				sel = append(sel, i)
			}
		}
		killers, reached, ran, err := runAgent(ctx, o.Mutant.Name, cases, expected, sel, exec.NewTarget)
		if err != nil {
			return fmt.Errorf("mutant %s through exec: %w", o.Mutant.Name, err)
		}
		o.Exec = &ExecOutcome{Ran: ran, Killers: names(cases, killers), InAgent: reached[o.Mutant.Name]}
	}
	mu.Lock()
	for j := range res.Outcomes {
		res.Outcomes[j].Exec.InHarness = inHarness[res.Outcomes[j].Mutant.Name]
	}
	mu.Unlock()
	res.ExecTime = time.Since(start)
	return nil
}

// runAgent runs the cases sel on a fresh target whose agents run mutant n and returns the
// indices of those that fail and the seams the agents reached.
func runAgent(ctx context.Context, n mutant.Name, cases []*framework.Case, expected []*framework.Observation, sel []int, newTarget NewAgentTarget) (failing []int, reached map[mutant.Name]bool, ran int, err error) {
	if len(sel) == 0 {
		return nil, nil, 0, nil
	}
	t, err := newTarget(n)
	if err != nil {
		return nil, nil, 0, err
	}
	// A case the agent's target cannot run (a release its halves are not: framework.ReleaseRunner)
	// is not run through exec, neither in the baseline nor for a mutant.
	sel = slices.DeleteFunc(slices.Clone(sel), func(i int) bool {
		_, skip := notRunHere(t, cases[i])
		return skip
	})
	failing, err = observeAll(ctx, t, cases, expected, sel)
	if cerr := t.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, nil, 0, err
	}
	seams, err := t.Reached()
	if err != nil {
		return nil, nil, 0, err
	}
	reached = map[mutant.Name]bool{}
	for _, s := range seams {
		reached[s] = true
	}
	return failing, reached, len(sel), nil
}

// notRunHere says why c cannot run on t on this machine (not applicable, a host feature it
// lacks, or a case the target does not support: framework.Reasons).
func notRunHere(t framework.Target, c *framework.Case) (string, bool) {
	why := framework.Reasons(t, c, suites.Assumes(c)...).NotRun()
	return why, why != ""
}

// runMutant runs the cases sel with mutant n active in this process and returns the indices of
// those that fail.
func runMutant(ctx context.Context, n mutant.Name, cases []*framework.Case, expected []*framework.Observation, sel []int, newTarget NewTarget) ([]int, error) {
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
	return observeAll(ctx, t, cases, expected, sel)
}

// observeAll runs the cases sel on t (prepared together when t is a framework.Batcher) and
// returns the indices of those that fail: an error, or a difference from expected.
func observeAll(ctx context.Context, t framework.Target, cases []*framework.Case, expected []*framework.Observation, sel []int) ([]int, error) {
	if b, ok := t.(framework.Batcher); ok {
		batch := make([]*framework.Case, len(sel))
		for j, i := range sel {
			batch[j] = cases[i]
		}
		if err := b.Prepare(ctx, batch); err != nil {
			return nil, err
		}
	}
	var failing []int
	for _, i := range sel {
		obs, err := t.Observe(ctx, cases[i])
		if err != nil || len(framework.Diff(expected[i], obs)) > 0 {
			failing = append(failing, i)
		}
	}
	return failing, ctx.Err()
}

// names are the names of the cases at indices idx.
func names(cases []*framework.Case, idx []int) []string {
	var out []string
	for _, i := range idx {
		out = append(out, cases[i].Name)
	}
	return out
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

// ExecLost are the mutants the exec path lost: killed in-process, their seam reached in the
// agent, but failed through exec by fewer than MinKillers cases (or than their in-process
// killers, when those are fewer: Weak already names them).
func (r *Result) ExecLost() []Outcome {
	var out []Outcome
	for _, o := range r.Outcomes {
		if o.execRequired() && len(o.Exec.Killers) < min(MinKillers, len(o.Killers)) {
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

// ExecRatio is, of the non-equivalent mutants whose seam the agent reached, how many the exec
// pass killed; 0 of 0 when no exec pass ran.
func (r *Result) ExecRatio() (killed, total int) {
	for _, o := range r.Outcomes {
		if o.Exec == nil || o.Mutant.Equivalent != "" || !o.Exec.InAgent {
			continue
		}
		total++
		if len(o.Exec.Killers) > 0 {
			killed++
		}
	}
	return killed, total
}

// NotInAgent are the non-equivalent mutants killed in-process whose seam the exec pass's agents
// never reached: not the agent's code behind this target, so neither killed nor required to be
// there. The caller compares them with the list it can explain (mutation/mutants_test.go): a
// mutant newly here is code the exec path stopped leading the agent to.
func (r *Result) NotInAgent() []Outcome {
	var out []Outcome
	for _, o := range r.Outcomes {
		if o.Exec != nil && o.Mutant.Equivalent == "" && o.Killed() && !o.Exec.InAgent {
			out = append(out, o)
		}
	}
	return out
}

// execVerdict is a mutant's verdict through exec, for the report.
func (o Outcome) execVerdict() string {
	switch {
	case o.Mutant.Equivalent != "":
		return "equivalent"
	case !o.Killed():
		return "not killed in-process"
	case !o.Exec.InAgent && o.Exec.InHarness:
		return "harness's code"
	case !o.Exec.InAgent:
		return "not in the agent"
	case len(o.Exec.Killers) < min(MinKillers, len(o.Killers)):
		return "LOST"
	}
	return "killed"
}

// Markdown is the report: the ratio (and the exec pass's, when one ran), then one row per mutant
// with its family, how many cases reached it, how many killed it and the first killer, and how
// many ran and killed it through exec.
func (r *Result) Markdown() string {
	var b strings.Builder
	killed, total := r.Ratio()
	fmt.Fprintf(&b, "# Mutation self-test\n\n")
	fmt.Fprintf(&b, "Killed %d of %d mutants (%.1f%%); %d equivalent; %d cases run, %d not run here, %d failing unmutated. Recording run %s, mutant runs %s (%d case runs of apiserver mutants left out: their admission came out unmutated).\n\n",
		killed, total, percent(killed, total), len(r.Outcomes)-total, r.Cases, len(r.Skipped), len(r.Baseline),
		r.Record.Round(time.Millisecond), r.Mutants.Round(time.Millisecond), r.AdmissionShortcut)
	exec := r.ExecMode != "" && r.ExecMode != ExecOff
	if exec {
		ek, et := r.ExecRatio()
		how := "every case that reached the mutant"
		if r.ExecMode == ExecSample {
			how = fmt.Sprintf("at most %d of its in-process killers", SampleKillers)
		}
		var away []string
		for _, o := range r.NotInAgent() {
			away = append(away, string(o.Mutant.Name))
		}
		fmt.Fprintf(&b, "Exec (%s: %s): killed %d of %d mutants whose code the agent reached (%.1f%%); %d killed in-process not reached in the agent%s; %d cases through the unmutated agent, %d failing there. Exec pass %s.\n\n",
			r.ExecMode, how, ek, et, percent(ek, et), len(away), listed(away), r.ExecCases, len(r.ExecBaseline), r.ExecTime.Round(time.Millisecond))
	}
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
	b.WriteString("\n| mutant | family | reached | killed by | verdict | first killer |")
	if exec {
		b.WriteString(" exec ran | exec killed by | exec verdict |\n|---|---|---|---|---|---|---|---|---|\n")
	} else {
		b.WriteString("\n|---|---|---|---|---|---|\n")
	}
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
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %s | %s |", o.Mutant.Name, o.Mutant.Family, o.Reached, len(o.Killers), verdict, first)
		if exec && o.Exec != nil {
			fmt.Fprintf(&b, " %d | %d | %s |", o.Exec.Ran, len(o.Exec.Killers), o.execVerdict())
		}
		b.WriteString("\n")
	}
	return b.String()
}

// percent is 100 k/n, 0 when n is 0.
func percent(k, n int) float64 { return 100 * float64(k) / float64(max(n, 1)) }

// listed is ": a, b" for a non-empty list, "" for none.
func listed(xs []string) string {
	if len(xs) == 0 {
		return ""
	}
	return ": " + strings.Join(xs, ", ")
}
