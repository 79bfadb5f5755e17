// Package caseroot makes and removes the temporary directory each case runs under, and makes
// sure nothing is left: it unmounts whatever is still mounted below a root before removing it,
// and remembers every root not yet removed so that a cancelled run can still clean up.
package caseroot

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/volperm/volperm/nodeimpl/mountinfo"
)

// Roots hands out case roots under one work directory.
type Roots struct {
	workDir string

	mu   sync.Mutex
	live map[string]bool
}

// New checks workDir ("" = os.TempDir()).
func New(workDir string) (*Roots, error) {
	if workDir == "" {
		workDir = os.TempDir()
	}
	if st, err := os.Stat(workDir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("work dir %q is not a directory: give an existing directory", workDir)
	}
	if err := searchable(workDir); err != nil {
		return nil, err
	}
	return &Roots{workDir: workDir, live: map[string]bool{}}, nil
}

// searchable checks that every directory from / to dir lets other users through (o+x): probes
// run as other uids and would see EACCES before they reach a volume.
func searchable(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	for d := abs; ; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		if err != nil {
			return err
		}
		if st.Mode().Perm()&0001 == 0 {
			return fmt.Errorf("work dir %s: %s is mode %04o, other users cannot pass through it, and probes run as other uids: give a work dir whose parents are all o+x (e.g. mode 0755)", dir, d, st.Mode().Perm())
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}

// Make creates a new root (mode 0755: probes run as other uids must reach the volumes).
func (r *Roots) Make(prefix string) (string, error) {
	root, err := os.MkdirTemp(r.workDir, prefix)
	if err != nil {
		return "", fmt.Errorf("make case root: %w", err)
	}
	r.mu.Lock()
	r.live[root] = true
	r.mu.Unlock()
	if err := os.Chmod(root, 0755); err != nil {
		return "", errors.Join(fmt.Errorf("chmod case root: %w", err), r.Remove(root))
	}
	return root, nil
}

// Remove unmounts whatever is still mounted below root (deepest first) and removes it. It never
// removes across a mount point.
func (r *Roots) Remove(root string) error {
	mounts, err := mountinfo.AtOrBelow(root)
	if err != nil {
		return err
	}
	for _, m := range mounts {
		if err := syscall.Unmount(m, 0); err != nil {
			if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil {
				return fmt.Errorf("unmount leftover %s: %w", m, err)
			}
		}
	}
	if err := os.RemoveAll(root); err != nil {
		return fmt.Errorf("remove case root: %w", err)
	}
	r.mu.Lock()
	delete(r.live, root)
	r.mu.Unlock()
	return nil
}

// RemoveAll removes every root not yet removed.
func (r *Roots) RemoveAll() error {
	r.mu.Lock()
	roots := make([]string, 0, len(r.live))
	for root := range r.live {
		roots = append(roots, root)
	}
	r.mu.Unlock()
	var errs []error
	for _, root := range roots {
		errs = append(errs, r.Remove(root))
	}
	return errors.Join(errs...)
}
