package report

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/volperm/volperm"
	"github.com/volperm/volperm/framework"
)

func spec(area, profile, name string, state types.SpecState, msg string) types.SpecReport {
	return types.SpecReport{
		ContainerHierarchyTexts: []string{"[" + area + "]"},
		LeafNodeText:            name + " [target=fake]",
		LeafNodeType:            types.NodeTypeIt,
		LeafNodeLabels:          []string{area, profile, "sweep"},
		State:                   state,
		Failure:                 types.Failure{Message: msg},
		RunTime:                 12 * time.Millisecond,
	}
}

// sampleReport has one spec of every kind the suites produce.
func sampleReport() types.Report {
	panicked := spec("fsgroup", "conformance", "walk panics", types.SpecStatePanicked, "Test Panicked")
	panicked.Failure.ForwardedPanic = "index out of range"
	closeFailure := types.SpecReport{LeafNodeType: types.NodeTypeCleanupAfterSuite, State: types.SpecStateFailed,
		Failure: types.Failure{Message: "close target: busy"}}
	return types.Report{
		SuiteDescription: "volperm",
		SuiteSucceeded:   false,
		StartTime:        time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC),
		RunTime:          3 * time.Second,
		SpecReports: []types.SpecReport{
			spec("emptydir", "conformance", "mode nil on the default medium", types.SpecStatePassed, ""),
			spec("emptydir", "alpha", "mode 0750 on medium Memory", types.SpecStateFailed,
				"volume \"data\" path \".\": expected dir 0750 0:0, observed dir 1777 0:0\n1 difference\nexpected: {}"),
			spec("hostpath", "conformance", "Socket on a file", types.SpecStateSkipped, "needs root: mounts tmpfs"),
			spec("hostpath", "conformance", "Directory on nothing", types.SpecStateSkipped, "needs root: mounts tmpfs"),
			panicked,
			spec("skew", "alpha", "deselected", types.SpecStateSkipped, ""),
			closeFailure,
		},
	}
}

func TestBuild(t *testing.T) {
	s := Build(sampleReport(), Options{
		Target: framework.TargetInfo{Name: "fake"},
	})
	if s.Result != ResultFailed {
		t.Errorf("result %q, want failed", s.Result)
	}
	if want := (Counts{Total: 5, Passed: 1, Failed: 2, Skipped: 2}); s.Totals != want {
		t.Errorf("totals %+v, want %+v", s.Totals, want)
	}
	if s.NotSelected != 1 {
		t.Errorf("not selected %d, want 1", s.NotSelected)
	}
	wantAreas := []Group{
		{Name: "emptydir", Description: framework.AreaDescription(framework.AreaEmptyDir), Counts: Counts{Total: 2, Passed: 1, Failed: 1}},
		{Name: "hostpath", Description: framework.AreaDescription(framework.AreaHostPath), Counts: Counts{Total: 2, Skipped: 2}},
		{Name: "fsgroup", Description: framework.AreaDescription(framework.AreaFSGroup), Counts: Counts{Total: 1, Failed: 1}},
	}
	if !equalJSON(t, s.Areas, wantAreas) {
		t.Errorf("areas %+v, want %+v", s.Areas, wantAreas)
	}
	wantProfiles := []Group{
		{Name: "conformance", Counts: Counts{Total: 4, Passed: 1, Failed: 1, Skipped: 2}},
		{Name: "alpha", Counts: Counts{Total: 1, Failed: 1}},
	}
	if !equalJSON(t, s.Profiles, wantProfiles) {
		t.Errorf("profiles %+v, want %+v", s.Profiles, wantProfiles)
	}
	wantFailures := []CaseResult{
		{Name: "[emptydir] mode 0750 on medium Memory [target=fake]", Area: "emptydir", Profile: "alpha", State: "failed",
			Message: `volume "data" path ".": expected dir 0750 0:0, observed dir 1777 0:0`},
		{Name: "[fsgroup] walk panics [target=fake]", Area: "fsgroup", Profile: "conformance", State: "panicked",
			Message: "Test Panicked: index out of range"},
	}
	if !equalJSON(t, s.Failures, wantFailures) {
		t.Errorf("failures %+v, want %+v", s.Failures, wantFailures)
	}
	if len(s.NotRun) != 2 || s.NotRun[0].Message != "needs root: mounts tmpfs" || s.NotRun[0].State != "skipped" {
		t.Errorf("not run %+v, want the two hostpath cases with their reason", s.NotRun)
	}
	if len(s.SuiteFailures) != 1 || s.SuiteFailures[0] != "DeferCleanup (Suite): close target: busy" {
		t.Errorf("suite failures %q, want the failing cleanup", s.SuiteFailures)
	}
}

