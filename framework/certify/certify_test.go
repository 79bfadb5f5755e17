package certify

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"
	"sigs.k8s.io/yaml"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/report"
)

const digest = "sha256:test"

// spec is one spec of a run: its facts as the suites record them.
func spec(name, profile string, state types.SpecState, features ...string) types.SpecReport {
	sr := types.SpecReport{
		ContainerHierarchyTexts: []string{"[atomicwriter]"},
		LeafNodeText:            name + " [target=reference]",
		LeafNodeType:            types.NodeTypeIt,
		State:                   state,
		RunTime:                 time.Millisecond,
	}
	switch state {
	case types.SpecStateFailed:
		sr.Failure = types.Failure{Message: "volume \"s\" path \"username\": expected uid 1001, observed uid 0"}
	case types.SpecStateSkipped:
		sr.Failure = types.Failure{Message: "this machine lacks root"}
	}
	sr.ReportEntries = types.ReportEntries{{Name: report.CaseEntry, Value: types.WrapEntryValue(report.CaseFacts{
		Area: "atomicwriter", Profile: profile, APIServerRelease: "v1.37", KubeletRelease: "v1.37", Gates: "defaults", Features: features})}}
	return sr
}

// handIn writes what volperm run writes for specs, with the claims, into a new directory.
func handIn(t *testing.T, claims []string, specs ...types.SpecReport) string {
	t.Helper()
	dir := t.TempDir()
	r := types.Report{SuiteDescription: "volperm", SuiteSucceeded: true, StartTime: time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC), SpecReports: specs}
	target := framework.TargetInfo{Name: "reference", Version: "v1.37"}
	s := report.Build(r, report.Options{Target: target, Selection: &report.Selection{Source: "catalogue"}})
	for _, err := range []error{
		report.WriteJUnit(r, filepath.Join(dir, "junit.xml")),
		s.WriteJSON(filepath.Join(dir, "summary.json")),
		s.WriteMarkdown(filepath.Join(dir, "summary.md")),
		os.WriteFile(filepath.Join(dir, "run.log"), []byte("volperm run\n"), 0o644),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	outcomes, err := ReadJUnit(filepath.Join(dir, "junit.xml"))
	if err != nil {
		t.Fatal(err)
	}
	rep := Build(outcomes, Options{Date: r.StartTime, Claims: claims, Target: target, VolpermVersion: s.Versions.Volperm,
		CatalogueDigest: digest, Source: "catalogue",
		Implementation: Implementation{Vendor: "Example Corp", Product: "Example Kubelet", Version: "1.0"}})
	if err := rep.Write(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// edit replaces old by new in dir's file, which must contain it.
func edit(t *testing.T, dir, file, old, new string) {
	t.Helper()
	p := filepath.Join(dir, file)
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), old) {
		t.Fatalf("%s lacks %q:\n%s", file, old, raw)
	}
	if err := os.WriteFile(p, []byte(strings.Replace(string(raw), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

func verify(t *testing.T, dir string) []string {
	t.Helper()
	problems, err := Verify(dir, digest)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	return problems
}

func wantProblems(t *testing.T, problems []string, want ...string) {
	t.Helper()
	if len(want) == 0 && len(problems) > 0 {
		t.Fatalf("problems, want none:\n%s", strings.Join(problems, "\n"))
	}
	for _, w := range want {
		found := false
		for _, p := range problems {
			found = found || strings.Contains(p, w)
		}
		if !found {
			t.Errorf("no problem says %q; got:\n%s", w, strings.Join(problems, "\n"))
		}
	}
}

// A clean run verifies; an unclaimed feature's failing case is listed as unclaimed, not as a
// failure; a claimed one's is required.
func TestBuildAndVerify(t *testing.T) {
	specs := []types.SpecReport{
		spec("secret volume", "conformance", types.SpecStatePassed),
		spec("secret volume with defaultUser 1001", "alpha", types.SpecStatePassed, framework.FeatureAtomicWriteVolumeUserFields),
		spec("secret volume with preservePermissions", "proposal", types.SpecStateFailed, framework.FeaturePreservePermissions),
	}
	dir := handIn(t, []string{framework.FeatureAtomicWriteVolumeUserFields}, specs...)
	wantProblems(t, verify(t, dir))
	outcomes, _ := ReadJUnit(filepath.Join(dir, "junit.xml"))
	r := Build(outcomes, Options{Claims: []string{framework.FeatureAtomicWriteVolumeUserFields}})
	if r.Result != ResultSuccess || len(r.Profiles) != 2 {
		t.Errorf("result %s, profiles %+v: want success over conformance and alpha (proposal's only case is unclaimed)", r.Result, r.Profiles)
	}
	for _, f := range r.Features {
		switch f.Name {
		case framework.FeaturePreservePermissions:
			if f.Result != ResultUnclaimed || f.Failed != 1 {
				t.Errorf("unclaimed feature %+v: want unclaimed, its failure counted apart", f)
			}
		case framework.FeatureAtomicWriteVolumeUserFields:
			if f.Result != ResultSuccess || !f.Claimed || f.Passed != 1 {
				t.Errorf("claimed feature %+v: want success with 1 case", f)
			}
		}
	}
	// Claiming the failing feature makes its case required: the report is a failure and the
	// verifier names the case.
	dir = handIn(t, []string{framework.FeaturePreservePermissions}, specs...)
	wantProblems(t, verify(t, dir), "profile proposal: 1 required case(s) failed: [atomicwriter] secret volume with preservePermissions")
	// Issue 33: a claimed feature none of whose cases ran (the run left its profile out) fails
	// the claim and the report.
	dir = handIn(t, []string{framework.FeatureEmptyDirVolumeMode}, specs...)
	wantProblems(t, verify(t, dir), "feature emptyDirVolumeMode is claimed, but the run had none of its cases")
	outcomes, _ = ReadJUnit(filepath.Join(dir, "junit.xml"))
	if r := Build(outcomes, Options{Claims: []string{framework.FeatureEmptyDirVolumeMode}}); r.Result != ResultFailure {
		t.Errorf("a claim without cases: result %s, want %s", r.Result, ResultFailure)
	}
}

// Tampered hand-ins: each is found, with a line that says what is wrong.
func TestVerifyTampered(t *testing.T) {
	specs := func() []types.SpecReport {
		return []types.SpecReport{
			spec("secret volume", "conformance", types.SpecStatePassed),
			spec("configMap volume", "conformance", types.SpecStatePassed),
			spec("secret volume with defaultUser 1001", "alpha", types.SpecStatePassed, framework.FeatureAtomicWriteVolumeUserFields),
		}
	}
	claims := []string{framework.FeatureAtomicWriteVolumeUserFields}
	for _, tc := range []struct {
		name   string
		tamper func(t *testing.T, dir string)
		digest string
		want   []string
	}{
		{"a file missing", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, "run.log")) }, "", []string{"run.log is missing"}},
		{"a passed case turned failed in junit.xml", func(t *testing.T, dir string) {
			edit(t, dir, "junit.xml", `configMap volume [target=reference]" classname="volperm" status="passed"`, `configMap volume [target=reference]" classname="volperm" status="failed"`)
			edit(t, dir, "junit.xml", `<testcase name="[atomicwriter] configMap volume [target=reference]"`, `<testcase name="[atomicwriter] configMap volume [target=reference]"`)
			raw, _ := os.ReadFile(filepath.Join(dir, "junit.xml"))
			s := string(raw)
			i := strings.Index(s, `configMap volume [target=reference]`)
			j := i + strings.Index(s[i:], "</testcase>")
			os.WriteFile(filepath.Join(dir, "junit.xml"), []byte(s[:j]+`<failure message="x" type="failed"></failure>`+s[j:]), 0o644)
		}, "", []string{"junit.xml and summary.json disagree on the failed cases", "result success, but junit.xml gives failure", "profile conformance: 1 required case(s) failed"}},
		{"the result raised by hand", func(t *testing.T, dir string) {
			edit(t, dir, File, "  passed: 2\n  result: success\n  total: 2", "  passed: 3\n  result: success\n  total: 3")
		}, "", []string{"profile conformance says success (3 passed, 0 failed, 0 not run of 3), junit.xml gives success (2 passed, 0 failed, 0 not run of 2)"}},
		{"another catalogue", nil, "sha256:other", []string{"catalogue digest sha256:test is not this volperm's (sha256:other)"}},
		{"a claim added by hand", func(t *testing.T, dir string) {
			edit(t, dir, File, "claims:\n- atomicWriteVolumeUserFields", "claims:\n- atomicWriteVolumeUserFields\n- flexVolumeAllowlist")
		}, "", []string{"feature flexVolumeAllowlist says unclaimed"}},
		{"an implementation without a vendor", func(t *testing.T, dir string) { edit(t, dir, File, "vendor: Example Corp", "vendor: \"\"") }, "",
			[]string{"the implementation needs a vendor, a product and a version"}},
		{"another target", func(t *testing.T, dir string) { edit(t, dir, File, "name: reference", "name: kind") }, "",
			[]string{"names target kind v1.37, summary.json reference v1.37"}},
		{"cases skipped by a regular expression", func(t *testing.T, dir string) {
			edit(t, dir, File, "source: catalogue", "skip: HugePages\n  source: catalogue")
		}, "",
			[]string{`the run left cases out (label filter "", focus "", skip "HugePages")`}},
		{"another release", func(t *testing.T, dir string) { edit(t, dir, File, "kubelet: v1.37", "kubelet: v1.34") }, "",
			[]string{"lists the releases [{v1.37 v1.34}], junit.xml's cases ran in [{v1.37 v1.37}]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := handIn(t, claims, specs()...)
			if tc.tamper != nil {
				tc.tamper(t, dir)
			}
			d := digest
			if tc.digest != "" {
				d = tc.digest
			}
			problems, err := Verify(dir, d)
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			wantProblems(t, problems, tc.want...)
		})
	}
}

// A required case that did not run is a problem; a report that does not parse is unreadable.
func TestVerifyNotRunAndUnreadable(t *testing.T) {
	dir := handIn(t, nil, spec("secret volume", "conformance", types.SpecStatePassed), spec("hostPath Socket", "conformance", types.SpecStateSkipped))
	wantProblems(t, verify(t, dir), "profile conformance: 1 required case(s) did not run: [atomicwriter] hostPath Socket")
	os.WriteFile(filepath.Join(dir, File), []byte("apiVersion: [unclosed"), 0o644)
	_, err := Verify(dir, digest)
	var u *UnreadableError
	if !errors.As(err, &u) {
		t.Fatalf("a report that does not parse: %v, want UnreadableError", err)
	}
}

// pooled is spec with each pool's verdict (report.PoolsEntry), as the suites record them for a
// target over node pools.
func pooled(sr types.SpecReport, verdicts ...report.PoolVerdict) types.SpecReport {
	sr.ReportEntries = append(sr.ReportEntries, types.ReportEntry{Name: report.PoolsEntry, Value: types.WrapEntryValue(verdicts)})
	return sr
}

// mutate rewrites dir's ConformanceReport through f.
func mutate(t *testing.T, dir string, f func(*Report)) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, File))
	if err != nil {
		t.Fatal(err)
	}
	var r Report
	if err := yaml.UnmarshalStrict(raw, &r); err != nil {
		t.Fatal(err)
	}
	f(&r)
	if err := r.Write(dir); err != nil {
		t.Fatal(err)
	}
}

