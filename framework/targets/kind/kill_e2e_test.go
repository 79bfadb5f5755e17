package kind_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestKindKilled kills `volperm run --target kind` with SIGKILL once its cluster's node is up,
// then runs `volperm cleanup`: the cluster, the run's directory and (when the run made it) the
// Docker network kind are gone (docs/cleanup.md). Set VOLPERM_KIND_E2E=1 to run it; the node
// image must be built already (volperm cluster image), or the first run builds it.
func TestKindKilled(t *testing.T) {
	if os.Getenv("VOLPERM_KIND_E2E") != "1" {
		t.Skip("set VOLPERM_KIND_E2E=1 to create kind clusters (needs root and Docker)")
	}
	_, here, _, _ := runtime.Caller(0)
	repo := filepath.Join(filepath.Dir(here), "..", "..", "..")
	bin := filepath.Join(t.TempDir(), "volperm")
	if out, err := exec.Command("go", "build", "-o", bin, filepath.Join(repo, "cmd", "volperm")).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	hadNetwork := exec.Command("docker", "network", "inspect", "kind").Run() == nil
	cmd := exec.Command(bin, "run", "--target", "kind", "--focus", "hostPath type Socket", "--report-dir", t.TempDir())
	cmd.Dir = repo
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill once a node container of the run exists (kind is creating or has created it).
	deadline := time.Now().Add(30 * time.Minute)
	for len(volpermNodes(t)) == 0 {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("no kind node within 30 minutes")
		}
		time.Sleep(500 * time.Millisecond)
	}
	time.Sleep(5 * time.Second)
	cmd.Process.Kill()
	cmd.Wait()
	if len(volpermNodes(t)) == 0 {
		t.Fatal("the killed run left no node: nothing to test")
	}
	out, err := exec.Command(bin, "cleanup").CombinedOutput()
	t.Logf("volperm cleanup:\n%s", out)
	if err != nil {
		t.Fatalf("volperm cleanup: %v", err)
	}
	if n := volpermNodes(t); len(n) > 0 {
		t.Errorf("kind nodes left after cleanup: %q", n)
	}
	if dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "volperm-kind-*")); len(dirs) > 0 {
		t.Errorf("run directories left: %q", dirs)
	}
	if !hadNetwork && exec.Command("docker", "network", "inspect", "kind").Run() == nil {
		t.Error("the Docker network kind, made by the killed run, is left")
	}
}

// TestKindInterrupted sends SIGINT to `volperm run --target kind` while kind creates its
// cluster: the command owns the signal (the target installs no handler of its own), the run
// stops with a failure, and its cluster, directory and (when it made it) the Docker network kind
// are gone without a `volperm cleanup`. Set VOLPERM_KIND_E2E=1 to run it.
func TestKindInterrupted(t *testing.T) {
	if os.Getenv("VOLPERM_KIND_E2E") != "1" {
		t.Skip("set VOLPERM_KIND_E2E=1 to create kind clusters (needs root and Docker)")
	}
	_, here, _, _ := runtime.Caller(0)
	repo := filepath.Join(filepath.Dir(here), "..", "..", "..")
	bin := filepath.Join(t.TempDir(), "volperm")
	if out, err := exec.Command("go", "build", "-o", bin, filepath.Join(repo, "cmd", "volperm")).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	hadNetwork := exec.Command("docker", "network", "inspect", "kind").Run() == nil
	var out strings.Builder
	cmd := exec.Command(bin, "run", "--target", "kind", "--focus", "hostPath type Socket", "--report-dir", t.TempDir())
	cmd.Dir, cmd.Stdout, cmd.Stderr = repo, &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.Now().Add(30 * time.Minute)
	for len(volpermNodes(t)) == 0 {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("no kind node within 30 minutes")
		}
		time.Sleep(500 * time.Millisecond)
	}
	time.Sleep(5 * time.Second)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err == nil {
			t.Errorf("exit 0 after SIGINT, want non-zero:\n%s", out.String())
		}
	case <-time.After(5 * time.Minute):
		cmd.Process.Kill()
		t.Fatalf("volperm run did not stop within 5 minutes of SIGINT:\n%s", out.String())
	}
	t.Logf("volperm run after SIGINT:\n%s", out.String())
	if n := volpermNodes(t); len(n) > 0 {
		t.Errorf("kind nodes left after SIGINT: %q", n)
	}
	if dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "volperm-kind-*")); len(dirs) > 0 {
		t.Errorf("run directories left: %q", dirs)
	}
	if !hadNetwork && exec.Command("docker", "network", "inspect", "kind").Run() == nil {
		t.Error("the Docker network kind, made by the interrupted run, is left")
	}
}

func volpermNodes(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("docker", "ps", "-a", "--filter", "label=io.x-k8s.kind.cluster", "--format", `{{.Label "io.x-k8s.kind.cluster"}}`).Output()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range strings.Fields(string(out)) {
		if strings.HasPrefix(n, "volperm-") {
			names = append(names, n)
		}
	}
	return names
}
