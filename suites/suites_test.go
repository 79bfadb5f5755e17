package suites

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"
	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/caseroot/caseroottest"
	"github.com/volperm/volperm/framework/catalogue"
	"github.com/volperm/volperm/framework/certify"
	"github.com/volperm/volperm/framework/oracle"
	"github.com/volperm/volperm/framework/probe"
	"github.com/volperm/volperm/framework/report"
	_ "github.com/volperm/volperm/framework/targets/reference"
)

func TestMain(m *testing.M) {
	// The reference target runs its probes by re-executing this test binary.
	probe.MaybeRunChild()
	os.Exit(m.Run())
}

// TestCatalogue runs the whole catalogue against the reference target: every case passes, or
// (not as root) is reported as not run with its reason; with CI=true every case must run.
func TestCatalogue(t *testing.T) {
	target, err := framework.NewTarget("reference", framework.TargetOptions{WorkDir: caseroottest.TempDir(t)})
	if err != nil {
		t.Fatal(err)
	}
	cases := catalogue.All()
	if len(cases) == 0 {
		t.Fatal("the catalogue is empty")
	}
	Run(t, &Config{Target: target, Cases: cases, Require: RequireFromEnv(), ReportDir: t.TempDir()})
}

// Child processes of TestSpecOutcomes: a process runs one Ginkgo suite only.
const (
	childDirEnv     = "VOLPERM_SUITES_TEST_REPORT_DIR"
	childRequireEnv = "VOLPERM_SUITES_TEST_REQUIRE"
	childPoolsEnv   = "VOLPERM_SUITES_TEST_POOLS"
	childKnownEnv   = "VOLPERM_SUITES_TEST_KNOWN"
	childBatchEnv   = "VOLPERM_SUITES_TEST_BATCH"
	childSeedEnv    = "VOLPERM_SUITES_TEST_SEED"
)

// fakeTarget answers by case name: "passes" observes what the oracle expects, "differs"
// observes an admission the oracle refuses, "errs" fails as a target, "unsupported" cannot run.
type fakeTarget struct{ closedMarker string }

func (fakeTarget) Info() framework.TargetInfo { return framework.TargetInfo{Name: "fake"} }

func (fakeTarget) Supports(c *framework.Case) (bool, string) {
	if c.Name == "unsupported" {
		return false, "needs a capability the fake lacks"
	}
	return true, ""
}

func (fakeTarget) Observe(_ context.Context, c *framework.Case) (*framework.Observation, error) {
	o := oracle.Expect(c)
	o.Source = "fake"
	switch c.Name {
	case "differs":
		o.Admission.Allowed = !o.Admission.Allowed
	case "errs":
		return nil, errors.New("agent crashed")
	}
	return o, nil
}

func (f fakeTarget) Close() error { return os.WriteFile(f.closedMarker, nil, 0o644) }

// KnownDifference: the fake's documented difference is its admission's verdict on the cases
// "known" (which differs in that only) and "known-and-more" (which also warns).
func (fakeTarget) KnownDifference(c *framework.Case) (framework.KnownDifference, bool) {
	if c.Name != "known" && c.Name != "known-and-more" {
		return framework.KnownDifference{}, false
	}
	return framework.KnownDifference{Why: "the fake admits what it should refuse", Makes: func(line string) bool {
		return strings.HasPrefix(line, "admission.allowed:")
	}}, true
}

// knownTarget is fakeTarget observing the two cases of its known difference.
type knownTarget struct{ fakeTarget }

func (k knownTarget) Observe(ctx context.Context, c *framework.Case) (*framework.Observation, error) {
	o, err := k.fakeTarget.Observe(ctx, c)
	if err == nil && (c.Name == "known" || c.Name == "known-and-more") {
		o.Admission.Allowed = !o.Admission.Allowed
		if c.Name == "known-and-more" {
			o.Admission.Warnings = append(o.Admission.Warnings, "a warning the spec does not give")
		}
	}
	return o, err
}

