package mountinfo

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/volperm/volperm/hostfeature"
)

func TestUnescape(t *testing.T) {
	for in, want := range map[string]string{`/a\040b`: "/a b", `/plain`: "/plain", `/t\011ab`: "/t\tab", `/x\`: `/x\`} {
		if got := unescape(in); got != want {
			t.Errorf("unescape(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestAtAndAtOrBelow(t *testing.T) {
	hostfeature.Need(t, hostfeature.Root) // mounting tmpfs needs root
	dir := t.TempDir()
	mp := filepath.Join(dir, "with space", "m")
	if err := os.MkdirAll(mp, 0755); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ { // stacked twice
		if err := syscall.Mount("tmpfs", mp, "tmpfs", 0, "size=1m"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = syscall.Unmount(mp, 0) })
	}
	m, err := At(mp)
	if err != nil || m == nil || m.FSType != "tmpfs" || m.Point != mp {
		t.Fatalf("At = %+v, %v", m, err)
	}
	below, err := AtOrBelow(dir)
	if err != nil || len(below) != 2 || below[0] != mp {
		t.Fatalf("AtOrBelow = %q, %v; want the point twice", below, err)
	}
	if none, _ := At(dir); none != nil {
		t.Fatalf("At(%s) = %+v, want nil", dir, none)
	}
	// A file bound on a file, and a directory bound on itself, are mounts' roots too: At must
	// not take them for plain paths (its statx fast path).
	file := filepath.Join(dir, "file")
	self := filepath.Join(dir, "self")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(self, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{file, self} {
		if err := syscall.Mount(p, p, "", syscall.MS_BIND, ""); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = syscall.Unmount(p, 0) })
		if m, err := At(p); err != nil || m == nil || m.Point != p {
			t.Errorf("At(%s) = %+v, %v; want the bind mount", p, m, err)
		}
	}
	if none, err := At(filepath.Join(dir, "missing")); none != nil || err != nil {
		t.Errorf("At(missing) = %+v, %v; want nil", none, err)
	}
}

// TestUnmountWhileBusy: a mount held busy by an open file (as a child forked into a new user
// namespace holds one until it execs) comes off once the file closes; held past a second, the
// kernel's EBUSY is the answer.
func TestUnmountWhileBusy(t *testing.T) {
	hostfeature.Need(t, hostfeature.Root) // mounting tmpfs needs root
	mp := t.TempDir()
	if err := syscall.Mount("tmpfs", mp, "tmpfs", 0, "size=1m"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(mp, syscall.MNT_DETACH) })
	hold := func() *os.File {
		f, err := os.Create(filepath.Join(mp, "f"))
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	f := hold()
	if err := Unmount(mp, 0); !errors.Is(err, syscall.EBUSY) {
		t.Fatalf("Unmount with a file open for longer than a second = %v, want EBUSY", err)
	}
	time.AfterFunc(200*time.Millisecond, func() { f.Close() })
	if err := Unmount(mp, 0); err != nil {
		t.Fatalf("Unmount with a file closed after 200 ms = %v, want nil", err)
	}
	if m, _ := At(mp); m != nil {
		t.Fatalf("%s still mounted: %+v", mp, m)
	}
}
