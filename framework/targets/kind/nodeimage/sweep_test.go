package nodeimage

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/sweep"
	"github.com/volperm/volperm/hostfeature"
	"github.com/volperm/volperm/nodeimpl/mountinfo"
)

// TestSweepInterruptedBuild: a build killed while debootstrap had /proc mounted in its rootfs
// leaves rootfs.tmp with the mount; the sweep leaves it while a build holds the cache's lock,
// and otherwise unmounts and removes it, never touching the finished artifacts beside it.
func TestSweepInterruptedBuild(t *testing.T) {
	hostfeature.Need(t, hostfeature.Root) // mounting needs root
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	cache, err := DefaultCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(cache, "rootfs-containerd2.tmp")
	done := filepath.Join(cache, "runtime")
	for _, d := range []string{filepath.Join(tmp, "proc"), filepath.Join(tmp, "usr", "bin"), done} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mount("proc", filepath.Join(tmp, "proc"), "proc", 0, ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(filepath.Join(tmp, "proc"), syscall.MNT_DETACH) })

	// A build holds the lock: its directory is its own.
	unlock, err := framework.LockFile(context.Background(), filepath.Join(cache, "build.lock"), func() {})
	if err != nil {
		t.Fatal(err)
	}
	if found, err := sweepBuilds(context.Background(), sweep.Options{}); err != nil || len(found) != 0 {
		t.Fatalf("with a live build: found %q, %v; want nothing", found, err)
	}
	if _, err := os.Stat(tmp); err != nil {
		t.Fatalf("the live build's directory went: %v", err)
	}
	unlock()

	found, err := sweepBuilds(context.Background(), sweep.Options{DryRun: true})
	if err != nil || len(found) != 1 {
		t.Fatalf("dry run: found %q, %v; want the interrupted build", found, err)
	}
	if _, err := os.Stat(tmp); err != nil {
		t.Fatalf("a dry run removed it: %v", err)
	}
	found, err = sweepBuilds(context.Background(), sweep.Options{})
	if err != nil || len(found) != 1 {
		t.Fatalf("found %q, %v; want the interrupted build", found, err)
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("%s is still there: %v", tmp, err)
	}
	if m, _ := mountinfo.AtOrBelow(cache); len(m) > 0 {
		t.Errorf("mounts left: %q", m)
	}
	if _, err := os.Stat(done); err != nil {
		t.Errorf("a finished artifact went: %v", err)
	}
}