func fakeCase(name string, area framework.Area, profile framework.Profile) *framework.Case {
	c := &framework.Case{
		Name: name, Area: area, Profile: profile, AdmissionOnly: true,
		Pod: &corev1.Pod{Spec: corev1.PodSpec{Volumes: []corev1.Volume{
			{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		}}},
	}
	c.Complete()
	return c
}

// pooledTarget is fakeTarget on two node pools (framework.PoolRouter): both pools observe as
// fakeTarget does, except that pool B also fails "errs" and alone differs on "pool-b-differs".
type pooledTarget struct{ fakeTarget }

func (p pooledTarget) RoutePools(*framework.Case) []framework.PoolRoute {
	return []framework.PoolRoute{
		{PoolNode: framework.PoolNode{Pool: "pool A", Kubelet: "v1.37.1", Node: "a1"}, Target: poolTarget{p.fakeTarget, 0}},
		{PoolNode: framework.PoolNode{Pool: "pool B", Kubelet: "v1.37.1", Node: "b1"}, Target: poolTarget{p.fakeTarget, 1}},
	}
}

// poolTarget is pool i of pooledTarget.
type poolTarget struct {
	fakeTarget
	i int
}

func (p poolTarget) Observe(ctx context.Context, c *framework.Case) (*framework.Observation, error) {
	if p.i == 0 && c.Name == "errs" {
		return p.fakeTarget.Observe(ctx, fakeCase("passes", c.Area, c.Profile))
	}
	obs, err := p.fakeTarget.Observe(ctx, c)
	if p.i == 1 && c.Name == "pool-b-differs" {
		obs.Admission.Allowed = !obs.Admission.Allowed
	}
	return obs, err
}

// runFakeSuite is the child's side of TestSpecOutcomes and TestPoolOutcomes.
func runFakeSuite(t *testing.T, dir string) {
	cfg := &Config{
		Target: fakeTarget{closedMarker: filepath.Join(dir, "closed")},
		Cases: []*framework.Case{
			fakeCase("passes", framework.AreaEmptyDir, framework.ProfileConformance),
			fakeCase("differs", framework.AreaEmptyDir, framework.ProfileAlpha),
			fakeCase("errs", framework.AreaHostPath, framework.ProfileConformance),
			fakeCase("unsupported", framework.AreaSkew, framework.ProfileAlpha),
		},
		Require:   os.Getenv(childRequireEnv) == "1",
		ReportDir: dir,
	}
	if os.Getenv(childKnownEnv) == "1" {
		cfg.Target = knownTarget{fakeTarget{closedMarker: filepath.Join(dir, "closed")}}
		cfg.Cases = []*framework.Case{fakeCase("known", framework.AreaEmptyDir, framework.ProfileConformance),
			fakeCase("known-and-more", framework.AreaEmptyDir, framework.ProfileConformance)}
	}
	if os.Getenv(childPoolsEnv) == "1" {
		cfg.Target = pooledTarget{fakeTarget{closedMarker: filepath.Join(dir, "closed")}}
		cfg.Cases = append(cfg.Cases, fakeCase("pool-b-differs", framework.AreaHostPath, framework.ProfileConformance))
	}
	if b := os.Getenv(childBatchEnv); b != "" {
		cfg.Target = &batchingTarget{fakeTarget: fakeTarget{closedMarker: filepath.Join(dir, "closed")}, run: b == "run", log: filepath.Join(dir, "prepares")}
	}
	reporterConfig := types.NewDefaultReporterConfig()
	reporterConfig.Succinct = true
	suiteConfig := types.NewDefaultSuiteConfig()
	if seed := os.Getenv(childSeedEnv); seed != "" {
		if _, err := fmt.Sscan(seed, &suiteConfig.RandomSeed); err != nil {
			t.Fatal(err)
		}
	}
	// The suite fails on purpose; the parent reads the reports.
	if _, err := RunSpecs(&failRecorder{}, cfg, suiteConfig, reporterConfig); err != nil {
		t.Fatal(err)
	}
}

// batchingTarget is fakeTarget as a Batcher (a RunBatcher when run is set) that appends the
// names of the cases of each Prepare, as one line, to the file log.
type batchingTarget struct {
	fakeTarget
	run bool
	log string
}

func (b *batchingTarget) Prepare(_ context.Context, cases []*framework.Case) error {
	var names []string
	for _, c := range cases {
		names = append(names, c.Name)
	}
	f, err := os.OpenFile(b.log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = fmt.Fprintln(f, strings.Join(names, " "))
	return err
}

func (b *batchingTarget) BatchesRun() bool { return b.run }

// TestPrepareGroups: a Batcher is given each area's cases before the area's specs, a
// RunBatcher the run's every case once, before the first area's specs, whatever the order
// Ginkgo runs the areas in (framework.PrepareGroups; the seeds give other orders).
func TestPrepareGroups(t *testing.T) {
	if os.Getenv(childDirEnv) != "" {
		runFakeSuite(t, os.Getenv(childDirEnv))
		return
	}
	for _, tt := range []struct {
		batch string
		want  []string // the cases of each Prepare, in any order of Prepares
	}{
		{"area", []string{"errs", "passes differs", "unsupported"}},
		{"run", []string{"passes differs errs unsupported"}},
	} {
		t.Run(tt.batch, func(t *testing.T) {
			orders := map[string]bool{}
			for seed := range 6 {
				dir := t.TempDir()
				cmd := exec.Command(os.Args[0], "-test.run=^TestPrepareGroups$")
				cmd.Env = append(os.Environ(), childDirEnv+"="+dir, childBatchEnv+"="+tt.batch, fmt.Sprintf("%s=%d", childSeedEnv, seed+1))
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("child suite: %v\n%s", err, out)
				}
				b, err := os.ReadFile(filepath.Join(dir, "prepares"))
				if err != nil {
					t.Fatal(err)
				}
				orders[string(b)] = true
				if got := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n"); !slices.Equal(slices.Sorted(slices.Values(got)), tt.want) {
					t.Errorf("seed %d: Prepare got %q, want %q", seed+1, got, tt.want)
				}
				if s := readSummary(t, dir); s.Totals.Total != 4 {
					t.Errorf("seed %d: %d specs, want 4", seed+1, s.Totals.Total)
				}
			}
			if tt.batch == "area" && len(orders) < 2 {
				t.Errorf("the seeds gave one order of areas (%q): the test shows nothing of the order", slices.Collect(maps.Keys(orders)))
			}
		})
	}
}

