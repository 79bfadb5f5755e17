// Package caseroottest gives tests a work dir that probes run as other uids can pass through:
// t.TempDir's parent is 0700, and caseroot refuses such a work dir.
package caseroottest

import (
	"os"
	"path/filepath"
	"testing"
)

// TempDir is t.TempDir with it and its parent opened to other users (0755), removed with the test.
func TempDir(tb testing.TB) string {
	tb.Helper()
	d := tb.TempDir()
	for _, p := range []string{filepath.Dir(d), d} {
		if err := os.Chmod(p, 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	return d
}