// Cases run on two node pools: the report has a result per pool, as each pool judged its
// required cases; an honest hand-in verifies, and a pool's result, counts, kubelet or very
// presence changed by hand is found.
func TestVerifyPools(t *testing.T) {
	a := func(state string) report.PoolVerdict {
		return report.PoolVerdict{Pool: "kubelet v1.37.1, Debian GNU/Linux 12, containerd://2.1", Kubelet: "v1.37.1", Node: "w1", State: state}
	}
	b := func(state string) report.PoolVerdict {
		return report.PoolVerdict{Pool: "kubelet v1.37.1, Ubuntu 24.04, cri-o://1.37", Kubelet: "v1.37.1", Node: "w3", State: state}
	}
	specs := []types.SpecReport{
		pooled(spec("secret volume", "conformance", types.SpecStatePassed), a(report.PoolPassed), b(report.PoolPassed)),
		pooled(spec("configMap volume", "conformance", types.SpecStateFailed), a(report.PoolPassed), b(report.PoolFailed)),
		spec("downwardAPI volume", "conformance", types.SpecStateSkipped),
	}
	dir := handIn(t, nil, specs...)
	problems := verify(t, dir)
	wantProblems(t, problems, "profile conformance: 1 required case(s) failed", "profile conformance: 1 required case(s) did not run")
	outcomes, err := ReadJUnit(filepath.Join(dir, "junit.xml"))
	if err != nil {
		t.Fatal(err)
	}
	r := Build(outcomes, Options{})
	if len(r.Pools) != 2 {
		t.Fatalf("pools %+v: want two", r.Pools)
	}
	pa, pb := r.Pools[0], r.Pools[1]
	// The case no pool observed (not run) counts in both pools.
	if pa.Result != ResultPartial || pa.Profiles[0].Counts != (Counts{Total: 3, Passed: 2, NotRun: 1}) || pa.Kubelet != "v1.37.1" || pa.Nodes[0] != "w1" {
		t.Errorf("pool A %+v: want partial, 2 passed and 1 not run of 3", pa)
	}
	if pb.Result != ResultFailure || pb.Profiles[0].Counts != (Counts{Total: 3, Passed: 1, Failed: 1, NotRun: 1}) || len(pb.Profiles[0].FailedCases) != 1 {
		t.Errorf("pool B %+v: want failure naming configMap volume", pb)
	}
	for _, tc := range []struct {
		name   string
		mutate func(*Report)
		want   string
	}{
		{"a pool's result raised", func(r *Report) { r.Pools[1].Result = ResultSuccess }, "pool kubelet v1.37.1, Ubuntu 24.04, cri-o://1.37 says success"},
		{"a pool's counts raised", func(r *Report) { r.Pools[1].Profiles[0].Passed = 2; r.Pools[1].Profiles[0].Failed = 0 },
			"pool kubelet v1.37.1, Ubuntu 24.04, cri-o://1.37, profile conformance says failure (2 passed, 0 failed"},
		{"a failing pool left out", func(r *Report) { r.Pools = r.Pools[:1] }, "no result for pool kubelet v1.37.1, Ubuntu 24.04, cri-o://1.37"},
		{"a pool made up", func(r *Report) {
			r.Pools = append(r.Pools, PoolResult{Name: "kubelet v1.38.0, Windows", Result: ResultSuccess})
		},
			"pool kubelet v1.38.0, Windows, on which junit.xml's cases did not run"},
		{"a pool's kubelet changed", func(r *Report) { r.Pools[0].Kubelet = "v1.36.3" }, "(kubelet v1.36.3, nodes [w1]), junit.xml gives partial (kubelet v1.37.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := handIn(t, nil, specs...)
			mutate(t, dir, tc.mutate)
			got := verify(t, dir)
			if len(got) != len(problems)+1 {
				t.Errorf("%d problems, want the honest hand-in's %d and one more", len(got), len(problems))
			}
			wantProblems(t, got, tc.want)
		})
	}
	// A pool's kubelet outside the releases the cases ran in is inconsistent by itself.
	odd := []types.SpecReport{pooled(spec("secret volume", "conformance", types.SpecStatePassed),
		report.PoolVerdict{Pool: "kubelet v1.36.3", Kubelet: "v1.36.3", Node: "old", State: report.PoolPassed})}
	wantProblems(t, verify(t, handIn(t, nil, odd...)), "pool kubelet v1.36.3 runs kubelet v1.36.3, but junit.xml's cases ran in [{v1.37 v1.37}]")
}

