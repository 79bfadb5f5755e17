package caseroot

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/volperm/volperm/framework/caseroot/caseroottest"
	"github.com/volperm/volperm/framework/owner"
	"github.com/volperm/volperm/hostfeature"
	"github.com/volperm/volperm/nodeimpl/mountinfo"
)

func TestRemoveUnmountsLeftovers(t *testing.T) {
	hostfeature.Need(t, hostfeature.Root) // mounting tmpfs needs root
	r, err := New(caseroottest.TempDir(t))
	if err != nil {
		t.Fatal(err)
	}
	root, err := r.Make("volperm-test-")
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(root); st.Mode().Perm() != 0755 {
		t.Errorf("root mode %v, want 0755", st.Mode().Perm())
	}
	mp := filepath.Join(root, "a b", "m")
	if err := os.MkdirAll(mp, 0755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", mp, "tmpfs", 0, "size=1m"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mp, "f"), nil, 0644); err != nil {
		t.Fatal(err)
	}
	if m, _ := mountinfo.AtOrBelow(root); len(m) != 1 || m[0] != mp {
		t.Fatalf("MountsBelow = %q, want [%q]", m, mp)
	}
	if err := r.RemoveAll(); err != nil {
		t.Fatal(err)
	}
	if m, _ := mountinfo.AtOrBelow(root); len(m) != 0 {
		t.Fatalf("mounts left: %q", m)
	}
	if _, err := os.Stat(root); !os.IsNotExist(err) {
		t.Fatalf("root left: %v", err)
	}
}

func TestNewRejectsMissingWorkDir(t *testing.T) {
	if _, err := New("/nonexistent/volperm"); err == nil {
		t.Fatal("want an error")
	}
}

func TestNewRejectsAWorkDirOthersCannotPass(t *testing.T) {
	d := t.TempDir() // its parent is 0700
	if _, err := New(d); err == nil || !strings.Contains(err.Error(), "other users cannot pass through it") {
		t.Fatalf("New(%s) = %v, want a refusal naming the 0700 parent", d, err)
	}
}

// TestSweep: only directories of dead runs are removed, their mounts first; a live run's, an
// unmarked one and a file outside are untouched; a dry run removes nothing.
func TestSweep(t *testing.T) {
	hostfeature.Need(t, hostfeature.Root) // mounting tmpfs needs root
	work := caseroottest.TempDir(t)
	// A dead run's root: made by a child volperm process would be best; a marker naming an
	// exited process is the same to Sweep.
	dead := filepath.Join(work, "volperm-ref-dead")
	if err := os.MkdirAll(filepath.Join(dead, "m"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/sh", "-c", "exit 0")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	m := owner.Self()
	m.PID, m.StartTime = cmd.Process.Pid, 1
	b, _ := json.Marshal(m)
	if err := os.WriteFile(filepath.Join(dead, owner.MarkerFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", filepath.Join(dead, "m"), "tmpfs", 0, ""); err != nil {
		t.Fatal(err)
	}
	// Named by a dead run, killed before its marker was written.
	unmarkedDead := filepath.Join(work, "volperm-exec-"+fmt.Sprintf("%d.%d", cmd.Process.Pid, 1)+"-7")
	live := filepath.Join(work, "volperm-ref-live")
	foreign := filepath.Join(work, "volperm-not-ours")
	for _, d := range []string{unmarkedDead, live, foreign} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := owner.Write(live); err != nil {
		t.Fatal(err)
	}
	canary := filepath.Join(work, "canary")
	if err := os.WriteFile(canary, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}

	left, err := Sweep(work, true)
	if err != nil || len(left) != 2 {
		t.Fatalf("dry run: %v, %+v; want the two dead dirs", err, left)
	}
	for _, d := range []string{dead, unmarkedDead} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("dry run removed %s", d)
		}
	}
	if left, err = Sweep(work, false); err != nil || len(left) != 2 {
		t.Fatalf("sweep: %v, %+v", err, left)
	}
	for _, d := range []string{dead, unmarkedDead} {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s not removed: %v", d, err)
		}
	}
	if mounts, _ := mountinfo.AtOrBelow(dead); len(mounts) > 0 {
		t.Errorf("mounts left: %q", mounts)
	}
	for _, d := range []string{live, foreign, canary} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s touched: %v", d, err)
		}
	}
}
