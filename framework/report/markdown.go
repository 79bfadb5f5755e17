package report

import (
	"bytes"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"
)

// Markdown renders the summary for a reviewer: the verdict, the versions, the counts per area
// and per profile, every failure with its first difference, and the cases not run grouped by
// reason.
func (s *Summary) Markdown() []byte {
	var b bytes.Buffer
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }

	p("# volperm report: %s on target %s\n\n", strings.ToUpper(s.Result), s.Target.Name)
	p("%s.\n\n", s.Totals)
	p("| | |\n|---|---|\n")
	p("| target | %s |\n", cell(targetLine(s)))
	p("| volperm | %s |\n", cell(s.Versions.Volperm))
	p("| Go | %s |\n", cell(s.Versions.Go))
	p("| kernel | %s |\n", cell(s.Versions.Kernel))
	p("| k8s.io/api | %s |\n", cell(s.Versions.KubernetesAPI))
	p("| started | %s |\n", s.StartTime.UTC().Format(time.RFC3339))
	p("| duration | %.1fs |\n", s.DurationSeconds)
	if sel := s.Selection; sel != nil {
		p("| cases | %d selected of %d from %s |\n", sel.Selected, sel.Available, cell(sel.Source))
		if len(sel.Profiles) > 0 {
			p("| profiles | %s |\n", cell(strings.Join(sel.Profiles, ", ")))
		}
		if sel.LabelFilter != "" {
			p("| label filter | %s |\n", cell(code(sel.LabelFilter)))
		}
		if sel.Focus != "" {
			p("| focus | %s |\n", cell(code(sel.Focus)))
		}
		if sel.Skip != "" {
			p("| skip | %s |\n", cell(code(sel.Skip)))
		}
		if sel.Require {
			p("| require | a case that cannot run is a failure |\n")
		}
	}
	if s.NotSelected > 0 {
		p("| not selected | %d (left out by the run's filters) |\n", s.NotSelected)
	}
	p("| certification | %s |\n", cell(certificationWords(s.Certification)))
	p("\n")
	if c := s.Certification; c != nil && len(c.Problems) > 0 {
		p("## Why the hand-in does not verify\n\n")
		for _, pr := range c.Problems {
			p("- %s\n", pr)
		}
		p("\n")
	}

	if len(s.SuiteFailures) > 0 {
		p("## Suite failures\n\n")
		for _, f := range s.SuiteFailures {
			p("- %s\n", code(f))
		}
		p("\n")
	}

	groupTable(&b, "By area", s.Areas, true)
	groupTable(&b, "By profile", s.Profiles, false)
	if len(s.Nodes) > 0 {
		groupTable(&b, "By node", s.Nodes, false)
	}
	poolTable(&b, s.Pools)
	releaseTable(&b, s.Releases)

	p("## Failures (%d)\n\n", len(s.Failures))
	if len(s.Failures) == 0 {
		p("None.\n")
	}
	known := map[string][]CaseResult{}
	var whys []string
	for _, f := range s.Failures {
		if f.KnownDifference == "" {
			p("- %s (%s): %s\n", code(f.Name), f.State, code(f.Message))
			continue
		}
		if len(known[f.KnownDifference]) == 0 {
			whys = append(whys, f.KnownDifference)
		}
		known[f.KnownDifference] = append(known[f.KnownDifference], f)
	}
	if len(whys) > 0 {
		p("\n### Known differences of this target (%d failures, each explained)\n\n", len(s.Failures)-s.Unexplained()+len(s.SuiteFailures))
	}
	for _, why := range whys {
		fs := known[why]
		p("- **%d failures**: %s\n  <details><summary>cases</summary>\n\n", len(fs), why)
		for _, f := range fs {
			p("  - %s: %s\n", code(f.Name), code(f.Message))
		}
		p("\n  </details>\n")
	}
	p("\n")

	if len(s.Timings) > 0 {
		p("## Timings (%d, reported, not asserted)\n\n", len(s.Timings))
		p("| case | state | observed by the target | spec |\n|---|---|---:|---:|\n")
		for _, t := range s.Timings {
			p("| %s | %s | %s | %.3fs |\n", cell(code(t.Name)), t.State, cell(t.observed()), t.SpecSeconds)
		}
		p("\n")
	}

	p("## Not run (%d)\n\n", len(s.NotRun))
	if len(s.NotRun) == 0 {
		p("None.\n")
	}
	for _, g := range byReason(s.NotRun) {
		p("### %s\n\n<details><summary>%d cases</summary>\n\n", g.Reason, len(g.Names))
		for _, n := range g.Names {
			p("- %s\n", code(n))
		}
		p("\n</details>\n\n")
	}
	return b.Bytes()
}

// observed words ObserveSeconds for a table cell or a log line.
func (t Timing) observed() string {
	if t.ObserveSeconds == nil {
		return "not measured by this target"
	}
	return fmt.Sprintf("%.3fs", *t.ObserveSeconds)
}