// Issue 33: a case of a release the implementation is not (an exec agent or a kind cluster is
// one release) is not applicable: not run, never required, listed apart with its reason, and
// its releases are not among those certified.
func TestNotApplicableIsNotRequired(t *testing.T) {
	skew := spec("secret volume under a v1.34 kubelet", "conformance", types.SpecStateSkipped)
	facts := report.CaseFacts{Area: "atomicwriter", Profile: "conformance", APIServerRelease: "v1.37", KubeletRelease: "v1.34",
		NotApplicable: "needs kubelet v1.34; this target's kubelet (reference) is v1.37 only"}
	skew.ReportEntries = types.ReportEntries{{Name: report.CaseEntry, Value: types.WrapEntryValue(facts)}}
	skew.Failure = types.Failure{Message: facts.NotApplicable}
	dir := handIn(t, nil, spec("secret volume", "conformance", types.SpecStatePassed), skew)
	wantProblems(t, verify(t, dir))
	outcomes, _ := ReadJUnit(filepath.Join(dir, "junit.xml"))
	r := Build(outcomes, Options{})
	if r.Result != ResultSuccess || len(r.Profiles) != 1 || r.Profiles[0].Total != 1 || r.Profiles[0].NotRun != 0 {
		t.Errorf("result %s, profiles %+v: want success over the one applicable case", r.Result, r.Profiles)
	}
	if len(r.NotApplicable) != 1 || r.NotApplicable[0].Cases != 1 || r.NotApplicable[0].Why != facts.NotApplicable {
		t.Errorf("notApplicable %+v: want the one case with its reason", r.NotApplicable)
	}
	if len(r.Releases) != 1 || r.Releases[0] != (ReleasePair{"v1.37", "v1.37"}) {
		t.Errorf("releases %+v: want only v1.37 x v1.37, the releases the cases ran in", r.Releases)
	}
	// Without the fact the same skipped case is required and did not run.
	plain := spec("secret volume under a v1.34 kubelet", "conformance", types.SpecStateSkipped)
	dir = handIn(t, nil, spec("secret volume", "conformance", types.SpecStatePassed), plain)
	wantProblems(t, verify(t, dir), "profile conformance: 1 required case(s) did not run")
}

