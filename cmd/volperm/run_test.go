package main

import (
	"bufio"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/volperm/volperm/framework/e2etest"
	"github.com/volperm/volperm/hostfeature"

	"github.com/volperm/volperm/framework/owner"
	"github.com/volperm/volperm/framework/probe"
	"github.com/volperm/volperm/framework/report"
)

// binDir holds the volperm binary the tests build; it is world-readable so that the binary can
// run as another uid.
var binDir string

// TestMain also lets this test binary be a probe child: the reference target re-executes the
// current binary as other uids for its behaviour probes.
func TestMain(m *testing.M) {
	probe.MaybeRunChild()
	code := m.Run()
	if err := closeSharedClusters(); err != nil {
		fmt.Fprintln(os.Stderr, "deleting the tests' kind clusters:", err)
		code = 1
	}
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// binary builds cmd/volperm once per test run (GOFLAGS from the environment apply).
func binary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		// Named and marked as a run's dir, so that the next run (volperm cleanup) removes it if
		// this test binary is killed before TestMain's RemoveAll.
		if binDir, buildErr = os.MkdirTemp("", "volperm-testbin-"+owner.Self().Tag()+"-"); buildErr != nil {
			return
		}
		if buildErr = owner.Write(binDir); buildErr != nil {
			return
		}
		if buildErr = os.Chmod(binDir, 0o755); buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "volperm")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// runDirs are the directories of one run of the binary: reports, the target's work dir and
// TMPDIR, all inside a test directory readable by other uids.
type runDirs struct{ root, reports, work, tmp string }

func newRunDirs(t *testing.T, owner int) runDirs {
	t.Helper()
	root, err := os.MkdirTemp("", "vp-run-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	d := runDirs{root: root, reports: filepath.Join(root, "reports"), work: filepath.Join(root, "work"), tmp: filepath.Join(root, "tmp")}
	for _, dir := range []string{root, d.reports, d.work, d.tmp} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		// Probes run as other uids: every directory above a volume must let them search.
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(dir, owner, owner); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// env is the environment of a run: no CI variables unless given.
func (d runDirs) env(extra ...string) []string {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + d.root, "TMPDIR=" + d.tmp}
	return append(env, extra...)
}

func (d runDirs) summary(t *testing.T) *report.Summary {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(d.reports, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s report.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("summary.json: %v", err)
	}
	return &s
}

// leftovers lists what a run left: entries in the work dir and TMPDIR, and mounts below root.
func (d runDirs) leftovers(t *testing.T) []string {
	t.Helper()
	var left []string
	for _, dir := range []string{d.work, d.tmp} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			left = append(left, filepath.Join(dir, e.Name()))
		}
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// Field 5 is the mount point (proc(5)).
		if fields := strings.Fields(sc.Text()); len(fields) > 4 && strings.HasPrefix(fields[4], d.root) {
			left = append(left, "mount "+fields[4])
		}
	}
	return left
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// TestRunInterrupted sends SIGINT to a run of the whole catalogue once cases have passed: the running
// case is torn down, the target closed, the reports written so far are flushed, the exit code
// is not 0, and no mount, work dir entry or temp file is left.
func TestRunInterrupted(t *testing.T) {
	hostfeature.Need(t, hostfeature.Root) // needs root: the cases running when SIGINT arrives must hold mounts to tear down
	d := newRunDirs(t, 0)
	cmd := exec.Command(binary(t), "run", "--report-dir", d.reports, "--work-dir", d.work)
	cmd.Env = d.env()
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Interrupt once some cases have passed (run.log gets a line as each case ends), however
	// slowly the machine starts the binary: the first area's cases are all observed (Prepare)
	// before its first spec ends, which took over 2 minutes on a busy 2-core machine.
	deadline := time.Now().Add(6 * time.Minute)
	for {
		if log, _ := os.ReadFile(filepath.Join(d.reports, "run.log")); strings.Count(string(log), "PASS ") >= 3 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no case passed within 6 minutes:\n%s", tail(out.String()))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		t.Fatalf("volperm run did not stop within 2 minutes of SIGINT:\n%s", tail(out.String()))
	}
	if code := exitCode(err); code == 0 {
		t.Errorf("exit 0 after SIGINT, want non-zero:\n%s", tail(out.String()))
	}
	if left := d.leftovers(t); len(left) > 0 {
		t.Errorf("left behind after SIGINT: %q", left)
	}
	s := d.summary(t)
	if s.Result != report.ResultFailed || len(s.SuiteFailures) == 0 || s.SuiteFailures[0] != "Interrupted by User" {
		t.Errorf("summary: result %s, suite failures %q: want failed, interrupted", s.Result, s.SuiteFailures)
	}
	if s.Totals.Passed == 0 || s.Totals.Skipped == 0 {
		t.Errorf("summary totals %s: want the cases run before the interrupt and the rest not run", s.Totals)
	}
	b, err := os.ReadFile(filepath.Join(d.reports, "junit.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(b, new(struct {
		XMLName xml.Name `xml:"testsuites"`
	})); err != nil {
		t.Errorf("junit.xml after SIGINT: %v", err)
	}
	if log, err := os.ReadFile(filepath.Join(d.reports, "run.log")); err != nil || !strings.Contains(string(log), "PASS ") {
		t.Errorf("run.log after SIGINT lacks the cases that ran (%v):\n%s", err, tail(string(log)))
	}
}