// TimingLine is the run log's line for a timed case: its times and its name.
func (t Timing) TimingLine() string {
	return fmt.Sprintf("TIMED    observed %s, spec %.3fs: %s (%s)", t.observed(), t.SpecSeconds, t.Name, t.State)
}

// WriteMarkdown writes the Markdown summary to path.
func (s *Summary) WriteMarkdown(path string) error {
	if err := os.WriteFile(path, s.Markdown(), 0o644); err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	return nil
}

func targetLine(s *Summary) string {
	line := s.Target.Name
	if s.Target.Version != "" {
		line += " " + s.Target.Version
	}
	keys := make([]string, 0, len(s.Target.Details))
	for k := range s.Target.Details {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		line += fmt.Sprintf(", %s %s", k, s.Target.Details[k])
	}
	return line
}

func groupTable(b *bytes.Buffer, title string, groups []Group, describe bool) {
	fmt.Fprintf(b, "## %s\n\n", title)
	// Not applicable apart from could not run (issue 54): the one is never the target's, the
	// other a gap of this run.
	header := "| | passed | failed | could not run | not applicable | total |"
	rule := "|---|---:|---:|---:|---:|---:|"
	if describe {
		header += " what |"
		rule += "---|"
	}
	fmt.Fprintf(b, "%s\n%s\n", header, rule)
	for _, g := range groups {
		fmt.Fprintf(b, "| %s | %d | %d | %d | %d | %d |", cell(g.Name), g.Passed, g.Failed, g.CouldNotRun(), g.NotApplicable, g.Total)
		if describe {
			fmt.Fprintf(b, " %s |", cell(g.Description))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

// poolTable is the verdicts per pool of nodes, each pool's failed cases (a few) below it: which
// pool fails which case at a glance.
func poolTable(b *bytes.Buffer, pools []PoolGroup) {
	if len(pools) == 0 {
		return
	}
	fmt.Fprintf(b, "## By pool\n\n| pool | nodes | passed | failed | not run | total |\n|---|---|---:|---:|---:|---:|\n")
	for _, g := range pools {
		fmt.Fprintf(b, "| %s | %s | %d | %d | %d | %d |\n", cell(g.Name), cell(strings.Join(g.Nodes, ", ")), g.Passed, g.Failed, g.Skipped, g.Total)
	}
	b.WriteString("\n")
	for _, g := range pools {
		if len(g.FailedCases) == 0 {
			continue
		}
		fmt.Fprintf(b, "Failed on %s (%d):\n", cell(g.Name), len(g.FailedCases))
		for i, n := range g.FailedCases {
			if i == 5 {
				fmt.Fprintf(b, "- and %d more (summary.json pools)\n", len(g.FailedCases)-i)
				break
			}
			fmt.Fprintf(b, "- %s\n", code(n))
		}
		b.WriteString("\n")
	}
}

// releaseTable is the release matrix (docs/spec.md "Releases"), when the run has more than one
// pair of releases: per kube-apiserver release, kubelet release and gates, the outcomes, known
// differences counted apart.
func releaseTable(b *bytes.Buffer, cells []ReleaseCell) {
	pairs := map[[2]string]bool{}
	for _, c := range cells {
		pairs[[2]string{c.APIServer, c.Kubelet}] = true
	}
	if len(pairs) < 2 {
		return
	}
	b.WriteString("## Release matrix\n\n| kube-apiserver | kubelet | gates | passed | failed | known differences | not run | total |\n|---|---|---|---:|---:|---:|---:|---:|\n")
	for _, c := range cells {
		fmt.Fprintf(b, "| %s | %s | %s | %d | %d | %d | %d | %d |\n", c.APIServer, c.Kubelet, cell(c.Gates), c.Passed, c.Failed-c.KnownDifferences, c.KnownDifferences, c.Skipped, c.Total)
	}
	b.WriteString("\n")
}

// byReason groups the cases not run by reason, the largest group first.
func byReason(rs []CaseResult) []reasonGroup {
	return groupBy(rs, func(c CaseResult) (string, bool) { return c.Message, true })
}

// code renders s as inline code, whatever backticks it holds.
func code(s string) string {
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}

// cell makes s safe inside a Markdown table cell.
func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}

// certificationWords is the certification line of summary.md: whether the hand-in verifies (as
// `volperm report verify` says) and with which claims, or that the run certifies nothing.
func certificationWords(c *Certification) string {
	if c == nil {
		return "none: not a certification run (no --implementation)"
	}
	claims := "no claims"
	if len(c.Claims) > 0 {
		claims = "claims " + strings.Join(c.Claims, ", ")
	}
	if c.Verified {
		return fmt.Sprintf("%s: verifies, %s", c.Implementation, claims)
	}
	return fmt.Sprintf("%s: does not verify (%d problem(s), below), %s", c.Implementation, len(c.Problems), claims)
}
