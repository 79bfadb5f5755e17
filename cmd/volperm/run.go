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
	"sync"
	"syscall"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/catalogue"
	"github.com/volperm/volperm/framework/certify"
	"github.com/volperm/volperm/framework/report"
	"github.com/volperm/volperm/framework/sweep"
	"github.com/volperm/volperm/hostfeature"
	"github.com/volperm/volperm/suites"
)

// runFlags are the flags of `volperm run`.
type runFlags struct {
	target      string
	profiles    string
	labelFilter string
	focus       string
	skip        string
	reportDir   string
	targetOpts  targetFlags
	acceptKnown bool
	cases       caseFlags
	// implementation and claims make the run write the ConformanceReport (docs/certify.md).
	implementation string
	claims         string
	// named is the implementation given another way than a file (the runner's
	// E2E_EXTRA_ARGS --volperm-vendor=... under hydrophone); it wins over implementation.
	named *certify.Implementation
	// rerunFailed is a report directory whose failed cases the run runs again (rerun.go).
	rerunFailed string
	// given names the flags given on the command line.
	given map[string]bool
}

func newRunCommand(s streams) *command {
	f := &runFlags{}
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.StringVar(&f.target, "target", "reference", "implementation under test: "+targetList())
	fs.StringVar(&f.profiles, "profile", "", "profiles to run, comma-separated ("+framework.ProfileList()+"); default all")
	fs.StringVar(&f.labelFilter, "label-filter", "", `Ginkgo label filter on area, profile and case labels, e.g. "emptydir && !alpha"`)
	fs.StringVar(&f.focus, "focus", "", "regular expression on the spec name ([area] case name [target=NAME])")
	fs.StringVar(&f.skip, "skip", "", "regular expression on the spec name: the cases it matches are left out")
	fs.StringVar(&f.reportDir, "report-dir", "reports", "where junit.xml, summary.md, summary.json and run.log are written")
	fs.StringVar(&f.rerunFailed, "rerun-failed", "", "`DIR` of an earlier run's reports: run again only its cases that failed or could not run, on its target unless --target is given")
	f.targetOpts.register(fs)
	f.cases.register(fs)
	f.registerVerdictFlags(fs)
	return &command{
		name:    "run",
		summary: "run the suites (the whole catalogue, or -f files) against a target and write the reports",
		flags:   fs,
		env:     true,
		run: func() int {
			f.given = givenFlags(fs)
			return runRun(s, f)
		},
	}
}

// registerVerdictFlags registers the flags `volperm run` and `volperm runner` share about the
// verdict and the certification: --accept-known-differences, --implementation, --claim.
func (f *runFlags) registerVerdictFlags(fs *flag.FlagSet) {
	fs.BoolVar(&f.acceptKnown, "accept-known-differences", false, "exit 0 when every failure is a documented known difference of the target (upstream: emptyDir mode on Memory/HugePages); they are still reported as failures")
	fs.StringVar(&f.implementation, "implementation", "", "a YAML file naming the implementation certified (vendor, product, version, contact, url): writes conformance-report.yaml (docs/certify.md)")
	fs.StringVar(&f.claims, "claim", "", "features the implementation claims, comma-separated ("+strings.Join(framework.FeatureNames(), ", ")+"): their cases are required in conformance-report.yaml, the others' not applicable (docs/certify.md)")
}