type failRecorder struct{ failed bool }

func (r *failRecorder) Fail() { r.failed = true }

// TestSpecOutcomes runs a fake target's suite in a child process (Ginkgo runs one suite per
// process) and checks what each kind of outcome becomes in the reports.
func TestSpecOutcomes(t *testing.T) {
	if dir := os.Getenv(childDirEnv); dir != "" {
		runFakeSuite(t, dir)
		return
	}
	tests := []struct {
		name     string
		require  string
		want     report.Counts
		failures map[string]string // spec name -> first line
		notRun   map[string]string // spec name -> reason
	}{
		{
			name: "cases that cannot run are skipped", require: "0",
			want: report.Counts{Total: 4, Passed: 1, Failed: 2, Skipped: 1},
			failures: map[string]string{
				"[emptydir] differs [target=fake]": "admission.allowed: expected true, observed false",
				"[hostpath] errs [target=fake]":    `target fake failed on case "errs": agent crashed`,
			},
			notRun: map[string]string{"[skew] unsupported [target=fake]": "needs a capability the fake lacks"},
		},
		{
			name: "required cases that cannot run fail", require: "1",
			want: report.Counts{Total: 4, Passed: 1, Failed: 3},
			failures: map[string]string{
				"[emptydir] differs [target=fake]": "admission.allowed: expected true, observed false",
				"[hostpath] errs [target=fake]":    `target fake failed on case "errs": agent crashed`,
				"[skew] unsupported [target=fake]": "cannot run on target fake: needs a capability the fake lacks (this run requires every case: CI=true or VOLPERM_REQUIRE names cases)",
			},
			notRun: map[string]string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^TestSpecOutcomes$")
			cmd.Env = append(os.Environ(), childDirEnv+"="+dir, childRequireEnv+"="+tt.require)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("child suite: %v\n%s", err, out)
			}
			s := readSummary(t, dir)
			if s.Totals != tt.want || s.Result != report.ResultFailed {
				t.Errorf("totals %+v result %s, want %+v failed", s.Totals, s.Result, tt.want)
			}
			if got := results(s.Failures); !equalMaps(got, tt.failures) {
				t.Errorf("failures %q, want %q", got, tt.failures)
			}
			if got := results(s.NotRun); !equalMaps(got, tt.notRun) {
				t.Errorf("not run %q, want %q", got, tt.notRun)
			}
			if _, err := os.Stat(filepath.Join(dir, "closed")); err != nil {
				t.Errorf("the target was not closed: %v", err)
			}
			checkJUnit(t, filepath.Join(dir, JUnitFile))
			checkRunLog(t, filepath.Join(dir, RunLog), s)
			md, err := os.ReadFile(filepath.Join(dir, SummaryMarkdown))
			if err != nil || !strings.Contains(string(md), "# volperm report: FAILED on target fake") {
				t.Errorf("summary.md: %v\n%s", err, md)
			}
			// The terminal shows every difference and the rules, not the two Observations
			// (issue 52); the JUnit file has them in full.
			if !strings.Contains(string(out), "difference(s) between the oracle and target fake") || !strings.Contains(string(out), "rules (docs/spec.md): [") {
				t.Errorf("the terminal output lacks the differences or the rules:\n%s", out)
			}
			if strings.Contains(string(out), `"source": "fake"`) {
				t.Errorf("the terminal output has the Observations in full:\n%s", out)
			}
			if j, err := os.ReadFile(filepath.Join(dir, JUnitFile)); err != nil || !strings.Contains(string(j), `name="observed"`) || !strings.Contains(string(j), "fake") {
				t.Errorf("junit.xml lacks the observed Observation: %v", err)
			}
		})
	}
}

