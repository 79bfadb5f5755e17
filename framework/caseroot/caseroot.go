// Package caseroot makes and removes the temporary directory each case runs under, and makes
// sure nothing is left: it unmounts whatever is still mounted below a root before removing it,
// remembers every root not yet removed so that a cancelled run can still clean up, and marks
// each root with its run (owner.MarkerFile) so that the next run removes what a killed one left
// (Sweep).
package caseroot

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/volperm/volperm/framework/owner"
	"github.com/volperm/volperm/framework/sweep"
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
	// The name carries the owner too (owner.Tag): a run killed before its marker file is
	// written still leaves a root the next run can tell is its.
	root, err := os.MkdirTemp(r.workDir, prefix+owner.Self().Tag()+"-")
	if err != nil {
		return "", fmt.Errorf("make case root: %w", err)
	}
	r.mu.Lock()
	r.live[root] = true
	r.mu.Unlock()
	if err := os.Chmod(root, 0755); err != nil {
		return "", errors.Join(fmt.Errorf("chmod case root: %w", err), r.Remove(root))
	}
	if err := owner.Write(root); err != nil {
		return "", errors.Join(err, r.Remove(root))
	}
	return root, nil
}

// Remove unmounts whatever is still mounted below root (deepest first) and removes it. It never
// removes across a mount point.
func (r *Roots) Remove(root string) error {
	if err := removeRoot(root); err != nil {
		return err
	}
	r.mu.Lock()
	delete(r.live, root)
	r.mu.Unlock()
	return nil
}

func removeRoot(root string) error {
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

// Prefix opens the name of every case root and of every other directory volperm makes in a
// work dir: Sweep looks at these only.
const Prefix = "volperm-"

// Left is a directory a dead run left in a work dir.
type Left struct {
	Dir   string
	Owner owner.Mark
	// Mounts are what was still mounted at or below Dir.
	Mounts []string
}

// Sweep finds the directories named volperm-* in workDir ("" = os.TempDir()) whose marker
// (or, when a kill came before the marker was written, whose name: owner.Tag) names a run that
// is no longer alive, and, unless dryRun, unmounts what is mounted below each
// (deepest first) and removes it. A directory without a marker, or of a live run, or of another
// machine's run, is never touched. It returns what it found (and removed), and the errors of
// the ones it could not remove.
func Sweep(workDir string, dryRun bool) ([]Left, error) {
	if workDir == "" {
		workDir = os.TempDir()
	}
	entries, err := os.ReadDir(workDir)
	if err != nil {
		return nil, fmt.Errorf("sweep %s: %w", workDir, err)
	}
	var left []Left
	var errs []error
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), Prefix) {
			continue
		}
		dir := filepath.Join(workDir, e.Name())
		m, ok := owner.Read(dir)
		if !ok {
			m, ok = owner.FromTag(e.Name())
		}
		if !ok || m.Alive() {
			continue
		}
		mounts, err := mountinfo.AtOrBelow(dir)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		left = append(left, Left{Dir: dir, Owner: m, Mounts: mounts})
		if !dryRun {
			errs = append(errs, removeRoot(dir))
		}
	}
	return left, errors.Join(errs...)
}

func init() {
	sweep.Register("case roots", func(_ context.Context, o sweep.Options) ([]string, error) {
		dirs := []string{os.TempDir()}
		if o.WorkDir != "" && filepath.Clean(o.WorkDir) != filepath.Clean(os.TempDir()) {
			dirs = append(dirs, o.WorkDir)
		}
		var found []string
		var errs []error
		for _, d := range dirs {
			left, err := Sweep(d, o.DryRun)
			for _, l := range left {
				found = append(found, fmt.Sprintf("directory %s of %s (%d mounts below it)", l.Dir, l.Owner, len(l.Mounts)))
			}
			errs = append(errs, err)
		}
		return found, errors.Join(errs...)
	})
}
