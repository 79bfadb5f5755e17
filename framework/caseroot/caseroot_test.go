package caseroot

import (
	"github.com/volperm/volperm/framework/caseroot/caseroottest"
	"github.com/volperm/volperm/nodeimpl/mountinfo"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestRemoveUnmountsLeftovers(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting tmpfs needs root")
	}
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
