package report

import (
	"regexp"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"
)

// htmlRun is the report of a run with every kind of outcome: a failure with its differing lines,
// rules and both Observations, a known difference, a case that could not run, one not
// applicable, over three pairs of releases (one of them the target's in no case).
func htmlRun() *Summary {
	cell := func(a, k string) CaseFacts {
		return CaseFacts{Area: "emptydir", Profile: "alpha", APIServerRelease: a, KubeletRelease: k, Gates: "defaults"}
	}
	with := func(sr types.SpecReport, f CaseFacts, entries ...types.ReportEntry) types.SpecReport {
		sr.ReportEntries = append(types.ReportEntries{{Name: CaseEntry, Value: types.WrapEntryValue(f)}}, entries...)
		return sr
	}
	entry := func(name string, v any) types.ReportEntry {
		return types.ReportEntry{Name: name, Value: types.WrapEntryValue(v)}
	}
	diff := `volume "data" path ".": expected dir 0750 0:0, observed dir 1777 0:0`
	failMsg := diff + "\n\n2 difference(s) between the oracle and target fake:\n  " + diff + "\n  volume \"data\" path \"f\": expected file 0640 0:0, observed file 0644 0:0\nrules (docs/spec.md): [emptydir.mode] [walk.mask]\nboth Observations: junit.xml"
	na := cell("v1.36", "v1.34")
	na.NotApplicable = "a cell of release v1.36 x v1.34: the target runs v1.37 only"
	return Build(types.Report{SpecReports: []types.SpecReport{
		with(spec("emptydir", "alpha", "mode 0750 on medium Memory", types.SpecStatePassed, ""), cell("v1.37", "v1.37")),
		with(spec("emptydir", "alpha", "mode 0750 on medium HugePages", types.SpecStateFailed, failMsg), cell("v1.37", "v1.37"),
			entry(DifferenceEntry, diff), entry(ExpectedEntry, `{"volumes":[{"name":"data","mode":"0750"}]}`), entry(ObservedEntry, `{"volumes":[{"name":"data","mode":"1777"}]}`)),
		with(spec("emptydir", "alpha", "mode 0700 on medium Memory", types.SpecStateFailed, "x"), cell("v1.37", "v1.36"),
			entry(KnownDifferenceEntry, "upstream v1.37 chmods before it mounts the tmpfs")),
		with(spec("emptydir", "alpha", "mode 0700 on huge pages of 1Gi", types.SpecStateSkipped, "needs hugepages-1Gi"), cell("v1.37", "v1.36")),
		with(spec("emptydir", "alpha", "mode 0700 on an old kubelet", types.SpecStateSkipped, na.NotApplicable), na),
	}}, Options{})
}

// index.html says the verdict, draws a bar per area and a grid cell per pair of releases the
// target has (not the one it never runs), shows each failure's differing lines and rules with
// both Observations folded, and keeps "could not run" apart from "not applicable".
func TestHTML(t *testing.T) {
	raw, err := htmlRun().HTML(&Certification{Implementation: "Example Kubelet 1.0", Claims: []string{"userNamespaces"}, Problems: []string{"profile alpha: 1 required case(s) failed"}})
	if err != nil {
		t.Fatal(err)
	}
	page := string(raw)
	for _, want := range []string{
		`<span class="verdict bad" id="verdict">FAILED</span>`,
		`This hand-in <b>does not verify</b>`, "<li>profile alpha: 1 required case(s) failed</li>",
		`<svg class="bar"`, `<rect class="pass"`, `<rect class="known"`, `<rect class="fail"`, `<rect class="notrun"`, `<rect class="na"`,
		`data-pair="v1.37 v1.37"`, `data-pair="v1.37 v1.36"`,
		`<pre class="diff">volume &#34;data&#34; path &#34;.&#34;: expected dir 0750 0:0, observed dir 1777 0:0` + "\n" + `volume &#34;data&#34; path &#34;f&#34;: expected file 0640 0:0, observed file 0644 0:0`,
		"Rules (docs/spec.md): [emptydir.mode] [walk.mask]",
		"<details><summary>Both Observations</summary>",
		"Known differences (1)", "upstream v1.37 chmods before it mounts the tmpfs: 1 case(s)",
		"Could not run (1)", "needs hugepages-1Gi: 1 case(s)",
		"Not applicable (1)", "the target runs v1.37 only: 1 case(s)",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("index.html lacks %q", want)
		}
	}
	if n := strings.Count(page, "data-pair="); n != 2 {
		t.Errorf("%d grid cells, want 2 (v1.36 x v1.34 is not the target's)", n)
	}
	// Self-contained: no script, no address to fetch.
	if regexp.MustCompile(`(?i)<script|src=|href=|url\(|@import`).MatchString(page) {
		t.Errorf("index.html loads something or runs a script")
	}
	raw, err = (&Summary{Result: ResultPassed, Target: htmlRun().Target}).HTML(nil)
	if err != nil || !strings.Contains(string(raw), "Not a certification run") || strings.Contains(string(raw), `id="grid"`) {
		t.Errorf("a passed run of one release without certification: %v\n%s", err, raw)
	}
}

// summary.md says whether the run's hand-in verifies, with its claims, and why not; a run that
// certifies nothing says so.
func TestMarkdownCertification(t *testing.T) {
	s := htmlRun()
	if md := string(s.Markdown()); !strings.Contains(md, "| certification | none: not a certification run (no --implementation) |") {
		t.Errorf("no certification line:\n%s", md)
	}
	s.Certification = &Certification{Implementation: "Example Kubelet 1.0", Claims: []string{"userNamespaces", "imageVolumes"}, Problems: []string{"profile alpha: 1 required case(s) failed"}}
	md := string(s.Markdown())
	for _, want := range []string{
		"| certification | Example Kubelet 1.0: does not verify (1 problem(s), below), claims userNamespaces, imageVolumes |",
		"## Why the hand-in does not verify\n\n- profile alpha: 1 required case(s) failed\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("summary.md lacks %q:\n%s", want, md)
		}
	}
	s.Certification = &Certification{Implementation: "Example Kubelet 1.0", Verified: true}
	if md := string(s.Markdown()); !strings.Contains(md, "| certification | Example Kubelet 1.0: verifies, no claims |") || strings.Contains(md, "Why the hand-in") {
		t.Errorf("a verified hand-in:\n%s", md)
	}
}
