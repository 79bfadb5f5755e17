package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os/signal"
	"strings"
	"syscall"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/suites"
)

// diffFlags are the flags of `volperm diff`.
type diffFlags struct {
	targets     string
	labelFilter string
	focus       string
	targetOpts  targetFlags
	cases       caseFlags
}

func newDiffCommand(s streams) *command {
	f := &diffFlags{}
	fs := flag.NewFlagSet("diff", flag.ContinueOnError)
	fs.StringVar(&f.targets, "targets", "reference,upstream", "two targets to compare, comma-separated: "+targetList())
	fs.StringVar(&f.labelFilter, "label-filter", "", `Ginkgo label filter on area, profile and case labels, e.g. "emptydir && !alpha"`)
	fs.StringVar(&f.focus, "focus", "", "regular expression on the spec name")
	f.targetOpts.register(fs)
	f.cases.register(fs)
	return &command{
		name:    "diff",
		summary: "run each case (the catalogue, or -f files) on two targets and print every case whose Observations differ",
		flags:   fs,
		env:     true,
		run:     func() int { return runDiff(s, f) },
	}
}

// runDiff prints, for every case both targets can run, the differences between their
// Observations; then the counts and the cases one of them could not run. Exit 0 when they agree
// everywhere, 1 when some case differs or a target failed.
func runDiff(s streams, f *diffFlags) int {
	refs := strings.Split(f.targets, ",")
	if len(refs) != 2 || refs[0] == "" || refs[1] == "" {
		return fail(s, "diff", usagef("--targets %q: name exactly two targets, e.g. --targets reference,upstream", f.targets))
	}
	cases, err := f.cases.casesOrCatalogue()
	if err != nil {
		return fail(s, "diff", err)
	}
	selected, err := suites.Select(cases, refs[0], f.labelFilter, f.focus, "")
	if err != nil {
		return fail(s, "diff", usageError{err.Error()})
	}
	// This command owns the signals: they cancel the targets' build and then the cases.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	opts := f.targetOpts.opts
	opts.Interrupt = ctx
	var targets [2]framework.Target
	for i, ref := range refs {
		t, err := framework.NewTarget(ref, opts)
		if err != nil {
			if i == 1 {
				targets[0].Close()
			}
			return fail(s, "diff", usagef("--targets: %v", err))
		}
		targets[i] = t
	}

	var differ, agree int
	var notRun []string
	var errs []error
	for _, c := range selected {
		if ctx.Err() != nil {
			errs = append(errs, fmt.Errorf("interrupted after %d cases", differ+agree+len(notRun)))
			break
		}
		var obs [2]*framework.Observation
		skip := ""
		for i, t := range targets {
			a := framework.Ask(ctx, t, c)
			if why := a.NotRun(); why != "" {
				skip = fmt.Sprintf("%s: %s", refs[i], why)
				break
			}
			if a.Err != nil {
				skip = fmt.Sprintf("%s failed: %v", refs[i], a.Err)
				errs = append(errs, fmt.Errorf("case %q: %s", c.Name, skip))
				break
			}
			obs[i] = a.Observation
		}
		if skip != "" {
			notRun = append(notRun, fmt.Sprintf("%s (%s)", c.Name, skip))
			continue
		}
		d := framework.Diff(obs[0], obs[1])
		if len(d) == 0 {
			agree++
			continue
		}
		differ++
		fmt.Fprintf(s.out, "%s\n", c.Name)
		for _, line := range d {
			fmt.Fprintf(s.out, "  %s\n", strings.NewReplacer("expected", refs[0], "observed", refs[1]).Replace(line))
		}
	}
	fmt.Fprintf(s.out, "\n%d cases compared on %s and %s: %d differ, %d agree; %d not compared\n",
		differ+agree, refs[0], refs[1], differ, agree, len(notRun))
	for _, n := range notRun {
		fmt.Fprintf(s.out, "  not compared: %s\n", n)
	}
	for _, t := range targets {
		errs = append(errs, t.Close())
	}
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintf(s.err, "volperm diff: %s\n", strings.ReplaceAll(err.Error(), "\n", "; "))
		return exitFailed
	}
	if differ > 0 {
		return exitFailed
	}
	return exitOK
}
