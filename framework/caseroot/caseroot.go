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
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/volperm/volperm/framework/caseroot/scratch"
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

// ScratchDir is where Scratch puts case roots (scratch.Dir).
const ScratchDir = scratch.Dir

// Scratch is the work dir for a target whose case roots may live on any filesystem (the
// reference kubelet: its Memory and HugePages volumes are mounts of their own): scratch.Dir when
// it is a tmpfs with room, else "" (os.TempDir()). On ext4 every mkdir and unlink of a root goes
// through the journal: the reference catalogue ran 12.7 s with its roots in /tmp against 4.8 s
// in /dev/shm (docs/bench.md, tmpfs-vs-disk-roots).
func Scratch() string { return scratch.Usable() }

// ScratchForAnyProgram is Scratch for a target whose case roots hold what another program
// runs or opens (an exec agent's TMPDIR, the flexVolume driver the upstream agent executes,
// the device nodes of hostPath fixtures): scratch.Dir only when it is also mounted without
// noexec and nodev, else "" (os.TempDir()).
func ScratchForAnyProgram() string { return scratch.UsableForAnyTarget() }

// New checks workDir ("" = os.TempDir()).
func New(workDir string) (*Roots, error) {
	if workDir == "" {
		workDir = os.TempDir()
	}
	if st, err := os.Stat(workDir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("work dir %q is not a directory: give an existing directory", workDir)
	}
	if err := scratch.Searchable(workDir); err != nil {
		return nil, err
	}
	return &Roots{workDir: workDir, live: map[string]bool{}}, nil
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
	if err := mountinfo.UnmountAtOrBelow(root, 0); err != nil {
		// Busy: detached, so that the root can go; the kernel frees it when its last user does.
		if err := mountinfo.UnmountAtOrBelow(root, syscall.MNT_DETACH); err != nil {
			return fmt.Errorf("unmount leftovers: %w", err)
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
		// The default work dirs (os.TempDir and Scratch) and the run's own.
		dirs := []string{os.TempDir()}
		for _, d := range []string{Scratch(), o.WorkDir} {
			if d != "" && !slices.Contains(dirs, filepath.Clean(d)) {
				dirs = append(dirs, filepath.Clean(d))
			}
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
