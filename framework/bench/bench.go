// Package bench measures targets side by side (`volperm bench`, docs/bench.md): each
// comparison runs the same cases on two ways of running them, alternately, several times, and
// reports the medians, the ratio and the pod or container starts, after checking that both
// sides observed the same as the oracle. It writes bench.md and bench.json.
package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/oracle"
	"github.com/volperm/volperm/hostfeature"
	"github.com/volperm/volperm/suites"
)

// Side is one way of running the cases: a target reference, or the oracle alone.
type Side struct {
	// Name words it in the report: "reference", "exec, served".
	Name string `json:"name"`
	// Target is the target reference ("" for the oracle).
	Target string `json:"target,omitempty"`
	// Env is set while the side's target is built and runs (VOLPERM_AGENT_MODE=per-call).
	Env map[string]string `json:"env,omitempty"`
	// WorkDir, when set, is where the side's target makes its roots (Options.WorkDir otherwise).
	WorkDir string `json:"workDir,omitempty"`
	// ForeignMounts is how many mounts not volperm's are on the host while the side runs (a
	// node's containers and volumes; issue 52): made before each run, outside its time, and
	// removed after it (foreign.go).
	ForeignMounts int `json:"foreignMounts,omitempty"`
}

// Comparison is two sides over one sample of the catalogue.
type Comparison struct {
	Name string `json:"name"`
	// What the ratio says: "reference against the oracle".
	What   string `json:"what"`
	A, B   Side   `json:"-"`
	Sample string `json:"sample"`
	// Select picks the sample's cases from the catalogue.
	Select func([]*framework.Case) []*framework.Case `json:"-"`
}

// Measure is one side's figures: the median wall time of its runs, cases per second over that
// median, the starts of pods or containers of one run, and how many cases differed from the
// oracle (known differences included: the same on both sides of a fair comparison).
type Measure struct {
	Side          Side      `json:"side"`
	Cases         int       `json:"cases"`
	NotRun        int       `json:"notRun"`
	Seconds       []float64 `json:"seconds"`
	MedianSeconds float64   `json:"medianSeconds"`
	CasesPerSec   float64   `json:"casesPerSecond"`
	Starts        string    `json:"starts,omitempty"`
	Differences   int       `json:"differences"`
	Errors        int       `json:"errors"`
}

// Result is one comparison measured: Ratio is B's median over A's (how many times longer B
// took).
type Result struct {
	Name   string  `json:"name"`
	What   string  `json:"what"`
	Sample string  `json:"sample"`
	A      Measure `json:"a"`
	B      Measure `json:"b"`
	Ratio  float64 `json:"ratio"`
	// Same is true when both sides answered every case they ran alike (the same Observation).
	Same bool `json:"same"`
}

// Report is a bench run.
type Report struct {
	Date    time.Time `json:"date"`
	Machine Machine   `json:"machine"`
	Runs    int       `json:"runs"`
	Results []Result  `json:"results"`
}

// Machine is where the bench ran.
type Machine struct {
	CPUs     int    `json:"cpus"`
	MemoryGB int    `json:"memoryGiB"`
	Kernel   string `json:"kernel"`
	Go       string `json:"go"`
	// Load is the load average over the minute before the bench started (/proc/loadavg): on a
	// machine shared with other work, what the figures were measured under.
	Load float64 `json:"load1,omitempty"`
}

// Options of Run.
type Options struct {
	Runs    int
	WorkDir string
	// Log receives a line per run.
	Log func(format string, a ...any)
}

// Run measures each comparison: A and B alternately, opts.Runs times each.
func Run(ctx context.Context, cases []*framework.Case, comps []Comparison, o Options) (*Report, error) {
	r := &Report{Date: time.Now().UTC().Truncate(time.Second), Machine: machine(), Runs: o.Runs}
	for _, c := range comps {
		sample := c.Select(cases)
		if len(sample) == 0 {
			return nil, fmt.Errorf("comparison %s: its sample (%s) selects no case", c.Name, c.Sample)
		}
		res := Result{Name: c.Name, What: c.What, Sample: c.Sample}
		answers := [2][]*framework.Observation{}
		for i := 0; i < o.Runs; i++ {
			for k, side := range []Side{c.A, c.B} {
				m := &res.A
				if k == 1 {
					m = &res.B
				}
				undo, err := foreignMounts(side, o.WorkDir)
				if err != nil {
					return nil, fmt.Errorf("comparison %s, %s: %w", c.Name, side.Name, err)
				}
				start := time.Now()
				obs, stats, err := runSide(ctx, side, sample, o.WorkDir)
				secs := time.Since(start).Seconds()
				if uerr := undo(); err == nil {
					err = uerr
				}
				if err != nil {
					return nil, fmt.Errorf("comparison %s, %s: %w", c.Name, side.Name, err)
				}
				m.Side, m.Seconds = side, append(m.Seconds, secs)
				m.Cases, m.NotRun, m.Starts, m.Differences, m.Errors = stats.ran, stats.notRun, stats.starts, stats.differences, stats.errors
				answers[k] = obs
				if o.Log != nil {
					o.Log("%s: %s run %d: %d cases in %.2fs", c.Name, side.Name, i+1, stats.ran, secs)
				}
			}
		}
		for _, m := range []*Measure{&res.A, &res.B} {
			m.MedianSeconds = median(m.Seconds)
			if m.MedianSeconds > 0 {
				m.CasesPerSec = float64(m.Cases) / m.MedianSeconds
			}
		}
		if res.A.MedianSeconds > 0 {
			res.Ratio = res.B.MedianSeconds / res.A.MedianSeconds
		}
		res.Same = same(answers[0], answers[1])
		r.Results = append(r.Results, res)
	}
	return r, nil
}

