package nodeimage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/sweep"
	"github.com/volperm/volperm/nodeimpl/mountinfo"
)

// An interrupted build leaves its directory NAME.tmp in the cache, and debootstrap's mounts
// inside a rootfs it was making (/proc, /sys: a Ctrl-C of CI left /proc mounted under
// rootfs.tmp; issue 52). The next build of that artifact removes it (removeTmp); `volperm
// cleanup`, and every run before it starts, removes them all while no build holds the cache's
// build lock (a live builder's are its own).
func init() { sweep.Register("node image builds", sweepBuilds) }

func sweepBuilds(ctx context.Context, o sweep.Options) ([]string, error) {
	cache, err := DefaultCacheDir()
	if err != nil {
		return nil, nil // no cache directory: nothing was built here
	}
	left, err := filepath.Glob(filepath.Join(cache, "*.tmp"))
	if err != nil || len(left) == 0 {
		return nil, err
	}
	// Not waited for: a cancelled context makes LockFile try once.
	done, cancel := context.WithCancel(ctx)
	cancel()
	unlock, err := framework.LockFile(done, filepath.Join(cache, "build.lock"), func() {})
	if err != nil {
		return nil, nil // a build is running: what is there is its own
	}
	defer unlock()
	var found []string
	var errs []error
	for _, dir := range left {
		mounts, _ := mountinfo.AtOrBelow(dir)
		found = append(found, fmt.Sprintf("interrupted node image build %s (%d mounts below it)", dir, len(mounts)))
		if !o.DryRun {
			errs = append(errs, removeTmp(dir))
		}
	}
	return found, errors.Join(errs...)
}

// removeTmp unmounts whatever is mounted at or below an interrupted build's directory (detached:
// a mount still busy goes when its last user does), then removes it. RemoveAll alone would
// descend into a mount of the host's /proc or /sys.
func removeTmp(dir string) error {
	if err := mountinfo.UnmountAtOrBelow(dir, unix.MNT_DETACH); err != nil {
		return fmt.Errorf("unmount below %s: %w", dir, err)
	}
	if m, err := mountinfo.AtOrBelow(dir); err != nil || len(m) > 0 {
		return fmt.Errorf("still mounted below %s: %s (%v): not removed", dir, strings.Join(m, ", "), err)
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove %s: %w", dir, err)
	}
	return nil
}
