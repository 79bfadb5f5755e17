package userns

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestAllocate is docs/spec.md [userns.range] on the reference kubelet's allocator: every pod
// gets Length ids from a nonzero multiple of Length, no two pods of a node share a slot, and a
// pod's range read back (a restarted kubelet) is the one it got.
func TestAllocate(t *testing.T) {
	pods := t.TempDir()
	const n = 300
	got := map[uint32]string{}
	for i := range n {
		dir := filepath.Join(pods, fmt.Sprintf("pod-%d", i))
		m, err := Allocate(pods, dir)
		if err != nil {
			t.Fatal(err)
		}
		if m.Length != Length || m.HostID == 0 || m.HostID%Length != 0 {
			t.Fatalf("pod %d: range %+v, want %d ids from a nonzero multiple of %d", i, m, Length, Length)
		}
		if other, dup := got[m.HostID]; dup {
			t.Fatalf("pod %d got the range of %s (host id %d)", i, other, m.HostID)
		}
		got[m.HostID] = dir
		again, err := Allocate(pods, dir)
		if err != nil || again != m {
			t.Fatalf("pod %d read back %+v, %v; want %+v", i, again, err, m)
		}
	}
	// A record that is not one uid mapping is an error, not a new range.
	bad := filepath.Join(pods, "bad")
	if err := os.MkdirAll(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bad, fileName), []byte(`{"uidMappings":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if m, err := Allocate(pods, bad); err == nil {
		t.Errorf("a broken record gave %+v; want an error", m)
	}
}
