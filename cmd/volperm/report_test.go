package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/volperm/volperm/framework/caseroot/caseroottest"
	"github.com/volperm/volperm/framework/certify"
	"github.com/volperm/volperm/framework/e2etest"
	"github.com/volperm/volperm/framework/report"
	"github.com/volperm/volperm/hostfeature"
)

// TestReportVerify: a whole-catalogue run with an implementation and every claim hands in a
// directory `volperm report verify` accepts (exit 0); a file taken out is not verified (1); a
// report that does not parse is unreadable (2); bad usage is 2.
func TestReportVerify(t *testing.T) {
	e2etest.Gate(t)
	hostfeature.Need(t, hostfeature.Root, hostfeature.ProtectedSymlinks)
	impl := filepath.Join(t.TempDir(), "implementation.yaml")
	if err := os.WriteFile(impl, []byte("vendor: Example Corp\nproduct: Example Kubelet\nversion: 1.37.1-example.3\ncontact: [certification@example.com]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// The run in a process of its own: a test binary runs one Ginkgo suite (TestTinyTarget's).
	run := exec.Command(binary(t), "run", "--work-dir", caseroottest.TempDir(t), "--report-dir", dir, "--implementation", impl,
		"--claim", "emptyDirVolumeMode,atomicWriteVolumeUserFields,preservePermissions,flexVolumeAllowlist,volumeBindMountOptions")
	if out, err := run.CombinedOutput(); err != nil || !strings.Contains(string(out), certify.File) {
		t.Fatalf("run: %v\n%s", err, out)
	}
	code, out, errs := runMain("report", "verify", dir)
	if code != exitOK || !strings.Contains(out, "verified") {
		t.Fatalf("verify a clean hand-in: exit %d\n%s\n%s", code, out, errs)
	}
	if err := os.Remove(filepath.Join(dir, "summary.md")); err != nil {
		t.Fatal(err)
	}
	if code, out, _ = runMain("report", "verify", dir); code != exitFailed || !strings.Contains(out, "summary.md is missing") {
		t.Errorf("verify without summary.md: exit %d, want %d naming the file:\n%s", code, exitFailed, out)
	}
	if err := os.WriteFile(filepath.Join(dir, "summary.md"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, certify.File), []byte("kind: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs = runMain("report", "verify", dir); code != exitUsage || !strings.Contains(errs, "unreadable") {
		t.Errorf("verify an unparsable report: exit %d, want %d (unreadable):\n%s", code, exitUsage, errs)
	}
	if code, _, errs = runMain("report", "verify"); code != exitUsage {
		t.Errorf("report verify without a directory: exit %d, want %d:\n%s", code, exitUsage, errs)
	}
	if code, _, errs = runMain("run", "--claim", "nope"); code != exitUsage || !strings.Contains(errs, "unknown feature nope") {
		t.Errorf("run --claim nope: exit %d, want %d naming the feature:\n%s", code, exitUsage, errs)
	}
}

// Issue 33: `report verify --help` (and -h) is help, not a directory named --help.
func TestReportVerifyHelp(t *testing.T) {
	for _, h := range []string{"-h", "--help"} {
		code, out, _ := runMain("report", "verify", h)
		if code != exitOK || !strings.Contains(out, "volperm report verify DIR") || strings.Contains(out, "missing") {
			t.Errorf("report verify %s: exit %d\n%s", h, code, out)
		}
	}
}

// TestRunExit: accepted known differences pass a run only when nothing else went wrong; the
// run's own error (a report not written, a target that could not close) fails it.
func TestRunExit(t *testing.T) {
	known := &report.Summary{Result: report.ResultFailed, Failures: []report.CaseResult{{KnownDifference: "why"}}}
	unknown := &report.Summary{Result: report.ResultFailed, Failures: []report.CaseResult{{KnownDifference: "why"}, {}}}
	suite := &report.Summary{Result: report.ResultFailed, Failures: known.Failures, SuiteFailures: []string{"AfterSuite: close"}}
	passed := &report.Summary{Result: report.ResultPassed}
	boom := errors.New("summary.json: no space left on device")
	for _, tt := range []struct {
		name   string
		s      *report.Summary
		failed bool
		err    error
		accept bool
		want   int
	}{
		{"passed", passed, false, nil, false, exitOK},
		{"passed, the reports not written", passed, false, boom, false, exitFailed},
		{"no summary", nil, true, nil, true, exitFailed},
		{"known, not accepted", known, true, nil, false, exitFailed},
		{"known, accepted", known, true, nil, true, exitOK},
		{"known, accepted, the reports not written", known, true, boom, true, exitFailed},
		{"known and unknown, accepted", unknown, true, nil, true, exitFailed},
		{"known and a suite failure, accepted", suite, true, nil, true, exitFailed},
	} {
		if got := runExit(tt.s, tt.failed, tt.err, tt.accept); got != tt.want {
			t.Errorf("%s: exit %d, want %d", tt.name, got, tt.want)
		}
	}
}