// runRun runs the selected cases in this process as one Ginkgo suite. Ginkgo's interrupt
// handling cancels the running case on SIGINT/SIGTERM, runs the cleanups (the target's
// teardown and Close) and still writes the reports.
func runRun(s streams, f *runFlags) int {
	profiles, err := parseProfiles(f.profiles)
	if err != nil {
		return fail(s, "run", err)
	}
	if err := hostfeature.CheckRequireList(); err != nil {
		return fail(s, "run", usageError{err.Error()})
	}
	claims, err := framework.ParseClaims(f.claims)
	if err != nil {
		return fail(s, "run", usagef("--claim: %v", err))
	}
	if err := certifySubset(f); err != nil {
		return fail(s, "run", err)
	}
	var certifyCfg *suites.CertifyConfig
	if f.implementation != "" || f.named != nil || len(claims) > 0 {
		certifyCfg = &suites.CertifyConfig{Claims: claims, CatalogueDigest: catalogue.Digest()}
		if f.named != nil {
			certifyCfg.Implementation = *f.named
		} else if f.implementation != "" {
			if certifyCfg.Implementation, err = certify.LoadImplementation(f.implementation); err != nil {
				return fail(s, "run", usagef("--implementation: %v", err))
			}
		}
	}
	var again *rerun
	if f.rerunFailed != "" {
		if again, err = f.applyRerun(f.given); err != nil {
			return fail(s, "run", err)
		}
	}
	source := "catalogue"
	if len(f.cases.files) > 0 {
		source = strings.Join(f.cases.files, ", ")
	}
	cases, err := f.cases.casesOrCatalogue()
	if err != nil {
		return fail(s, "run", err)
	}
	available := len(cases)
	// The selection is made before the target is built: building one may take minutes (kind
	// builds its node image), and a selection of nothing is an error worth seeing at once.
	cases = slices.DeleteFunc(cases, func(c *framework.Case) bool { return !slices.Contains(profiles, c.Profile) })
	if cases, err = suites.Select(cases, framework.TargetName(f.target), f.labelFilter, f.focus, f.skip); err != nil {
		return fail(s, "run", usageError{err.Error()})
	}
	if again != nil {
		if cases = again.selects(cases); len(again.only) == 0 || len(cases) == 0 {
			fmt.Fprintf(s.out, "nothing to run again: no case of %s failed or could not run (of this catalogue)\n", f.rerunFailed)
			return exitOK
		}
		fmt.Fprintln(s.out, again.describe(f.target))
	}
	if len(cases) == 0 {
		filters := fmt.Sprintf("--profile %q, --label-filter %q and --focus %q", f.profiles, f.labelFilter, f.focus)
		if f.skip != "" {
			filters = fmt.Sprintf("--profile %q, --label-filter %q, --focus %q and --skip %q", f.profiles, f.labelFilter, f.focus, f.skip)
		}
		return fail(s, "run", usagef("%s select none of the %d cases of %s: widen them", filters, available, source))
	}
	// This command owns the signals: until the suite starts (Ginkgo's interrupt handler then
	// cancels the running case and closes the target), they cancel the target's build.
	building, stopBuilding := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	opts := f.targetOpts.opts
	opts.Interrupt = building
	target, err := framework.NewTarget(f.target, opts)
	stopBuilding()
	if err != nil {
		return fail(s, "run", usagef("--target: %v", err))
	}
	if name := target.Info().Name; name != framework.TargetName(f.target) {
		target.Close()
		return fail(s, "run", fmt.Errorf("target %s reports its name as %q: a target's Info().Name must be its registered name (framework.TargetName)", f.target, name))
	}
	if cc, ok := target.(framework.ClaimChecker); ok && certifyCfg != nil {
		if err := cc.CheckClaims(certifyCfg.Claims); err != nil {
			target.Close()
			return fail(s, "run", usageError{err.Error()})
		}
	}
	if err := os.MkdirAll(f.reportDir, 0o755); err != nil {
		target.Close()
		return fail(s, "run", fmt.Errorf("--report-dir: %w", err))
	}
	// What killed runs left (case roots, mounts, containers, clusters) goes before the first case,
	// once the input is known to be good (docs/cleanup.md). Targets create lazily: kind's cluster
	// of a killed run is gone before this run creates its own.
	if err := sweepLeftovers(s.out, "run", sweep.Options{WorkDir: f.targetOpts.opts.WorkDir}, false); err != nil {
		fmt.Fprintf(s.err, "volperm run: cleaning up after dead runs: %s\n", strings.ReplaceAll(err.Error(), "\n", "; "))
	}

	// Ginkgo's own words (its default reporter's header), which runners such as hydrophone read.
	fmt.Fprintf(s.out, "Will run %d of %d specs\n", len(cases), available)
	var plan certifyPlan
	if certifyCfg != nil {
		plan = planCertification(certifyCfg, f.implementation != "" || f.named != nil, f.narrowing(), cases)
		plan.start(s.out, f.reportDir)
	}
	require := suites.RequireFromEnv()
	cfg := &suites.Config{
		Target:    target,
		Cases:     cases,
		Require:   require,
		ReportDir: f.reportDir,
		Selection: &report.Selection{
			Source: source, Available: available, Selected: len(cases),
			Profiles: f.profileNames(profiles), LabelFilter: f.labelFilter, Focus: f.focus, Skip: f.skip,
			Require: require, Target: f.target, TargetFlags: targetFlagsGiven(f.targetOpts.opts.Flags), Rerun: f.rerunFailed,
		},
		Certify: certifyCfg,
	}
	if again != nil {
		cfg.Only = again.only
	}
	suiteConfig := types.NewDefaultSuiteConfig()
	reporterConfig := types.NewDefaultReporterConfig()
	// One character per case as progress, failures in full; skipped cases are in the summary.
	reporterConfig.Succinct = true
	reporterConfig.SilenceSkips = true
	reporterConfig.NoColor = !isTerminal(os.Stdout)

	t := &suiteResult{}
	stopProgress := printProgress(s, cases)
	summary, err := suites.RunSpecs(t, cfg, suiteConfig, reporterConfig)
	stopProgress()
	if err != nil {
		fmt.Fprintf(s.err, "volperm run: %v\n", err)
		t.Fail()
	}
	if summary != nil {
		fmt.Fprintf(s.out, "\n%s on target %s: %s\n", strings.ToUpper(summary.Result), summary.Target.Name, summary.Totals)
		if slow := framework.RunProgress.Slowest(3); slow != "" {
			fmt.Fprintln(s.out, slow)
		}
		for _, tm := range summary.Timings { // the cases labelled "timed": reported, not asserted
			fmt.Fprintln(s.out, tm.TimingLine())
		}
		if n := summary.Totals.CouldNotRun(); n > 0 {
			fmt.Fprintf(s.out, "%d cases could not run here: their reasons are in the summary (%s=cases, or CI=true, makes the target's gaps failures; %s=<feature> a missing feature of this machine)\n", n, hostfeature.EnvRequire, hostfeature.EnvRequire)
		}
		if n := summary.Totals.NotApplicable; n > 0 {
			fmt.Fprintf(s.out, "%d cases are not applicable: cells of releases, or cases of kinds of node, the target is not, or of features not claimed; never required (the summary names them)\n", n)
		}
	}
	fmt.Fprintf(s.out, "reports:\n")
	for _, name := range []string{suites.IndexHTML, suites.SummaryMarkdown, suites.SummaryJSON, suites.JUnitFile, suites.RunLog} {
		fmt.Fprintf(s.out, "  %s\n", filepath.Join(f.reportDir, name))
	}
	if certifyCfg != nil {
		fmt.Fprintf(s.out, "  %s (volperm report verify %s checks it)\n", filepath.Join(f.reportDir, certify.File), f.reportDir)
	}
	if summary != nil && summary.Unexplained() == 0 && len(summary.Failures) > 0 {
		fmt.Fprintf(s.out, "every failure (%d) is a known difference of target %s: see the summary\n", len(summary.Failures), summary.Target.Name)
	}
	if certifyCfg != nil && summary != nil {
		plan.end(s.out, f.reportDir)
	}
	return runExit(summary, t.failed, err, f.acceptKnown)
}

