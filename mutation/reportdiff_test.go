//go:build volperm_mutants

package mutation_test

import (
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/volperm/volperm/framework/caseroot/caseroottest"
	"github.com/volperm/volperm/hostfeature"
	"github.com/volperm/volperm/nodeimpl/mutant"
)

// TestReportDiff is `volperm report diff` (issue 54) on two real runs of the hostPath area
// through the exec target: the reference agent, then the same agent running a mutant that
// takes anything for a socket. The diff names the cases the mutant broke as worse (exit 1), the
// reverse names them better (exit 0), and a run against itself has no change.
func TestReportDiff(t *testing.T) {
	hostfeature.Need(t, hostfeature.Root)
	repo, bin := repoRoot(t), t.TempDir()
	goBuild(t, "", filepath.Join(bin, "volperm"), "./cmd/volperm")
	goBuild(t, "volperm_mutants", filepath.Join(bin, "mutantagent"), "./mutation/mutantagent")
	volperm := func(args ...string) (int, string) {
		cmd := osexec.Command(filepath.Join(bin, "volperm"), args...)
		cmd.Dir = repo
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*osexec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("volperm %v: %v", args, err)
		}
		return code, string(out)
	}
	run := func(m mutant.Name) string {
		w := filepath.Join(bin, "agent-"+string(m))
		script := fmt.Sprintf("#!/bin/sh\n%s='%s' exec '%s' \"$@\"\n", mutant.EnvActive, m, filepath.Join(bin, "mutantagent"))
		if err := os.WriteFile(w, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		code, out := volperm("run", "--target", "exec:"+w, "--label-filter", "hostpath", "--report-dir", dir, "--work-dir", caseroottest.TempDir(t))
		t.Logf("run with mutant %q: exit %d\n%s", m, code, lastLines(out, 4))
		return dir
	}
	clean, broken := run(""), run(mutant.HostPathSocketAnything)
	t.Run("rerun-failed", func(t *testing.T) { rerunFailed(t, volperm, clean, broken, filepath.Join(bin, "agent-")) })

	code, out := volperm("report", "diff", clean, broken)
	t.Logf("report diff clean broken:\n%s", out)
	if code != 1 || !strings.Contains(out, "\nworse:\n") || !strings.Contains(out, "Socket") || !strings.Contains(out, ": passed -> failed (") {
		t.Errorf("clean -> broken: exit %d, want 1 and the Socket cases passed -> failed as worse:\n%s", code, out)
	}
	code, out = volperm("report", "diff", broken, clean)
	if code != 0 || !strings.Contains(out, "\nbetter:\n") || strings.Contains(out, "\nworse:\n") || !strings.Contains(out, ": failed (") {
		t.Errorf("broken -> clean: exit %d, want 0 and the cases failed -> passed as better:\n%s", code, out)
	}
	code, out = volperm("report", "diff", clean, clean)
	if code != 0 || !strings.Contains(out, "0 worse, 0 better, 0 changed, 0 new, 0 gone") {
		t.Errorf("a run against itself: exit %d:\n%s", code, out)
	}
	if code, out = volperm("report", "diff", clean, t.TempDir()); code != 2 || strings.Count(strings.TrimSpace(out), "\n") != 0 || !strings.Contains(out, "neither junit.xml") {
		t.Errorf("a directory with no run: exit %d, want 2 and one line:\n%s", code, out)
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// rerunFailed is `volperm run --rerun-failed DIR` on the runs of TestReportDiff: the broken
// run's 9 failures run again on its own target (the mutant agent, from its summary) and fail
// again, alone; on the clean agent (--target given) they pass; a run with no failure has
// nothing to run again; a filter beside it is refused in one line.
func rerunFailed(t *testing.T, volperm func(...string) (int, string), clean, broken, wrapper string) {
	again := func(args ...string) (int, string, string) {
		dir := t.TempDir()
		code, out := volperm(append([]string{"run", "--rerun-failed", broken, "--report-dir", dir, "--work-dir", caseroottest.TempDir(t)}, args...)...)
		return code, out, dir
	}
	code, out, dir := again()
	if code != 1 || !strings.Contains(out, "rerun of "+broken+": 9 failed or not run, on target exec:"+wrapper+string(mutant.HostPathSocketAnything)) || !strings.Contains(out, "9 cases: 0 passed, 9 failed") {
		t.Errorf("on its own target: exit %d, want 1 and the 9 failing again:\n%s", code, lastLines(out, 12))
	}
	if code, diff := volperm("report", "diff", broken, dir); code != 0 || !strings.Contains(diff, ": 9 the same, 0 worse, 0 better, 0 changed, 0 new, 150 gone") {
		t.Errorf("the rerun's cases are not the 9 that failed: exit %d\n%s", code, diff)
	}
	code, out, _ = again("--target", "exec:"+wrapper)
	if code != 0 || !strings.Contains(out, "9 cases: 9 passed, 0 failed") {
		t.Errorf("on the clean agent: exit %d, want 0 and 9 passed:\n%s", code, lastLines(out, 12))
	}
	if code, out = volperm("run", "--rerun-failed", clean, "--report-dir", t.TempDir()); code != 0 || !strings.Contains(out, "nothing to run again: no case of "+clean+" failed or could not run") {
		t.Errorf("a run without failures: exit %d:\n%s", code, out)
	}
	if code, out = volperm("run", "--rerun-failed", broken, "--focus", "Socket"); code != 2 || strings.Count(strings.TrimSpace(out), "\n") != 0 || !strings.Contains(out, "--focus would choose otherwise") {
		t.Errorf("--focus beside it: exit %d, want 2 and one line:\n%s", code, out)
	}
}