func TestBuildInterrupted(t *testing.T) {
	r := sampleReport()
	r.SpecialSuiteFailureReasons = []string{"Interrupted by User"}
	s := Build(r, Options{})
	if s.NotSelected != 0 {
		t.Errorf("not selected %d: after an interrupt a spec without a message was not run", s.NotSelected)
	}
	last := s.NotRun[len(s.NotRun)-1]
	if last.Message != "the run was interrupted before this case" {
		t.Errorf("last not run %+v, want the interrupt as reason", last)
	}
	if s.SuiteFailures[0] != "Interrupted by User" {
		t.Errorf("suite failures %q, want the interrupt first", s.SuiteFailures)
	}
}

func TestBuildPassed(t *testing.T) {
	r := types.Report{SuiteSucceeded: true, SpecReports: []types.SpecReport{
		spec("emptydir", "conformance", "a", types.SpecStatePassed, ""),
		spec("hostpath", "conformance", "b", types.SpecStateSkipped, "needs root"),
	}}
	s := Build(r, Options{})
	if s.Result != ResultPassed {
		t.Errorf("result %q: cases not run do not fail a run that does not require them", s.Result)
	}
}

func TestSummaryFiles(t *testing.T) {
	s := Build(sampleReport(), Options{
		Target:    framework.TargetInfo{Name: "fake", Version: "v1", Details: map[string]string{"kernel": "6.1"}},
		Selection: &Selection{Source: "catalogue", Available: 3000, Selected: 6, LabelFilter: "emptydir || hostpath", Require: true},
	})
	dir := t.TempDir()
	jsonPath, mdPath := filepath.Join(dir, "summary.json"), filepath.Join(dir, "summary.md")
	if err := s.WriteJSON(jsonPath); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteMarkdown(mdPath); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var back Summary
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("summary.json does not parse: %v", err)
	}
	if back.Totals != s.Totals || len(back.NotRun) != 2 || back.Selection.Selected != 6 || back.Versions.Go == "" {
		t.Errorf("summary.json round trip lost data: %+v", back)
	}
	md, err := os.ReadFile(mdPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"# volperm report: FAILED on target fake",
		"5 cases: 1 passed, 2 failed, 2 not run.",
		"| target | fake v1, kernel 6.1 |",
		"| label filter | `emptydir \\|\\| hostpath` |",
		"| | passed | failed | could not run | not applicable | total |",
		"| emptydir | 1 | 1 | 0 | 0 | 2 |",
		"- `[emptydir] mode 0750 on medium Memory [target=fake]` (failed): `volume \"data\" path \".\": expected dir 0750 0:0, observed dir 1777 0:0`",
		"### needs root: mounts tmpfs\n\n<details><summary>2 cases</summary>",
		"- `DeferCleanup (Suite): close target: busy`",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("summary.md lacks %q:\n%s", want, md)
		}
	}
}

// The JUnit file as a CI reads it.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Failures int         `xml:"failures,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name    string `xml:"name,attr"`
	Failure *struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Body    string `xml:",chardata"`
	} `xml:"failure"`
	Error *struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
	} `xml:"error"`
	Skipped *struct {
		Message string `xml:"message,attr"`
	} `xml:"skipped"`
}

