package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/bench"
	"github.com/volperm/volperm/framework/caseroot"
	"github.com/volperm/volperm/framework/catalogue"
	"github.com/volperm/volperm/framework/execagent"
	"github.com/volperm/volperm/framework/needs"
	"github.com/volperm/volperm/framework/probe"
	"github.com/volperm/volperm/nodeimpl/mountinfo"
)

// comparisons are what `volperm bench` can measure (docs/bench.md). agent is the reference
// exec agent to use.
func comparisons(agent string) []bench.Comparison {
	all := func(cs []*framework.Case) []*framework.Case { return cs }
	area := func(a framework.Area, every int) func([]*framework.Case) []*framework.Case {
		return func(cs []*framework.Case) []*framework.Case {
			var out []*framework.Case
			n := 0
			for _, c := range cs {
				if c.Area == a {
					if n%every == 0 {
						out = append(out, c)
					}
					n++
				}
			}
			return out
		}
	}
	withProbes := func(cs []*framework.Case) []*framework.Case {
		return slices.DeleteFunc(slices.Clone(cs), func(c *framework.Case) bool { return len(c.Probes) == 0 })
	}
	kindSample := func(cs []*framework.Case) []*framework.Case {
		// The cases CI runs on kind (.ci/run's label filter), of the emptydir and skew areas.
		return slices.DeleteFunc(slices.Clone(cs), func(c *framework.Case) bool {
			if c.Area != framework.AreaSkew && c.Area != framework.AreaEmptyDir {
				return true
			}
			for _, l := range c.Labels {
				switch l {
				case needs.HugePages, needs.PreservePermissions, needs.PodUpdate, catalogue.LabelRuntimeDefined,
					needs.FsUserProbesLabel, needs.PodCredentials, catalogue.LabelReleaseSkew, needs.SourceUpdate:
					return true
				}
			}
			return false
		})
	}
	return []bench.Comparison{
		{Name: "oracle-vs-reference", What: "the reference node against the oracle (what set-up, mounts and probes cost)", Sample: "the whole catalogue", Select: all,
			A: bench.Side{Name: "oracle"}, B: bench.Side{Name: "reference", Target: "reference"}},
		{Name: "helpers-vs-one-shot", What: "a child process per probe set against one long-lived probe helper per credential", Sample: "the cases with probes", Select: withProbes,
			A: bench.Side{Name: "reference, helpers", Target: "reference"},
			B: bench.Side{Name: "reference, a child per probe set", Target: "reference", Env: map[string]string{probe.EnvHelpers: "off"}}},
		{Name: "tmpfs-vs-disk-roots", What: "case roots on this machine's $TMPDIR against a tmpfs (the reference target's default)", Sample: "the whole catalogue", Select: all,
			A: bench.Side{Name: "reference, roots in " + caseroot.ScratchDir, Target: "reference", WorkDir: scratchOr(os.TempDir())},
			B: bench.Side{Name: "reference, roots in " + os.TempDir(), Target: "reference", WorkDir: os.TempDir()}},
		{Name: "mounts-0-vs-500", What: "the reference target on a host with 500 more mounts (a node's containers and volumes)", Sample: "the whole catalogue", Select: all,
			A: bench.Side{Name: "reference", Target: "reference"}, B: bench.Side{Name: "reference, 500 foreign mounts", Target: "reference", ForeignMounts: 500}},
		{Name: "mounts-0-vs-2000", What: "the reference target on a host with 2,000 more mounts (a busy node)", Sample: "the whole catalogue", Select: all,
			A: bench.Side{Name: "reference", Target: "reference"}, B: bench.Side{Name: "reference, 2,000 foreign mounts", Target: "reference", ForeignMounts: 2000}},
		{Name: "mounts-kernel-vs-table", What: "each lookup reading the whole mount table (before issue 52) against asking the kernel about the directory's own mounts, with 2,000 foreign mounts", Sample: "the atomicwriter area", Select: area(framework.AreaAtomicWriter, 1),
			A: bench.Side{Name: "reference, kernel", Target: "reference", ForeignMounts: 2000},
			B: bench.Side{Name: "reference, whole table", Target: "reference", ForeignMounts: 2000, Env: map[string]string{mountinfo.EnvMountinfo: "table"}}},
		{Name: "served-vs-per-call", What: "a process per protocol call against one long-lived agent (exec protocol v2)", Sample: "the atomicwriter area", Select: area(framework.AreaAtomicWriter, 1),
			A: bench.Side{Name: "exec, served", Target: "exec:" + agent, Env: map[string]string{execagent.EnvAgentMode: execagent.ModeServe}},
			B: bench.Side{Name: "exec, per call", Target: "exec:" + agent, Env: map[string]string{execagent.EnvAgentMode: execagent.ModePerCall}}},
		{Name: "batched-vs-per-case", What: "a container per case against one container per user set", Sample: "every 6th case of the atomicwriter area", Select: area(framework.AreaAtomicWriter, 6),
			A: bench.Side{Name: "container, batched", Target: "container"}, B: bench.Side{Name: "container, per case", Target: "container:per-case"}},
		{Name: "kind-batched-vs-pod-per-case", What: "a probe pod per case (upstream e2e's way) against batched probe pods", Sample: "CI's kind cases of the emptydir and skew areas", Select: kindSample,
			A: bench.Side{Name: "kind, batched", Target: "kind"}, B: bench.Side{Name: "kind, pod per case", Target: "kind:pod-per-case"}},
		{Name: "kind-in-place-vs-per-cell", What: "one cluster per kind-config against one cluster reconfigured in place", Sample: "CI's kind cases of the emptydir and skew areas", Select: kindSample,
			A: bench.Side{Name: "kind, in place", Target: "kind"}, B: bench.Side{Name: "kind, cluster per cell", Target: "kind:per-cell"}},
	}
}

