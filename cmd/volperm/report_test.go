package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/volperm/volperm/framework/caseroot/caseroottest"
	"github.com/volperm/volperm/framework/certify"
	"github.com/volperm/volperm/hostfeature"
)

// TestReportVerify: a whole-catalogue run with an implementation and every claim hands in a
// directory `volperm report verify` accepts (exit 0); a file taken out is not verified (1); a
// report that does not parse is unreadable (2); bad usage is 2.
func TestReportVerify(t *testing.T) {
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