// TestRunKilled kills runs with SIGKILL at random moments (nothing of theirs runs after the
// signal) on the reference, exec and container targets, then runs `volperm cleanup`: the work
// dir, TMPDIR, the mount table and the engine's containers are exactly as clean as before the
// first run. Each run's own start sweeps what the previous kill left, so the leftovers never
// pile up beyond one run's. (kind: framework/targets/kind TestKindKilled, with VOLPERM_KIND_E2E.)
func TestRunKilled(t *testing.T) {
	e2etest.Gate(t)
	hostfeature.Need(t, hostfeature.Root) // the cases killed must hold mounts (tmpfs, hugetlbfs) and chowned trees
	bin := binary(t)
	agent := filepath.Join(filepath.Dir(bin), "volperm-agent")
	if err := os.Symlink("volperm", agent); err != nil && !os.IsExist(err) {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		target, focus string
		upTo          time.Duration
		needs         []hostfeature.Feature
	}{
		{"reference", "Memory|HugePages|fsGroup|restart", 2700 * time.Millisecond, nil},
		{"exec:" + agent, "Memory|HugePages|fsGroup|restart", 2700 * time.Millisecond, nil},
		{"container", "hostpath|fsgroup", 8 * time.Second, []hostfeature.Feature{hostfeature.ContainerEngine}},
	} {
		t.Run(strings.Split(tc.target, ":")[0], func(t *testing.T) {
			hostfeature.Need(t, tc.needs...)
			d := newRunDirs(t, 0)
			rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
			var killed []string
			for i := 0; i < 5; i++ {
				cmd := exec.Command(bin, "run", "--target", tc.target, "--report-dir", d.reports, "--work-dir", d.work, "--focus", tc.focus)
				cmd.Env = d.env(goEnv()...)
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				// Somewhere from its start-up to well inside its cases.
				time.Sleep(200*time.Millisecond + time.Duration(rng.Int64N(int64(tc.upTo))))
				cmd.Process.Kill()
				cmd.Wait()
				killed = append(killed, strconv.Itoa(cmd.Process.Pid))
			}
			cleanup := exec.Command(bin, "cleanup", "--work-dir", d.work)
			cleanup.Env = d.env(goEnv()...)
			out, err := cleanup.CombinedOutput()
			if err != nil {
				t.Fatalf("volperm cleanup: %v\n%s", err, out)
			}
			if left := d.leftovers(t); len(left) > 0 {
				t.Errorf("left behind after SIGKILL and cleanup: %q\ncleanup said:\n%s", left, out)
			}
			if hostfeature.Check(hostfeature.ContainerEngine) == nil {
				ps, err := exec.Command("docker", "ps", "-aq", "--filter", "label=volperm.dev/target=container", "--format", `{{.Label "volperm.dev/owner-pid"}}`).Output()
				if err != nil {
					t.Fatal(err)
				}
				for _, pid := range strings.Fields(string(ps)) {
					if slices.Contains(killed, pid) {
						t.Errorf("a probe container of killed run %s is left", pid)
					}
				}
			}
			if !strings.Contains(string(out), "left by a run that is no longer alive") && !strings.Contains(string(out), "nothing left") {
				t.Errorf("cleanup says neither what it removed nor that there was nothing:\n%s", out)
			}
		})
	}
}

