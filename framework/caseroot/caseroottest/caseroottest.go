// Package caseroottest gives tests a work dir that probes run as other uids can pass through:
// t.TempDir's parent is 0700, and caseroot refuses such a work dir.
package caseroottest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/volperm/volperm/framework/caseroot/scratch"
	"github.com/volperm/volperm/framework/owner"
)

// TempDir is a work dir open to other users (0755), removed with the test: below scratch.Dir
// when it is usable for any target's roots, as the reference target's roots are (on ext4 the mutants' catalogue runs
// spent most of their time in the journal), else t.TempDir with it and its parent opened.
func TempDir(tb testing.TB) string {
	tb.Helper()
	if s := scratch.UsableForAnyTarget(); s != "" {
		// Named with this process's owner tag (owner.FromTag) and no marker file, which tests
		// of an empty work dir would see: the next volperm run removes what a killed test left
		// (caseroot.Sweep).
		d, err := os.MkdirTemp(s, "volperm-test-"+owner.Self().Tag()+"-")
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { _ = os.RemoveAll(d) })
		if err := os.Chmod(d, 0o755); err != nil {
			tb.Fatal(err)
		}
		return d
	}
	d := tb.TempDir()
	for _, p := range []string{filepath.Dir(d), d} {
		if err := os.Chmod(p, 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	return d
}
