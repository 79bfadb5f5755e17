package mountinfo

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

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
}