func TestWriteJUnit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "junit.xml")
	if err := WriteJUnit(sampleReport(), path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc junitSuites
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("junit.xml is not well-formed: %v", err)
	}
	if len(doc.Suites) != 1 {
		t.Fatalf("%d testsuite elements, want 1", len(doc.Suites))
	}
	ts := doc.Suites[0]
	// Six specs; the suite cleanup node is left out.
	if ts.Name != "volperm" || ts.Tests != 6 || len(ts.Cases) != 6 || ts.Skipped != 3 || ts.Failures != 1 || doc.Errors != 1 {
		t.Errorf("testsuite %q tests=%d cases=%d skipped=%d failures=%d errors=%d, want volperm 6 6 3 1 1",
			ts.Name, ts.Tests, len(ts.Cases), ts.Skipped, ts.Failures, doc.Errors)
	}
	byName := map[string]junitCase{}
	for _, c := range ts.Cases {
		byName[c.Name] = c
	}
	tests := []struct {
		name, failure, errorType, skipped string
	}{
		{name: "[emptydir] mode nil on the default medium [target=fake]"},
		{name: "[emptydir] mode 0750 on medium Memory [target=fake]", failure: `volume "data" path ".": expected dir 0750 0:0`},
		{name: "[hostpath] Socket on a file [target=fake]", skipped: "skipped - needs root: mounts tmpfs"},
		{name: "[fsgroup] walk panics [target=fake]", errorType: "panicked"},
	}
	for _, tt := range tests {
		c, ok := byName[tt.name]
		if !ok {
			t.Errorf("no testcase named %q in %v", tt.name, keys(byName))
			continue
		}
		switch {
		case tt.failure != "":
			if c.Failure == nil || !strings.HasPrefix(c.Failure.Message, tt.failure) || c.Failure.Body == "" {
				t.Errorf("%s: failure %+v, want message starting %q and a description", tt.name, c.Failure, tt.failure)
			}
		case tt.errorType != "":
			if c.Error == nil || c.Error.Type != tt.errorType || c.Error.Message == "" {
				t.Errorf("%s: error %+v, want type %s with a message", tt.name, c.Error, tt.errorType)
			}
		case tt.skipped != "":
			if c.Skipped == nil || c.Skipped.Message != tt.skipped {
				t.Errorf("%s: skipped %+v, want message %q", tt.name, c.Skipped, tt.skipped)
			}
		default:
			if c.Failure != nil || c.Error != nil || c.Skipped != nil {
				t.Errorf("%s: passed spec carries failure %+v error %+v skipped %+v", tt.name, c.Failure, c.Error, c.Skipped)
			}
		}
	}
}

func TestLogLine(t *testing.T) {
	r := sampleReport()
	tests := []struct {
		spec types.SpecReport
		want string
	}{
		{r.SpecReports[0], "PASS       0.012s [emptydir] mode nil on the default medium [target=fake]"},
		{r.SpecReports[1], `FAIL       0.012s [emptydir] mode 0750 on medium Memory [target=fake]: volume "data" path ".": expected dir 0750 0:0, observed dir 1777 0:0`},
		{r.SpecReports[2], "SKIP       0.012s [hostpath] Socket on a file [target=fake]: needs root: mounts tmpfs"},
		{r.SpecReports[4], "FAIL(panicked)   0.012s [fsgroup] walk panics [target=fake]: Test Panicked: index out of range"},
		{r.SpecReports[5], ""},
		{r.SpecReports[6], ""},
	}
	for _, tt := range tests {
		if got := LogLine(tt.spec); got != tt.want {
			t.Errorf("LogLine(%s)\n got %q\nwant %q", tt.spec.FullText(), got, tt.want)
		}
	}
}

func TestVersions(t *testing.T) {
	api := &debug.Module{Path: "k8s.io/api", Version: "v0.37.2"}
	tests := []struct {
		name string
		bi   *debug.BuildInfo
		want Versions
	}{
		{"no build info", nil, Versions{Volperm: volperm.Version + "+unstamped", KubernetesAPI: "unknown"}},
		{"released module", &debug.BuildInfo{Main: debug.Module{Version: volperm.Version}, Deps: []*debug.Module{api}},
			Versions{Volperm: volperm.Version, KubernetesAPI: "v0.37.2"}},
		{"checkout with changes", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Deps: []*debug.Module{api},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "d16f527aa0123456789"}, {Key: "vcs.modified", Value: "true"}}},
			Versions{Volperm: volperm.Version + "+d16f527aa012.dirty", KubernetesAPI: "v0.37.2"}},
		{"replaced k8s.io/api", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
			Deps: []*debug.Module{{Path: "k8s.io/api", Version: "v0.37.2", Replace: &debug.Module{Path: "../api", Version: ""}}}},
			Versions{Volperm: volperm.Version + "+unstamped", KubernetesAPI: "../api"}},
	}
	for _, tt := range tests {
		tt.want.Go, tt.want.Kernel = "go1.26", "6.1"
		if got := versionsFrom(tt.bi, "go1.26", "6.1"); got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
	if k := CurrentVersions().Kernel; k == "" || k == "unknown" {
		t.Errorf("kernel release %q: uname failed", k)
	}
}

func equalJSON(t *testing.T, a, b any) bool {
	t.Helper()
	x, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(x) == string(y)
}