// defaultComparisons are the ones that need no cluster.
var defaultComparisons = []string{"oracle-vs-reference", "helpers-vs-one-shot", "tmpfs-vs-disk-roots", "mounts-0-vs-500", "mounts-0-vs-2000", "mounts-kernel-vs-table", "served-vs-per-call", "batched-vs-per-case"}

// scratchOr is caseroot.Scratch, or dir on a machine without one.
func scratchOr(dir string) string {
	if s := caseroot.Scratch(); s != "" {
		return s
	}
	return dir
}

// runBench is `volperm bench`: comparisons side by side, bench.md and bench.json; then each
// median against its last run in the history, the run appended to it, and its plot redrawn.
func runBench(s streams, args []string) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	compare := fs.String("compare", strings.Join(defaultComparisons, ","), "comparisons, comma-separated (docs/bench.md); the kind ones create clusters")
	runs := fs.Int("runs", 3, "runs per side; the report gives medians")
	dir := fs.String("report-dir", "reports", "where bench.md and bench.json are written")
	workDir := fs.String("work-dir", "", "where targets create their temporary roots (default $TMPDIR)")
	history := fs.String("history", filepath.Join("reports", "bench", "history.jsonl"), "the history this run is appended to and compared with (one JSON line per run; its plot is written beside it, .svg); \"\" keeps none")
	replot := fs.Bool("replot", false, "only redraw the plot of the history (beside it, .svg) from the history as it is; run nothing")
	slower := fs.Float64("slower", 100*bench.DefaultSlower, "call out a median that grew by more than this many percent (and 0.05 s) since its last run in the history (informational: the exit code stays 0)")
	if code, done := parseSubcommand(s, "bench", "measure ways of running the catalogue side by side (docs/bench.md)", fs, args); done {
		return code
	}
	if *replot {
		// The plot of the history as it is, nothing run (after the plot's code changed).
		if *history == "" {
			return fail(s, "bench", usagef("--replot needs --history"))
		}
		past, err := bench.ReadHistory(*history)
		if err != nil {
			return fail(s, "bench", err)
		}
		plot := historyPlot(*history)
		if err := os.WriteFile(plot, bench.PlotSVG(past, filepath.Base(*history)), 0o644); err != nil {
			return fail(s, "bench", err)
		}
		fmt.Fprintf(s.out, "%s: drawn from %s (runs: %d)\n", plot, *history, len(past))
		return exitOK
	}
	if *runs < 1 {
		return fail(s, "bench", usagef("--runs %d: want at least 1", *runs))
	}
	self, err := os.Executable()
	if err != nil {
		return fail(s, "bench", err)
	}
	// The reference agent is this binary under the name volperm-agent (cmd/volperm/agent.go).
	agentDir, err := os.MkdirTemp(*workDir, "volperm-bench-")
	if err != nil {
		return fail(s, "bench", err)
	}
	defer os.RemoveAll(agentDir)
	agent := filepath.Join(agentDir, "volperm-agent")
	if err := os.Symlink(self, agent); err != nil {
		return fail(s, "bench", err)
	}
	var comps []bench.Comparison
	known := comparisons(agent)
	for _, n := range strings.Split(*compare, ",") {
		i := slices.IndexFunc(known, func(c bench.Comparison) bool { return c.Name == strings.TrimSpace(n) })
		if i < 0 {
			var names []string
			for _, c := range known {
				names = append(names, c.Name)
			}
			return fail(s, "bench", usagef("--compare: unknown comparison %q: use some of %s", n, strings.Join(names, ", ")))
		}
		comps = append(comps, known[i])
	}
	// The history is read before the runs: a bad line stops bench before it spends minutes.
	var past []bench.HistoryEntry
	if *history != "" {
		if past, err = bench.ReadHistory(*history); err != nil {
			return fail(s, "bench", err)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	r, err := bench.Run(ctx, catalogue.All(), comps, bench.Options{Runs: *runs, WorkDir: *workDir,
		Log: func(format string, a ...any) { fmt.Fprintf(s.err, "bench: "+format+"\n", a...) }})
	if err != nil {
		return fail(s, "bench", err)
	}
	if err := r.Write(*dir); err != nil {
		return fail(s, "bench", err)
	}
	s.out.Write(r.Markdown())
	written := []string{filepath.Join(*dir, "bench.md"), filepath.Join(*dir, "bench.json")}
	if *history != "" {
		commit, dirty := bench.Commit()
		entry := r.Entry(commit, dirty)
		printChanges(s, *history, entry, bench.Changes(past, entry, *slower/100), *slower)
		if err := bench.AppendHistory(*history, entry); err != nil {
			return fail(s, "bench", err)
		}
		plot := historyPlot(*history)
		if err := os.WriteFile(plot, bench.PlotSVG(append(past, entry), filepath.Base(*history)), 0o644); err != nil {
			return fail(s, "bench", err)
		}
		written = append(written, *history+" (a line appended)", plot)
	}
	fmt.Fprintf(s.out, "\nreports:\n  %s\n", strings.Join(written, "\n  "))
	return exitOK
}

// shortCommit is a commit hash's first 12 digits (a version or "(devel)" as it is).
func shortCommit(c string) string {
	if len(c) == 40 && strings.Trim(c, "0123456789abcdef") == "" {
		return c[:12]
	}
	return c
}

// historyPlot is where the plot of the history goes: beside it, .svg for .jsonl.
func historyPlot(history string) string {
	return strings.TrimSuffix(history, filepath.Ext(history)) + ".svg"
}

// printChanges prints each median against its last run, then the ones that grew by more than
// slower percent, plainly: informational, bench's exit code stays 0.
func printChanges(s streams, history string, now bench.HistoryEntry, changes []bench.Change, slower float64) {
	fmt.Fprintf(s.out, "\nChange of each median against the last run in %s with the same comparison and side:\n", history)
	var slow []string
	for _, c := range changes {
		fmt.Fprintf(s.out, "  %s\n", c)
		if c.Slower {
			l := fmt.Sprintf("%s %s (%s) %s -> %s, %+.0f%% since the run of %s at %s",
				c.Comparison, c.Letter, c.Side, bench.Seconds(c.Before.MedianSeconds), bench.Seconds(c.Now.MedianSeconds), 100*c.Delta(),
				c.BeforeRun.Date.Format("2006-01-02"), shortCommit(c.BeforeRun.Commit))
			if then := c.BeforeRun.Machine.Load; then > 0 && now.Machine.Load > 0 {
				l += fmt.Sprintf(" (load average %.1f then, %.1f now)", then, now.Machine.Load)
			}
			slow = append(slow, l)
		}
	}
	if len(slow) == 0 {
		fmt.Fprintf(s.out, "No median grew by more than %g%% (and %g s) since its last run.\n", slower, bench.MinSlowerSeconds)
		return
	}
	fmt.Fprintf(s.out, "SLOWER by more than %g%% (and %g s) than in its last run (informational; the exit code stays 0):\n", slower, bench.MinSlowerSeconds)
	for _, l := range slow {
		fmt.Fprintf(s.out, "  %s\n", l)
	}
}
