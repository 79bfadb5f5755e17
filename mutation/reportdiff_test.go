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
	gomod, err := osexec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	repo := filepath.Dir(strings.TrimSpace(string(gomod)))
	bin := t.TempDir()
	for _, b := range []struct{ out, pkg, tags string }{{"volperm", "./cmd/volperm", ""}, {"mutantagent", "./mutation/mutantagent", "volperm_mutants"}} {
		build := osexec.Command("go", "build", "-tags", b.tags, "-o", filepath.Join(bin, b.out), b.pkg)
		build.Dir = repo
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", b.pkg, err, out)
		}
	}
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