func keys(m map[string]junitCase) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestTimings: the cases labelled timed that ran are listed with their spec time and, when the
// suite recorded it, the target's observation time, in the JSON, the Markdown and a log line;
// a timed case not run is not timed.
func TestTimings(t *testing.T) {
	timed := func(name string, state types.SpecState, observe any) types.SpecReport {
		sr := spec("fsgroup", "conformance", name, state, "")
		sr.LeafNodeLabels = append(sr.LeafNodeLabels, LabelTimed)
		sr.RunTime = 250 * time.Millisecond
		if observe != nil {
			sr.ReportEntries = types.ReportEntries{{Name: ObserveTimeEntry, Value: types.WrapEntryValue(observe)}}
		}
		return sr
	}
	fromJSON := timed("read back", types.SpecStatePassed, nil)
	fromJSON.ReportEntries = types.ReportEntries{{Name: ObserveTimeEntry, Value: types.ReportEntryValue{AsJSON: "0.5"}}}
	r := types.Report{SuiteSucceeded: true, SpecReports: []types.SpecReport{
		spec("fsgroup", "conformance", "untimed", types.SpecStatePassed, ""),
		timed("walk of 2000 files", types.SpecStatePassed, 1.25),
		timed("batched elsewhere", types.SpecStatePassed, nil),
		timed("cannot run here", types.SpecStateSkipped, nil),
		fromJSON,
	}}
	r.SpecReports[3].Failure.Message = "needs root"
	s := Build(r, Options{})
	one, half := 1.25, 0.5
	want := []Timing{
		{Name: "[fsgroup] walk of 2000 files [target=fake]", State: "passed", SpecSeconds: 0.25, ObserveSeconds: &one},
		{Name: "[fsgroup] batched elsewhere [target=fake]", State: "passed", SpecSeconds: 0.25},
		{Name: "[fsgroup] read back [target=fake]", State: "passed", SpecSeconds: 0.25, ObserveSeconds: &half},
	}
	if !equalJSON(t, s.Timings, want) {
		b, _ := json.Marshal(s.Timings)
		t.Fatalf("timings %s, want the three timed cases that ran", b)
	}
	md := string(s.Markdown())
	for _, w := range []string{"## Timings (3, reported, not asserted)", "| `[fsgroup] walk of 2000 files [target=fake]` | passed | 1.250s | 0.250s |", "not measured by this target"} {
		if !strings.Contains(md, w) {
			t.Errorf("summary.md lacks %q:\n%s", w, md)
		}
	}
	if got, want := s.Timings[0].TimingLine(), "TIMED    observed 1.250s, spec 0.250s: [fsgroup] walk of 2000 files [target=fake] (passed)"; got != want {
		t.Errorf("log line %q, want %q", got, want)
	}
	if strings.Contains(string(Build(sampleReport(), Options{}).Markdown()), "Timings") {
		t.Error("a run without timed cases has a Timings section")
	}
}

// TestEntriesOverLabelsAndText: a spec's area and profile are its CaseEntry, whatever order its
// labels are in (a label naming another area first), and a failure's message is its
// DifferenceEntry, however the failure text opens; also read back from JSON.
func TestEntriesOverLabelsAndText(t *testing.T) {
	sr := spec("hostpath", "alpha", "labelled in another order", types.SpecStateFailed, "target fake: wrapped failure\nvolume ...")
	sr.ReportEntries = types.ReportEntries{
		{Name: CaseEntry, Value: types.WrapEntryValue(CaseFacts{Area: "emptydir", Profile: "conformance"})},
		{Name: DifferenceEntry, Value: types.WrapEntryValue(`volume "data" path ".": expected dir 0750 0:0, observed dir 0777 0:0`)},
	}
	fromJSON := spec("hostpath", "alpha", "read back", types.SpecStatePassed, "")
	fromJSON.ReportEntries = types.ReportEntries{{Name: CaseEntry, Value: types.ReportEntryValue{AsJSON: `{"area":"skew","profile":"proposal"}`}}}
	s := Build(types.Report{SpecReports: []types.SpecReport{sr, fromJSON}}, Options{})
	if len(s.Failures) != 1 || s.Failures[0].Area != "emptydir" || s.Failures[0].Profile != "conformance" {
		t.Fatalf("failures %+v: want the area and profile of the CaseEntry", s.Failures)
	}
	if want := `volume "data" path ".": expected dir 0750 0:0, observed dir 0777 0:0`; s.Failures[0].Message != want {
		t.Errorf("message %q, want the DifferenceEntry %q", s.Failures[0].Message, want)
	}
	var areas []string
	for _, g := range s.Areas {
		areas = append(areas, g.Name)
	}
	if strings.Join(areas, ",") != "emptydir,skew" {
		t.Errorf("areas %q, want emptydir and skew from the entries", areas)
	}
}