// TestKnownDifferenceOutcomes: a failure is the target's known difference only when that
// difference makes every line of it; a case the difference matches that differs in more fails
// as any case does, the lines it does not make named.
func TestKnownDifferenceOutcomes(t *testing.T) {
	if dir := os.Getenv(childDirEnv); dir != "" {
		runFakeSuite(t, dir)
		return
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKnownDifferenceOutcomes$")
	cmd.Env = append(os.Environ(), childDirEnv+"="+dir, childKnownEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child suite: %v\n%s", err, out)
	}
	s := readSummary(t, dir)
	if s.Totals != (report.Counts{Total: 2, Failed: 2}) {
		t.Errorf("totals %+v, want 2 failed", s.Totals)
	}
	known := map[string]string{}
	for _, f := range s.Failures {
		known[f.Name] = f.KnownDifference
	}
	want := map[string]string{"[emptydir] known [target=fake]": "the fake admits what it should refuse", "[emptydir] known-and-more [target=fake]": ""}
	if !equalMaps(known, want) {
		t.Errorf("known differences of the failures %q, want %q", known, want)
	}
	if !regexp.MustCompile(`not the known difference of target fake \(the fake admits what it should refuse\), which does not make:\s*\n\s*admission\.warnings:`).Match(out) {
		t.Errorf("the failure of known-and-more does not name the line the known difference does not make:\n%s", out)
	}
}

// TestPoolOutcomes: on a target observing each case on two node pools, each pool's Observation
// is compared with the oracle: pools that agree are one Observation (a difference fails as
// usual), a pool's error fails the case naming its node, pools that disagree fail it naming
// what each saw; summary.json and summary.md count every case per pool, the JUnit file carries
// the verdicts, and the ConformanceReport built from it has a result per pool.
func TestPoolOutcomes(t *testing.T) {
	if os.Getenv(childDirEnv) != "" {
		t.Skip("the child runs TestSpecOutcomes")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestSpecOutcomes$")
	cmd.Env = append(os.Environ(), childDirEnv+"="+dir, childRequireEnv+"=0", childPoolsEnv+"=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child suite: %v\n%s", err, out)
	}
	s := readSummary(t, dir)
	if want := (report.Counts{Total: 5, Passed: 1, Failed: 3, Skipped: 1}); s.Totals != want {
		t.Errorf("totals %+v, want %+v", s.Totals, want)
	}
	wantFailures := map[string]string{
		"[emptydir] differs [target=fake]":        "admission.allowed: expected true, observed false",
		"[hostpath] errs [target=fake]":           `target fake failed on case "errs": node b1 (pool 2): agent crashed`,
		"[hostpath] pool-b-differs [target=fake]": `target fake failed on case "pool-b-differs": node pools disagree: pool 1 (pool A) on node a1: as the oracle expects | pool 2 (pool B) on node b1: admission.allowed: expected true, observed false`,
	}
	if got := results(s.Failures); !equalMaps(got, wantFailures) {
		t.Errorf("failures %q\nwant %q", got, wantFailures)
	}
	want := []report.PoolGroup{
		{Name: "pool A", Nodes: []string{"a1"}, Counts: report.Counts{Total: 5, Passed: 3, Failed: 1, Skipped: 1},
			FailedCases: []string{"[emptydir] differs [target=fake]"}},
		{Name: "pool B", Nodes: []string{"b1"}, Counts: report.Counts{Total: 5, Passed: 1, Failed: 3, Skipped: 1}},
	}
	if len(s.Pools) != 2 || s.Pools[0].Counts != want[0].Counts || !slices.Equal(s.Pools[0].FailedCases, want[0].FailedCases) ||
		s.Pools[1].Counts != want[1].Counts || len(s.Pools[1].FailedCases) != 3 || !slices.Equal(s.Pools[0].Nodes, want[0].Nodes) {
		t.Errorf("pools %+v\nwant %+v", s.Pools, want)
	}
	md, err := os.ReadFile(filepath.Join(dir, SummaryMarkdown))
	if err != nil || !strings.Contains(string(md), "## By pool") || !strings.Contains(string(md), "| pool B | b1 | 1 | 3 | 1 | 5 |") {
		t.Errorf("summary.md lacks the pool table: %v\n%s", err, md)
	}
	outcomes, err := certify.ReadJUnit(filepath.Join(dir, JUnitFile))
	if err != nil {
		t.Fatal(err)
	}
	r := certify.Build(outcomes, certify.Options{})
	var got []string
	for _, p := range r.Pools {
		got = append(got, fmt.Sprintf("%s %s %v %s", p.Name, p.Kubelet, p.Nodes, p.Result))
	}
	if wantPools := []string{"pool A v1.37.1 [a1] failure", "pool B v1.37.1 [b1] failure"}; !slices.Equal(got, wantPools) {
		t.Errorf("ConformanceReport pools %q, want %q", got, wantPools)
	}
}

func readSummary(t *testing.T, dir string) *report.Summary {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, SummaryJSON))
	if err != nil {
		t.Fatal(err)
	}
	var s report.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("summary.json: %v", err)
	}
	return &s
}

