package kind_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/volperm/volperm/framework/targets/kind"
)

// TestKindKilled kills `volperm run --target kind` with SIGKILL once its cluster's node is up,
// then runs `volperm cleanup`: the cluster, the run's directory and (when the run made it) the
// Docker network kind are gone (docs/cleanup.md). Set VOLPERM_KIND_E2E=1 to run it; the node
// image must be built already (volperm cluster image), or the first run builds it. It looks
// only at its own run (its cluster, its TMPDIR), so that CI runs it beside the kind lanes.
func TestKindKilled(t *testing.T) {
	r := startRunUntilNode(t)
	r.cmd.Process.Kill()
	<-r.done
	if len(r.nodes(t)) == 0 {
		t.Fatal("the killed run left no node: nothing to test")
	}
	cleanup := exec.Command(r.bin, "cleanup")
	cleanup.Env = r.cmd.Env
	out, err := cleanup.CombinedOutput()
	t.Logf("volperm cleanup:\n%s", out)
	if err != nil {
		t.Fatalf("volperm cleanup: %v", err)
	}
	r.nothingLeft(t, "after cleanup")
}

// TestKindInterrupted sends SIGINT to `volperm run --target kind` while kind creates its
// cluster: the command owns the signal (the target installs no handler of its own), the run
// stops with a failure, and its cluster, directory and (when it made it) the Docker network kind
// are gone without a `volperm cleanup`. Set VOLPERM_KIND_E2E=1 to run it.
func TestKindInterrupted(t *testing.T) {
	r := startRunUntilNode(t)
	if err := r.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-r.done:
		if err == nil {
			t.Errorf("exit 0 after SIGINT, want non-zero:\n%s", r.out.String())
		}
	case <-time.After(5 * time.Minute):
		r.cmd.Process.Kill()
		t.Fatalf("volperm run did not stop within 5 minutes of SIGINT:\n%s", r.out.String())
	}
	t.Logf("volperm run after SIGINT:\n%s", r.out.String())
	r.nothingLeft(t, "after SIGINT")
}

// kindRun is a `volperm run --target kind` started by a test, with a TMPDIR of its own (its
// run directory and its record for `volperm cleanup` go there).
type kindRun struct {
	bin        string
	cmd        *exec.Cmd
	out        *strings.Builder
	done       chan error
	hadNetwork bool
	tmp        string
	// cluster is the kind cluster the run made, as its record names it.
	cluster string
}

// startRunUntilNode builds volperm, starts a kind run of a few cases and returns 5 s after a
// node container of a cluster it makes exists (kind is creating the cluster, or has).
func startRunUntilNode(t *testing.T) *kindRun {
	t.Helper()
	if os.Getenv("VOLPERM_KIND_E2E") != "1" {
		t.Skip("set VOLPERM_KIND_E2E=1 to create kind clusters (needs root and Docker)")
	}
	// The package's directory is the test's working directory (runtime.Caller's path is the
	// module's import path under -trimpath, which make test and CI build with).
	repo, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	r := &kindRun{bin: filepath.Join(t.TempDir(), "volperm"), out: &strings.Builder{}, done: make(chan error, 1), tmp: t.TempDir()}
	if out, err := exec.Command("go", "build", "-o", r.bin, filepath.Join(repo, "cmd", "volperm")).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	r.hadNetwork = exec.Command("docker", "network", "inspect", "kind").Run() == nil
	r.cmd = exec.Command(r.bin, "run", "--target", "kind", "--focus", "hostPath type Socket", "--report-dir", t.TempDir())
	r.cmd.Dir, r.cmd.Stdout, r.cmd.Stderr = repo, r.out, r.out
	r.cmd.Env = append(os.Environ(), "TMPDIR="+r.tmp)
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { r.done <- r.cmd.Wait() }()
	// The run's cluster is the one its record names (not the first new one: CI's kind lanes make
	// clusters beside this test), once a node container of it exists.
	deadline := time.Now().Add(30 * time.Minute)
	for {
		if names := kind.RecordedClusters(r.tmp); len(names) > 0 {
			r.cluster = names[0]
			if len(r.nodes(t)) > 0 {
				break
			}
		}
		select {
		case err := <-r.done:
			t.Fatalf("volperm run ended (%v) before a node of its cluster existed:\n%s", err, r.out.String())
		case <-time.After(500 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			r.cmd.Process.Kill()
			t.Fatal("no kind node within 30 minutes")
		}
	}
	t.Logf("the run's cluster: %s", r.cluster)
	time.Sleep(5 * time.Second)
	return r
}

// nothingLeft checks that no node of the run's cluster, no directory in the run's TMPDIR and
// (when the run made it) no Docker network kind is left.
func (r *kindRun) nothingLeft(t *testing.T, when string) {
	t.Helper()
	if n := r.nodes(t); len(n) > 0 {
		t.Errorf("kind nodes of %s left %s: %q", r.cluster, when, n)
	}
	if left, _ := filepath.Glob(filepath.Join(r.tmp, "*")); len(left) > 0 {
		t.Errorf("left in the run's TMPDIR %s: %q", when, left)
	}
	if !r.hadNetwork && exec.Command("docker", "network", "inspect", "kind").Run() == nil {
		t.Errorf("the Docker network kind, made by the run, is left %s", when)
	}
}

// nodes are the node containers of the run's cluster.
func (r *kindRun) nodes(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("docker", "ps", "-a", "--filter", "label=io.x-k8s.kind.cluster="+r.cluster, "--format", "{{.Names}}").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(out))
}