// goEnv passes the Go caches on to a run with its own HOME, for the probe binary it builds.
func goEnv() []string {
	var env []string
	for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOFLAGS", "GOPROXY"} {
		if v, err := exec.Command("go", "env", k).Output(); err == nil && len(strings.TrimSpace(string(v))) > 0 {
			env = append(env, k+"="+strings.TrimSpace(string(v)))
		}
	}
	return env
}

// nobody is the uid and gid of the non-root runs.
const nobody = 65534

// TestRunAsNonRoot runs the catalogue as uid 65534: the cases that need root are listed as not
// run, with their reason, and the run passes; with CI=true each of them is a failure.
func TestRunAsNonRoot(t *testing.T) {
	hostfeature.Need(t, hostfeature.Root) // needs root to start a process as uid 65534
	bin := binary(t)
	run := func(t *testing.T, env ...string) (*report.Summary, int) {
		d := newRunDirs(t, nobody)
		cmd := exec.Command(bin, "run", "--report-dir", d.reports, "--work-dir", d.work)
		cmd.Env = d.env(env...)
		cmd.Dir = d.root
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
		out, err := cmd.CombinedOutput()
		if !strings.Contains(string(out), filepath.Join(d.reports, "summary.md")) {
			t.Errorf("the output does not name the reports:\n%s", tail(string(out)))
		}
		if left := d.leftovers(t); len(left) > 0 {
			t.Errorf("left behind: %q", left)
		}
		return d.summary(t), exitCode(err)
	}

	s, code := run(t)
	if code != exitOK || s.Totals.Failed != 0 || s.Totals.Passed == 0 {
		t.Errorf("exit %d, totals %s: want 0, the cases that need no root passed, no failure", code, s.Totals)
	}
	if len(s.NotRun) == 0 {
		t.Fatalf("no case was reported as not run; totals %s", s.Totals)
	}
	notRun := map[string]string{}
	for _, r := range s.NotRun {
		notRun[r.Name] = r.Message
		if !strings.HasPrefix(r.Message, "this machine lacks root") {
			t.Errorf("case %q not run: reason %q, want one that names root", r.Name, r.Message)
		}
	}

	s, code = run(t, "CI=true")
	if code != exitFailed || s.Totals.Skipped != 0 {
		t.Errorf("with CI=true: exit %d, totals %s: want 1 and no case skipped", code, s.Totals)
	}
	failures := map[string]string{}
	for _, r := range s.Failures {
		failures[r.Name] = r.Message
	}
	for name, reason := range notRun {
		if want := "cannot run on target reference: " + reason; !strings.HasPrefix(failures[name], want) {
			t.Errorf("with CI=true, case %q: %q, want a failure starting %q", name, failures[name], want)
			break
		}
	}
}

// TestRunFile runs the cases of a file as root: they pass and the reports name them.
func TestRunFile(t *testing.T) {
	hostfeature.Need(t, hostfeature.Root) // needs root: the reference target mounts and chowns
	d := newRunDirs(t, 0)
	file := filepath.Join(d.root, "cases.yaml")
	if err := os.WriteFile(file, []byte(caseFile), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary(t), "run", "-f", file, "--report-dir", d.reports, "--work-dir", d.work, "--profile", "alpha")
	cmd.Env = d.env("CI=true")
	out, err := cmd.CombinedOutput()
	if code := exitCode(err); code != exitOK {
		t.Fatalf("exit %d:\n%s", code, tail(string(out)))
	}
	s := d.summary(t)
	if s.Totals != (report.Counts{Total: 1, Passed: 1}) || s.Selection.Available != 2 || s.Selection.Selected != 1 {
		t.Errorf("totals %s, selection %+v: want the one alpha case of two, passed", s.Totals, s.Selection)
	}
	if !strings.Contains(string(out), "PASSED on target reference: 1 cases: 1 passed, 0 failed, 0 not run") {
		t.Errorf("the output lacks the counts:\n%s", tail(string(out)))
	}
	if left := d.leftovers(t); len(left) > 0 {
		t.Errorf("left behind: %q", left)
	}
}

// tail is the end of a long output, for failure messages.
func tail(s string) string {
	const n = 4000
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