// TestReleaseMatrix: the summary counts the cases per apiserver release, kubelet release and
// gates (newest first), known differences apart, and summary.md shows the table once the run
// has two pairs of releases.
func TestReleaseMatrix(t *testing.T) {
	withFacts := func(name string, state types.SpecState, f CaseFacts, known string) types.SpecReport {
		sr := spec("skew", "alpha", name, state, "x")
		sr.ReportEntries = types.ReportEntries{{Name: CaseEntry, Value: types.WrapEntryValue(f)}}
		if known != "" {
			sr.ReportEntries = append(sr.ReportEntries, types.ReportEntry{Name: KnownDifferenceEntry, Value: types.WrapEntryValue(known)})
		}
		return sr
	}
	on := GatesWords(framework.Gates{APIServer: map[string]bool{"EmptyDirVolumeMode": true}, Kubelet: map[string]bool{"EmptyDirVolumeMode": false}})
	if on != "apiserver EmptyDirVolumeMode=true, kubelet EmptyDirVolumeMode=false" {
		t.Errorf("GatesWords: %q", on)
	}
	newest := CaseFacts{Area: "skew", Profile: "alpha", APIServerRelease: "v1.37", KubeletRelease: "v1.37", Gates: on}
	old := CaseFacts{Area: "skew", Profile: "alpha", APIServerRelease: "v1.37", KubeletRelease: "v1.34", Gates: "defaults"}
	s := Build(types.Report{SpecReports: []types.SpecReport{
		withFacts("a", types.SpecStatePassed, old, ""),
		withFacts("b", types.SpecStateFailed, newest, "upstream v1.37 chmods before mounting tmpfs"),
		withFacts("c", types.SpecStateFailed, newest, ""),
		withFacts("d", types.SpecStateSkipped, newest, ""),
	}}, Options{})
	want := []ReleaseCell{
		{APIServer: "v1.37", Kubelet: "v1.37", Gates: on, Counts: Counts{Total: 3, Failed: 2, Skipped: 1}, KnownDifferences: 1},
		{APIServer: "v1.37", Kubelet: "v1.34", Gates: "defaults", Counts: Counts{Total: 1, Passed: 1}},
	}
	if len(s.Releases) != len(want) {
		t.Fatalf("releases %+v, want %+v", s.Releases, want)
	}
	for i := range want {
		if s.Releases[i] != want[i] {
			t.Errorf("releases[%d] = %+v, want %+v", i, s.Releases[i], want[i])
		}
	}
	md := string(s.Markdown())
	for _, row := range []string{"## Release matrix", "| v1.37 | v1.37 | " + on + " | 0 | 1 | 1 | 1 | 3 |", "| v1.37 | v1.34 | defaults | 1 | 0 | 0 | 0 | 1 |"} {
		if !strings.Contains(md, row) {
			t.Errorf("summary.md lacks %q:\n%s", row, md)
		}
	}
}

// A case of a release cell belongs to the pools of that kubelet release only (a release
// matrix's cells are pools of different kubelets); an unknown release belongs everywhere.
func TestSameKubelet(t *testing.T) {
	for _, tc := range []struct {
		cell, pool string
		want       bool
	}{{"v1.37", "v1.37.1", true}, {"v1.36", "v1.37.1", false}, {"v1.36", "v1.36.3", true}, {"", "v1.37.1", true}, {"v1.37", "", true}} {
		if got := SameKubelet(tc.cell, tc.pool); got != tc.want {
			t.Errorf("SameKubelet(%q, %q) = %v, want %v", tc.cell, tc.pool, got, tc.want)
		}
	}
}

// TestNotApplicableCounted: a case not run because it is a cell of a release the target is not
// (CaseFacts.NotApplicable) is counted apart among the cases not run, so that a reader tells it
// from a case the target could not run here (issue 33).
func TestNotApplicableCounted(t *testing.T) {
	na := spec("skew", "conformance", "a v1.34 kubelet cell", types.SpecStateSkipped, "needs kubelet v1.34")
	na.ReportEntries = types.ReportEntries{{Name: CaseEntry, Value: types.WrapEntryValue(CaseFacts{Area: "skew", Profile: "conformance", NotApplicable: "needs kubelet v1.34"})}}
	gap := spec("hostpath", "conformance", "needs root", types.SpecStateSkipped, "needs root")
	ok := spec("hostpath", "conformance", "passes", types.SpecStatePassed, "")
	s := Build(types.Report{SpecReports: []types.SpecReport{na, gap, ok}}, Options{})
	if s.Totals.Skipped != 2 || s.Totals.NotApplicable != 1 || s.Totals.CouldNotRun() != 1 {
		t.Errorf("totals %+v: want 2 not run, 1 of them not applicable", s.Totals)
	}
	if got, want := s.Totals.String(), "3 cases: 1 passed, 0 failed, 2 not run (1 of them not applicable: releases or kinds of node the target is not, or features not claimed)"; got != want {
		t.Errorf("headline %q, want %q", got, want)
	}
}
