// Package suites is volperm's Ginkgo v2 test suites: one container per area, one spec per Case,
// each comparing what a Target observed with what the oracle expects. Like csi-sanity, it has two
// entry points: Describe registers the specs into the caller's own Ginkgo suite, and Run (go
// test) or RunSpecs (the volperm binary) run them as a whole suite and write the reports.
// Importing the package registers nothing.
package suites

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/certify"
	"github.com/volperm/volperm/framework/oracle"
	"github.com/volperm/volperm/framework/report"
	"github.com/volperm/volperm/hostfeature"
)

// Config is what the suites run.
type Config struct {
	// Target is the implementation under test. Run and RunSpecs close it when the suite ends;
	// with Describe alone, closing it is the caller's.
	Target framework.Target
	// Cases are the cases to run, each Complete()d (catalogue.All and framework.LoadFile's are).
	Cases []*framework.Case
	// Require makes a case the Target cannot run a failure instead of a skip (see RequireFromEnv).
	Require bool
	// ReportDir, when set, receives junit.xml, summary.md, summary.json and run.log (Run and
	// RunSpecs only).
	ReportDir string
	// Selection, when set, is recorded in the summary as how Cases were chosen.
	Selection *report.Selection
	// Certify, when set, makes Run and RunSpecs write the ConformanceReport too
	// (framework/certify, docs/certify.md).
	Certify *CertifyConfig
	// Only, when set, keeps only the specs of these names without their target tag
	// (report.WithoutTarget: "[area] name [apiserver=.. kubelet=..]"): a rerun of what failed, cell by cell, after the
	// target expanded the cases into its release cells (volperm run --rerun-failed).
	Only map[string]bool
}

// CertifyConfig is what the ConformanceReport needs beyond the run: the implementation, its
// claims and the digest of the catalogue the cases came from.
type CertifyConfig struct {
	Implementation  certify.Implementation
	Claims          []string
	CatalogueDigest string
}