// TestLoadImplementation: contact is one string or a list; a wrong field says what the file
// wants; vendor, product and version are required.
func TestLoadImplementation(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	base := "vendor: Example Corp\nproduct: Example agent\nversion: 1.0.0\n"
	for body, want := range map[string][]string{
		base + "contact: conformance@example.com\n":        {"conformance@example.com"},
		base + "contact: [a@example.com, b@example.com]\n": {"a@example.com", "b@example.com"},
		base: nil,
	} {
		im, err := LoadImplementation(write("ok.yaml", body))
		if err != nil || !slices.Equal(im.Contact, want) {
			t.Errorf("%q: contact %q, %v; want %q", body, im.Contact, err, want)
		}
	}
	for body, want := range map[string]string{
		base + "contact: {name: x}\n": "contact: a string or a list",
		base + "colour: red\n":        "unknown field",
		"vendor: Example Corp\n":      "vendor, product and version are required",
	} {
		_, err := LoadImplementation(write("bad.yaml", body))
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error %v; want one line containing %q", body, err, want)
		}
	}
}

// What hydrophone copies back (e2e.log and junit_01.xml, the hand-in carried inside) verifies
// as the hand-in does; a junit_01.xml whose case differs from the hand-in's, a hand-in that does
// not verify, and a junit_01.xml that carries none are each found.
func TestVerifyRunnerJUnit(t *testing.T) {
	specs := []types.SpecReport{
		spec("secret volume", "conformance", types.SpecStatePassed),
		spec("configMap volume", "conformance", types.SpecStatePassed),
	}
	copied := func(t *testing.T, tamper func(handIn string), embed bool) string {
		t.Helper()
		handIn := handIn(t, nil, specs...)
		if tamper != nil {
			tamper(handIn)
		}
		junit, err := os.ReadFile(filepath.Join(handIn, "junit.xml"))
		if err != nil {
			t.Fatal(err)
		}
		if embed {
			if junit, err = EmbedHandIn(junit, handIn); err != nil {
				t.Fatal(err)
			}
		}
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "e2e.log"), []byte("Test Suite Passed\n"), 0o644)
		os.WriteFile(filepath.Join(dir, RunnerJUnit), junit, 0o644)
		return dir
	}
	dir := copied(t, nil, true)
	if problems := verify(t, dir); len(problems) > 0 {
		t.Fatalf("an honest hydrophone hand-in: %q, want verified", problems)
	}
	outcomes, err := ReadJUnit(filepath.Join(dir, RunnerJUnit))
	if err != nil || len(outcomes) != 2 {
		t.Fatalf("junit_01.xml with the hand-in: %d cases, %v; want the 2 cases still read", len(outcomes), err)
	}
	// A case turned skipped in junit_01.xml only.
	edit(t, dir, RunnerJUnit, `configMap volume [target=reference]" classname="volperm" status="passed" time="0.001">`,
		`configMap volume [target=reference]" classname="volperm" status="skipped" time="0.001"><skipped message="x"></skipped>`)
	wantProblems(t, verify(t, dir),
		"junit_01.xml and the hand-in it carries disagree on the passed cases: only in junit_01.xml: []; only in the hand-in's junit.xml: [[atomicwriter] configMap volume [target=reference]]",
		"junit_01.xml and the hand-in it carries disagree on the skipped cases")
	// The hand-in inside is verified as a directory is.
	dir = copied(t, func(handIn string) { edit(t, handIn, File, "vendor: Example Corp", "vendor: \"\"") }, true)
	wantProblems(t, verify(t, dir), "the implementation needs a vendor, a product and a version")
	// A run without the implementation carries none.
	dir = copied(t, nil, false)
	wantProblems(t, verify(t, dir), "junit_01.xml carries no hand-in")
}

// TestVersionNote: verify says "release vX.Y.Z" of a release's hand-in, and of any other that it
// is not a release (docs/certify.md "Versions").
func TestVersionNote(t *testing.T) {
	for _, tt := range []struct{ version, want string }{
		{"v0.2.0", "made by volperm release v0.2.0 ("},
		{"v0.3.0-dev+0123456789ab", "made by volperm v0.3.0-dev+0123456789ab, a development build, not a release"},
		{"v0.2.0+0123456789ab.dirty", "made by volperm v0.2.0+0123456789ab.dirty, built with local changes, not a release"},
		{"v0.1.0-dirty", "built with local changes, not a release"},
		{"v0.2.0+unstamped", "made by volperm v0.2.0+unstamped, a build that did not know its commit (go run, -buildvcs=false), not a release"},
		{"v0.0.0-20261129002449-b5f2c650e00b", "a development build, not a release"},
		{"(devel)", "a development build, not a release"},
	} {
		got := VersionNote(tt.version)
		release := strings.HasPrefix(tt.want, "made by volperm release ")
		if !strings.Contains(got, tt.want) || strings.Contains(got, "release "+tt.version) != release {
			t.Errorf("VersionNote(%q) = %q, want %q", tt.version, got, tt.want)
		}
	}
}