// runExit is the run's exit code: OK when the suite passed, or when every failure is a known
// difference and they are accepted; the run's own error (a target that could not close, a
// report not written) is no known difference and fails the run whatever the cases did.
func runExit(summary *report.Summary, suiteFailed bool, runErr error, acceptKnown bool) int {
	switch {
	case runErr != nil || summary == nil:
		return exitFailed
	case acceptKnown && summary.Unexplained() == 0 && len(summary.Failures) > 0:
		return exitOK
	case suiteFailed || summary.Result != report.ResultPassed:
		return exitFailed
	}
	return exitOK
}

// suiteResult is the GinkgoTestingT of an in-process run: it records that the suite failed.
type suiteResult struct{ failed bool }

func (r *suiteResult) Fail() { r.failed = true }

// parseProfiles reads --profile; empty means every profile.
func parseProfiles(spec string) ([]framework.Profile, error) {
	ps, err := framework.ParseProfiles(spec)
	if err != nil {
		return nil, usagef("--profile: %v", err)
	}
	return ps, nil
}

// profileNames records the profiles in the summary only when the run chose some.
func (f *runFlags) profileNames(ps []framework.Profile) []string {
	if f.profiles == "" {
		return nil
	}
	var out []string
	for _, p := range ps {
		out = append(out, string(p))
	}
	return out
}

// targetList names the registered targets; `volperm version` describes them.
func targetList() string {
	return strings.Join(framework.TargetNames(), ", ") + " (volperm version describes them)"
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// printProgress prints the run's progress (framework.RunProgress) on its own line of stderr
// every 10 s on a terminal, every 30 s otherwise, until the returned func is called (issue 52:
// a batch observes a whole area before Ginkgo prints a dot for any of its cases).
func printProgress(s streams, cases []*framework.Case) (stop func()) {
	framework.RunProgress.Start(cases)
	every := 30 * time.Second
	if isTerminal(os.Stderr) {
		every = 10 * time.Second
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				fmt.Fprintf(s.err, "\nvolperm run: %s\n", framework.RunProgress.Line())
			}
		}
	}()
	return sync.OnceFunc(func() { close(done); wg.Wait() })
}