type stats struct {
	ran, notRun, differences, errors int
	starts                           string
}

// runSide runs sample on side once and returns, per case, its Observation (nil: not run or an
// error).
func runSide(ctx context.Context, side Side, sample []*framework.Case, workDir string) ([]*framework.Observation, stats, error) {
	var st stats
	out := make([]*framework.Observation, len(sample))
	if side.Target == "" {
		for i, c := range sample {
			out[i] = oracle.Expect(c)
		}
		st.ran = len(sample)
		return out, st, nil
	}
	for k, v := range side.Env {
		old, had := os.LookupEnv(k)
		os.Setenv(k, v)
		if had {
			defer os.Setenv(k, old)
		} else {
			defer os.Unsetenv(k)
		}
	}
	if side.WorkDir != "" {
		workDir = side.WorkDir
	}
	t, err := framework.NewTarget(side.Target, framework.TargetOptions{WorkDir: workDir, Interrupt: ctx})
	if err != nil {
		return nil, st, err
	}
	defer t.Close()
	runnable := make([]bool, len(sample))
	var run []*framework.Case
	index := map[*framework.Case]int{}
	for i, c := range sample {
		if framework.Reasons(t, c, suites.Assumes(c)...).NotRun() != "" {
			continue
		}
		runnable[i] = true
		run = append(run, c)
		index[c] = i
	}
	// As the suites do: each group (an area, or the whole run: framework.PrepareGroups)
	// prepared before its cases are observed.
	for _, group := range framework.PrepareGroups(t, run) {
		if b, ok := t.(framework.Batcher); ok {
			if err := b.Prepare(ctx, group); err != nil {
				return nil, st, fmt.Errorf("prepare %s: %w", framework.AreasOf(group), err)
			}
		}
		for _, c := range group {
			i := index[c]
			a := framework.Ask(ctx, t, c, suites.Assumes(c)...)
			obs, err := a.Observation, a.Err
			if why := a.NotRun(); why != "" {
				err = errors.New(why)
			}
			if err != nil {
				st.errors++
				continue
			}
			out[i] = obs
			if len(framework.Diff(oracle.Expect(c), obs)) > 0 {
				st.differences++
			}
		}
	}
	for _, ok := range runnable {
		if ok {
			st.ran++
		} else {
			st.notRun++
		}
	}
	st.starts = starts(t.Info())
	return out, st, nil
}

// starts reads what a target says it started: containerStarts (container), podStarts (kind).
func starts(info framework.TargetInfo) string {
	for _, k := range []string{"containerStarts", "podStarts"} {
		if v, ok := info.Details[k]; ok {
			return strings.TrimSuffix(k, "Starts") + " starts " + v
		}
	}
	return ""
}

// same reports whether two runs answered alike wherever both answered.
func same(a, b []*framework.Observation) bool {
	for i := range a {
		if a[i] == nil || b[i] == nil {
			continue
		}
		if len(framework.Diff(a[i], b[i])) > 0 {
			return false
		}
	}
	return true
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func machine() Machine {
	m := Machine{CPUs: runtime.NumCPU(), Kernel: hostfeature.KernelRelease(), Go: runtime.Version()}
	if raw, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(raw)); len(f) > 0 {
			m.Load, _ = strconv.ParseFloat(f[0], 64)
		}
	}
	if raw, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, l := range strings.Split(string(raw), "\n") {
			if f := strings.Fields(l); len(f) >= 2 && f[0] == "MemTotal:" {
				kb, _ := strconv.Atoi(f[1])
				m.MemoryGB = (kb + 1<<19) >> 20
			}
		}
	}
	return m
}

// Write writes bench.json and bench.md into dir.
func (r *Report) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	raw, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "bench.json"), append(raw, '\n'), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "bench.md"), r.Markdown(), 0o644)
}

// Markdown is bench.md: one table row per side, the ratio per comparison.
func (r *Report) Markdown() []byte {
	var b strings.Builder
	load := ""
	if r.Machine.Load > 0 {
		load = fmt.Sprintf(" (load average %.1f at the start)", r.Machine.Load)
	}
	fmt.Fprintf(&b, "# volperm bench\n\n%s, %d CPUs%s, %d GiB, Linux %s, %s; medians of %d runs per side, the two sides alternating.\n\n",
		r.Date.Format("2006-01-02"), r.Machine.CPUs, load, r.Machine.MemoryGB, r.Machine.Kernel, r.Machine.Go, r.Runs)
	b.WriteString("| comparison | sample | side | cases | median | cases/s | starts | vs oracle | ratio |\n|---|---|---|---:|---:|---:|---|---:|---:|\n")
	for _, res := range r.Results {
		for k, m := range []Measure{res.A, res.B} {
			ratio := ""
			name, sample := "", ""
			if k == 0 {
				name, sample = res.Name, res.Sample
			} else {
				ratio = fmt.Sprintf("%.2fx", res.Ratio)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %d | %.2fs | %.0f | %s | %d differ | %s |\n", name, sample, m.Side.Name, m.Cases, m.MedianSeconds, m.CasesPerSec, m.Starts, m.Differences, ratio)
		}
	}
	b.WriteString("\nThe ratio is the second side's median over the first's. ")
	for _, res := range r.Results {
		verdict := "the same Observations on both sides"
		if !res.Same {
			verdict = "**different Observations** on the two sides"
		}
		fmt.Fprintf(&b, "%s: %s, %s. ", res.Name, res.What, verdict)
	}
	b.WriteString("\n")
	return []byte(b.String())
}