// Unclaimed says why c is not applicable to the certification cfg writes the ConformanceReport
// of: c is a case of a feature the implementation does not claim, which the certificate does
// not cover (issue 51: unclaimed, its cases are not run and never required; docs/certify.md
// "Features and claims"). "" when every feature of c is claimed, or the run certifies nothing.
func (cfg *Config) Unclaimed(c *framework.Case) string {
	if cfg.Certify == nil {
		return ""
	}
	var out []string
	for _, f := range framework.CaseFeatures(c) {
		if !slices.Contains(cfg.Certify.Claims, f) {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return ""
	}
	return fmt.Sprintf("not claimed: %s (--claim %s requires the feature's cases; docs/certify.md \"Features and claims\")", strings.Join(out, ", "), strings.Join(out, ","))
}

// Report file names inside Config.ReportDir.
const (
	JUnitFile       = "junit.xml"
	SummaryMarkdown = "summary.md"
	SummaryJSON     = "summary.json"
	RunLog          = "run.log"
	IndexHTML       = report.IndexHTML
)

// RequireFromEnv reports whether this run is one where every case must run on the target: CI=true
// (as CI systems set it) or VOLPERM_REQUIRE naming "cases" or "all" (hostfeature.RequireCases).
// A case this machine cannot run for want of a host feature (a huge page size, a container
// engine) fails only when that feature is required (hostfeature.Required).
func RequireFromEnv() bool { return hostfeature.RequireCases() }

// areaText is the Ginkgo container text of area a, which opens every spec name of the area
// ("[emptydir]"). The areas, their order and descriptions are framework's (framework/area.go).
func areaText(a framework.Area) string { return "[" + string(a) + "]" }

// SpecName is the full text of the spec of c on the target named target, as Ginkgo, the JUnit
// file and the reports show it: "[emptydir] <case name> [target=reference]"; a cell of the
// release-skew matrix names both releases: "[skew] <case name> [apiserver=v1.36 kubelet=v1.34]
// [target=reference]".
func SpecName(c *framework.Case, target string) string {
	return "[" + string(c.Area) + "] " + itText(c, target)
}

func itText(c *framework.Case, target string) string {
	if c.Releases.Skewed() {
		return fmt.Sprintf("%s [apiserver=%s kubelet=%s] [target=%s]", c.Name, c.Releases.Of(true), c.Releases.Of(false), target)
	}
	return c.Name + " [target=" + target + "]"
}

// SpecLabels are the Ginkgo labels of c's spec: its area, its profile, then its own labels.
// The reports read the area and profile from them.
func SpecLabels(c *framework.Case) []string {
	return append([]string{string(c.Area), string(c.Profile)}, c.Labels...)
}

// CheckLabels returns an error naming the first label of c that Ginkgo would refuse.
func CheckLabels(c *framework.Case) error {
	for _, l := range c.Labels {
		if _, err := types.ValidateAndCleanupLabel(l, types.CodeLocation{}); err != nil {
			return fmt.Errorf("case %q: label %q: must be non-empty and hold none of &|!,()/", c.Name, l)
		}
	}
	return nil
}

// Select keeps the cases whose spec on target matches labelFilter (Ginkgo's label filter
// syntax, on SpecLabels) and focus (a regular expression on SpecName); empty selects all.
// Selecting before the suite is built keeps cases left out from being reported as skipped.
func Select(cases []*framework.Case, target, labelFilter, focus, skip string) ([]*framework.Case, error) {
	return Within{}.Select(cases, target, labelFilter, focus, skip)
}

// Within is where Describe's specs sit when a bigger Ginkgo suite holds them (the
// e2e-framework adapter's "[sig-storage] volperm" container, e2e/volperme2e.go): Text comes
// before every spec name, every spec inherits Labels, and FlagPrefix names the filters in
// errors ("" = "--", volperm run's flags; "-ginkgo." for Ginkgo's own).
type Within struct {
	Text       string
	Labels     []string
	FlagPrefix string
}

// Select is Select on the specs' full texts and labels inside w, as Ginkgo matches them.
func (w Within) Select(cases []*framework.Case, target, labelFilter, focus, skip string) ([]*framework.Case, error) {
	prefix := w.FlagPrefix
	if prefix == "" {
		prefix = "--"
	}
	match := func([]string) bool { return true }
	if labelFilter != "" {
		f, err := types.ParseLabelFilter(labelFilter)
		if err != nil {
			return nil, fmt.Errorf("%slabel-filter %q: %s: write a Ginkgo label filter such as \"emptydir && !alpha\"", prefix, labelFilter, ginkgoMessage(err))
		}
		match = f
	}
	compile := func(flag, expr string) (*regexp.Regexp, error) {
		if expr == "" {
			return nil, nil
		}
		re, err := regexp.Compile(expr)
		if err != nil {
			return nil, fmt.Errorf("%s%s %q: %v: write a Go regular expression", prefix, flag, expr, err)
		}
		return re, nil
	}
	focusRE, err := compile("focus", focus)
	if err != nil {
		return nil, err
	}
	skipRE, err := compile("skip", skip)
	if err != nil {
		return nil, err
	}
	var out []*framework.Case
	for _, c := range cases {
		name := SpecName(c, target)
		if w.Text != "" {
			name = w.Text + " " + name
		}
		if match(append(slices.Clone(w.Labels), SpecLabels(c)...)) && (focusRE == nil || focusRE.MatchString(name)) && (skipRE == nil || !skipRE.MatchString(name)) {
			out = append(out, c)
		}
	}
	return out, nil
}

// ginkgoMessage is the last line of a Ginkgo error's message, without Ginkgo's colour markup.
func ginkgoMessage(err error) string {
	var ge types.GinkgoError
	if !errors.As(err, &ge) {
		return err.Error()
	}
	lines := strings.Split(strings.TrimSpace(ge.Message), "\n")
	return regexp.MustCompile(`\{\{[^}]*\}\}`).ReplaceAllString(lines[len(lines)-1], "")
}

// Describe registers one Ginkgo container per area holding one spec per case of cfg. Call it
// at the top level of a Ginkgo suite (or before RunSpecs), never inside a spec.
func Describe(cfg *Config) {
	byArea := map[framework.Area][]*framework.Case{}
	for _, c := range framework.RunAsReleases(cfg.Target, cfg.Cases) {
		if cfg.Only != nil && !cfg.Only[report.WithoutTarget(SpecName(c, ""))] {
			continue
		}
		c.Complete()
		byArea[c.Area] = append(byArea[c.Area], c)
	}
	target := cfg.Target.Info().Name
	batcher, batched := cfg.Target.(framework.Batcher)
	// Each area's cases are prepared with their group (framework.PrepareGroups: the area's, or
	// the whole run's for a RunBatcher), once, by the first area of the group whose specs run.
	prepared := map[framework.Area]*preparation{}
	if batched {
		var all []*framework.Case
		for _, a := range framework.Areas {
			all = append(all, byArea[a]...)
		}
		// A case not claimed is not run (runCase): nothing to prepare for it.
		all = slices.DeleteFunc(all, func(c *framework.Case) bool { return cfg.Unclaimed(c) != "" })
		for _, g := range framework.PrepareGroups(cfg.Target, all) {
			p := &preparation{cases: g}
			for _, c := range g {
				prepared[c.Area] = p
			}
		}
	}
	for _, a := range framework.Areas {
		cases := byArea[a]
		if len(cases) == 0 {
			continue
		}
		var decorators []any
		if batched {
			// Prepare runs before the area's specs; ContinueOnFailure keeps one failing case
			// from skipping the rest of the ordered container.
			decorators = append(decorators, ginkgo.Ordered, ginkgo.ContinueOnFailure)
		}
		ginkgo.Describe(areaText(a), append(decorators, func() {
			if p := prepared[a]; p != nil {
				ginkgo.BeforeAll(func(ctx ginkgo.SpecContext) {
					if err := p.do(ctx, batcher); err != nil {
						ginkgo.Fail(fmt.Sprintf("target %s could not prepare the %s cases: %v", target, p.areas(), err))
					}
				})
			}
			for _, c := range cases {
				ginkgo.It(itText(c, target), ginkgo.Label(SpecLabels(c)...), func(ctx ginkgo.SpecContext) {
					runCase(ctx, cfg, target, c)
				})
			}
		})...)
	}
}

// preparation is one Prepare of a group of cases (framework.PrepareGroups), run once by the
// first area of the group whose specs run; the areas after it meet its error.
type preparation struct {
	cases []*framework.Case
	once  sync.Once
	err   error
}

func (p *preparation) do(ctx ginkgo.SpecContext, b framework.Batcher) error {
	p.once.Do(func() { p.err = b.Prepare(ctx, p.cases) })
	return p.err
}

// areas names the group's areas ("[emptydir] [hostpath]"), as the kind target's log does.
func (p *preparation) areas() string { return framework.AreasOf(p.cases) }

// WriteConformanceReport builds the ConformanceReport from the JUnit file just written into
// cfg.ReportDir (so that the two agree by construction, as `volperm report verify` checks) and
// writes it there; s is the run's summary. RunSpecs calls it, and the e2e-framework adapter.
func WriteConformanceReport(cfg *Config, s *report.Summary) error {
	outcomes, err := certify.ReadJUnit(filepath.Join(cfg.ReportDir, JUnitFile))
	if err != nil {
		return err
	}
	o := certify.Options{Date: s.StartTime, Implementation: cfg.Certify.Implementation, Claims: cfg.Certify.Claims,
		Target: s.Target, VolpermVersion: s.Versions.Volperm, CatalogueDigest: cfg.Certify.CatalogueDigest, Source: "catalogue"}
	if sel := cfg.Selection; sel != nil {
		o.Source, o.LabelFilter, o.Focus, o.Skip = sel.Source, sel.LabelFilter, sel.Focus, sel.Skip
	}
	return certify.Build(outcomes, o).Write(cfg.ReportDir)
}

// WriteCertifiedReports writes what follows junit.xml, summary.json and summary.md into
// cfg.ReportDir: for a certification, the ConformanceReport, then summary.md again with whether
// that hand-in verifies (verify reads the other files; summary.md only has to exist); then
// index.html. RunSpecs calls it, and the e2e-framework adapter.
func WriteCertifiedReports(cfg *Config, s *report.Summary) error {
	if cfg.Certify != nil {
		if err := WriteConformanceReport(cfg, s); err != nil {
			return err
		}
		s.Certification = Certification(cfg)
		if err := s.WriteMarkdown(filepath.Join(cfg.ReportDir, SummaryMarkdown)); err != nil {
			return err
		}
	}
	return s.WriteHTML(filepath.Join(cfg.ReportDir, IndexHTML), s.Certification)
}

// Certification is what index.html says of cfg's certification: whether the hand-in just
// written verifies (certify.Verify, as volperm report verify checks it); nil when cfg certifies
// nothing.
func Certification(cfg *Config) *report.Certification {
	if cfg.Certify == nil {
		return nil
	}
	im := cfg.Certify.Implementation
	c := &report.Certification{Implementation: strings.TrimSpace(im.Vendor + " " + im.Product + " " + im.Version), Claims: cfg.Certify.Claims}
	problems, err := certify.Verify(cfg.ReportDir, cfg.Certify.CatalogueDigest)
	if err != nil {
		problems = []string{err.Error()}
	}
	c.Verified, c.Problems = len(problems) == 0, problems
	return c
}

// Assumes are the features of this machine the spec assumes for c, besides what the target
// needs (framework.Ask's assumes): fs.protected_symlinks=1 when the expected Observation depends
// on it (oracle.AssumesProtectedSymlinks). Every target but cluster probes on this kernel; for a
// cluster this machine's setting stands in for its nodes' (systemd gives them 1).
func Assumes(c *framework.Case) []hostfeature.Feature {
	if oracle.AssumesProtectedSymlinks(c) {
		return []hostfeature.Feature{hostfeature.ProtectedSymlinks}
	}
	return nil
}

// runCase is one spec: the target's Answer of c (framework.Ask, the one question a target is
// asked per case), then skip (or fail) what the target did not run, else compare the target's
// Observation with the oracle's. ctx is cancelled when the run is interrupted; the target then
// tears the case down before returning.
func runCase(ctx ginkgo.SpecContext, cfg *Config, name string, c *framework.Case) {
	facts := report.CaseFacts{Area: string(c.Area), Profile: string(c.Profile),
		APIServerRelease: c.Releases.Of(true), KubeletRelease: c.Releases.Of(false), Gates: report.GatesWords(c.Gates),
		Features: framework.CaseFeatures(c)}
	if facts.NotApplicable = cfg.Unclaimed(c); facts.NotApplicable != "" {
		// Not asked of the target: the certificate does not cover it.
		ginkgo.AddReportEntry(report.CaseEntry, facts, ginkgo.ReportEntryVisibilityNever)
		ginkgo.Skip(facts.NotApplicable)
	}
	a := framework.Ask(ctx, cfg.Target, c, Assumes(c)...)
	facts.NotApplicable = a.NotApplicable
	ginkgo.AddReportEntry(report.CaseEntry, facts, ginkgo.ReportEntryVisibilityNever)
	switch {
	case a.NotApplicable != "":
		ginkgo.Skip(a.NotApplicable) // not the target's failure: its releases cannot have the case
	case a.Missing != nil:
		if hostfeature.Required(a.Missing.Feature) {
			ginkgo.Fail(fmt.Sprintf("cannot run on target %s: %v (this run requires %s: CI=true or %s names it)", name, a.Missing, a.Missing.Feature, hostfeature.EnvRequire))
		}
		ginkgo.Skip(a.Missing.Error())
	case a.Unsupported != "":
		if cfg.Require {
			ginkgo.Fail(fmt.Sprintf("cannot run on target %s: %s (this run requires every case: CI=true or %s names cases)", name, a.Unsupported, hostfeature.EnvRequire))
		}
		ginkgo.Skip(a.Unsupported)
	}
	if n := a.Node(); n != "" {
		ginkgo.AddReportEntry(report.NodeEntry, n, ginkgo.ReportEntryVisibilityNever)
	}
	if slices.Contains(c.Labels, framework.LabelTimed) && a.Timed {
		ginkgo.AddReportEntry(report.ObserveTimeEntry, a.Took.Seconds(), ginkgo.ReportEntryVisibilityNever)
	}
	expected := oracle.Expect(c)
	observed, err := a.Observation, a.Err
	if len(a.Pools) > 0 {
		observed, err = judgePools(a.Pools, expected)
	}
	if err != nil {
		ginkgo.Fail(fmt.Sprintf("target %s failed on case %q: %v", name, c.Name, err))
	}
	if diff := framework.Diff(expected, observed); len(diff) > 0 {
		ginkgo.AddReportEntry(report.DifferenceEntry, diff[0], ginkgo.ReportEntryVisibilityNever)
		k := a.KnownDifference
		other := k.Unexplained(diff)
		if k.Why != "" && len(other) == 0 {
			// Short: a known difference is explained once in the summary, not dumped per case.
			ginkgo.AddReportEntry(report.KnownDifferenceEntry, k.Why, ginkgo.ReportEntryVisibilityNever)
			ginkgo.Fail(fmt.Sprintf("%s\n\nknown difference of target %s: %s\n  %s", diff[0], name, k.Why, strings.Join(diff, "\n  ")))
		}
		note := ""
		if k.Why != "" {
			// The case is one of a known difference, and differs in a way that one does not:
			// not accepted (a known difference never hides another).
			note = fmt.Sprintf("\nnot the known difference of target %s (%s), which does not make:\n  %s\n", name, k.Why, strings.Join(other, "\n  "))
		}
		// Both Observations in full go to the reports (JUnit properties, issue 52), not to the
		// terminal: a failure there is its differing lines and the rules the case checks.
		ginkgo.AddReportEntry(report.ExpectedEntry, expected, ginkgo.ReportEntryVisibilityNever)
		ginkgo.AddReportEntry(report.ObservedEntry, observed, ginkgo.ReportEntryVisibilityNever)
		ginkgo.Fail(mismatch(name, diff, note, rulesOf(c)))
	}
}

// rulesOf names the rules of docs/spec.md case c checks (the oracle's trace): "[emptydir.mode]
// [walk.mask]".
func rulesOf(c *framework.Case) string {
	_, hits := oracle.Explain(c)
	var ids []string
	for _, h := range hits {
		if id := "[" + string(h.Rule) + "]"; !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return strings.Join(ids, " ")
}

// judgePools judges each pool of a case observed on several node pools against the oracle
// (framework.Judge), gives the reports each pool's verdict (report.PoolsEntry), and returns the
// Observation of them all, or why the case fails: a pool failed, or the pools disagree (each
// named with what it saw).
func judgePools(pools []framework.PoolObservation, expected *framework.Observation) (*framework.Observation, error) {
	judged, obs, err := framework.Judge(pools, expected)
	verdicts := make([]report.PoolVerdict, len(judged))
	for i, j := range judged {
		v := report.PoolVerdict{Pool: j.Pool, Kubelet: j.Kubelet, Node: j.Node, State: report.PoolPassed}
		switch {
		case j.Err != nil:
			v.State, v.Message = report.PoolFailed, j.Err.Error()
		case j.Difference != "":
			v.State, v.Message = report.PoolFailed, j.Difference
		}
		verdicts[i] = v
	}
	ginkgo.AddReportEntry(report.PoolsEntry, verdicts, ginkgo.ReportEntryVisibilityNever)
	return obs, err
}

// mismatch is a failure message whose first line is the first difference (what the reports
// show), followed by every difference, note, and both Observations.
func mismatch(target string, diff []string, note, rules string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n%d difference(s) between the oracle and target %s:\n", diff[0], len(diff), target)
	for _, d := range diff {
		fmt.Fprintf(&b, "  %s\n", d)
	}
	b.WriteString(note)
	if rules != "" {
		fmt.Fprintf(&b, "rules (docs/spec.md): %s\n", rules)
	}
	fmt.Fprintf(&b, "both Observations: junit.xml (properties %q and %q); volperm expect and observe print them for one case", report.ExpectedEntry, report.ObservedEntry)
	return b.String()
}

// Run runs cfg as a Go test, with Ginkgo configured from the -ginkgo.* flags.
func Run(t *testing.T, cfg *Config) {
	suiteConfig, reporterConfig := ginkgo.GinkgoConfiguration()
	if _, err := RunSpecs(t, cfg, suiteConfig, reporterConfig); err != nil {
		t.Error(err)
	}
}

// RunSpecs describes cfg and runs it as the process's one Ginkgo suite. It closes cfg.Target
// when the suite ends (also on interrupt, as a suite cleanup), writes the reports into
// cfg.ReportDir when set, and returns the summary. t records the suite's failure; the error is
// what kept the reports from being written or the target from closing.
func RunSpecs(t ginkgo.GinkgoTestingT, cfg *Config, suiteConfig types.SuiteConfig, reporterConfig types.ReporterConfig) (*report.Summary, error) {
	var runLog *os.File
	if cfg.ReportDir != "" {
		if err := os.MkdirAll(cfg.ReportDir, 0o755); err != nil {
			return nil, fmt.Errorf("report dir: %w", err)
		}
		var err error
		if runLog, err = os.Create(filepath.Join(cfg.ReportDir, RunLog)); err != nil {
			return nil, fmt.Errorf("run log: %w", err)
		}
		defer runLog.Close()
		fmt.Fprintln(runLog, report.LogHead(cfg.Target.Info().Name, len(cfg.Cases)))
		// Each line is written as its spec ends: an interrupted run keeps what ran.
		ginkgo.ReportAfterEach(func(sr types.SpecReport) {
			if line := report.LogLine(sr); line != "" {
				fmt.Fprintln(runLog, line)
			}
		})
	}

	closeTarget := sync.OnceValue(cfg.Target.Close)
	ginkgo.BeforeSuite(func() {
		ginkgo.DeferCleanup(closeTarget)
	})

	var summary *report.Summary
	var writeErr error
	ginkgo.ReportAfterSuite("volperm reports", func(r types.Report) {
		summary = report.Build(r, report.Options{
			Target:    cfg.Target.Info(),
			Selection: cfg.Selection,
		})
		if cfg.ReportDir == "" {
			return
		}
		writeErr = errors.Join(
			report.WriteJUnit(r, filepath.Join(cfg.ReportDir, JUnitFile)),
			summary.WriteJSON(filepath.Join(cfg.ReportDir, SummaryJSON)),
			summary.WriteMarkdown(filepath.Join(cfg.ReportDir, SummaryMarkdown)),
		)
		if writeErr == nil {
			writeErr = WriteCertifiedReports(cfg, summary)
		}
		for _, line := range summary.LogTail() {
			fmt.Fprintln(runLog, line)
		}
	})

	Describe(cfg)
	ginkgo.RunSpecs(t, "volperm", suiteConfig, reporterConfig)
	// BeforeSuite does not run when no spec runs; the target is closed either way.
	if err := closeTarget(); err != nil {
		writeErr = errors.Join(writeErr, fmt.Errorf("close target: %w", err))
	}
	return summary, writeErr
}