func results(rs []report.CaseResult) map[string]string {
	m := map[string]string{}
	for _, r := range rs {
		m[r.Name] = r.Message
	}
	return m
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func checkJUnit(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Suites []struct {
			Cases []struct {
				Name string `xml:"name,attr"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("junit.xml: %v", err)
	}
	var names []string
	for _, c := range doc.Suites[0].Cases {
		names = append(names, c.Name)
	}
	// Ginkgo shuffles the top-level containers; the testcase names read on their own.
	want := []string{"[emptydir] passes [target=fake]", "[emptydir] differs [target=fake]", "[hostpath] errs [target=fake]", "[skew] unsupported [target=fake]"}
	for _, w := range want {
		if !strings.Contains(strings.Join(names, "\n"), w) {
			t.Errorf("junit.xml testcases %q lack %q", names, w)
		}
	}
}

func checkRunLog(t *testing.T, path string, s *report.Summary) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 6 || lines[0] != "volperm run on target fake: 4 cases" || lines[5] != "FAILED: "+s.Totals.String() {
		t.Errorf("run.log: want a header, one line per case and the counts:\n%s", b)
	}
}

func TestSelect(t *testing.T) {
	cases := []*framework.Case{
		fakeCase("mode 0750", framework.AreaEmptyDir, framework.ProfileAlpha),
		fakeCase("mode nil", framework.AreaEmptyDir, framework.ProfileConformance),
		fakeCase("socket on a file", framework.AreaHostPath, framework.ProfileConformance),
	}
	cases[2].Labels = []string{"sweep"}
	tests := []struct {
		labelFilter, focus, skip string
		want                     []string
		err                      string
	}{
		{"", "", "", []string{"mode 0750", "mode nil", "socket on a file"}, ""},
		{"emptydir && !alpha", "", "", []string{"mode nil"}, ""},
		{"sweep", "", "", []string{"socket on a file"}, ""},
		{"", `^\[emptydir\] .*\[target=reference\]$`, "", []string{"mode 0750", "mode nil"}, ""},
		{"conformance", "socket", "", []string{"socket on a file"}, ""},
		{"", "", "mode", []string{"socket on a file"}, ""},
		{"", "mode", "0750", []string{"mode nil"}, ""},
		{"emptydir &&", "", "", nil, `--label-filter "emptydir &&": `},
		{"", "mode(", "", nil, `--focus "mode(": error parsing regexp`},
		{"", "", "[", nil, `--skip "[": error parsing regexp`},
	}
	for _, tt := range tests {
		got, err := Select(cases, "reference", tt.labelFilter, tt.focus, tt.skip)
		if tt.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tt.err) || strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), "{{") {
				t.Errorf("Select(%q, %q) error %v, want one line starting %q", tt.labelFilter, tt.focus, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Select(%q, %q): %v", tt.labelFilter, tt.focus, err)
			continue
		}
		var names []string
		for _, c := range got {
			names = append(names, c.Name)
		}
		if strings.Join(names, "|") != strings.Join(tt.want, "|") {
			t.Errorf("Select(%q, %q) = %q, want %q", tt.labelFilter, tt.focus, names, tt.want)
		}
	}
}

func TestCheckLabels(t *testing.T) {
	tests := []struct {
		labels []string
		ok     bool
	}{
		{nil, true},
		{[]string{"sweep", "kep-5502", "gate:on"}, true},
		{[]string{"a/b"}, false},
		{[]string{" "}, false},
		{[]string{"x,y"}, false},
	}
	for _, tt := range tests {
		c := fakeCase("c", framework.AreaEmptyDir, framework.ProfileAlpha)
		c.Labels = tt.labels
		if err := CheckLabels(c); (err == nil) != tt.ok {
			t.Errorf("CheckLabels(%q) = %v, want ok=%v", tt.labels, err, tt.ok)
		}
	}
}

// benchmarkSample is a fixed sample of the catalogue the target can run here: every n-th case.
func benchmarkSample(b *testing.B, target framework.Target, size int) []*framework.Case {
	all := catalogue.All()
	var sample []*framework.Case
	step := max(1, len(all)/size)
	for i := 0; i < len(all) && len(sample) < size; i += step {
		if ok, _ := target.Supports(all[i]); ok {
			sample = append(sample, all[i])
		}
	}
	if len(sample) == 0 {
		b.Skip("the reference target can run none of the sample here (not root?)")
	}
	return sample
}

// BenchmarkReferenceCases observes a fixed sample of 64 catalogue cases on the reference target.
func BenchmarkReferenceCases(b *testing.B) {
	target, err := framework.NewTarget("reference", framework.TargetOptions{WorkDir: caseroottest.TempDir(b)})
	if err != nil {
		b.Fatal(err)
	}
	defer target.Close()
	sample := benchmarkSample(b, target, 64)
	ctx := context.Background()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		c := sample[i%len(sample)]
		if _, err := target.Observe(ctx, c); err != nil {
			b.Fatalf("case %q: %v", c.Name, err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "cases/s")
}

// BenchmarkOracle computes the expected Observation of every catalogue case.
func BenchmarkOracle(b *testing.B) {
	all := catalogue.All()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		for _, c := range all {
			oracle.Expect(c)
		}
	}
	b.ReportMetric(float64(b.N*len(all))/time.Since(start).Seconds(), "cases/s")
}
