// Package caseroot makes and removes the temporary directory each case runs under, and makes
// sure nothing is left: it unmounts whatever is still mounted below a root before removing it,
// and remembers every root not yet removed so that a cancelled run can still clean up.
package caseroot

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"syscall"
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
	return &Roots{workDir: workDir, live: map[string]bool{}}, nil
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
	mounts, err := MountsBelow(root)
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

// MountsBelow lists the mount points under dir from /proc/self/mountinfo, deepest first.
func MountsBelow(dir string) ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		if mp := unescape(fields[4]); strings.HasPrefix(mp, dir+"/") {
			out = append(out, mp)
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out, sc.Err()
}

// unescape undoes mountinfo's octal escapes (\040 for a space, ...).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			var v int
			if _, err := fmt.Sscanf(s[i+1:i+4], "%03o", &v); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
