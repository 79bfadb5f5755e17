// Package targets_test checks how the targets under this directory depend on each other.
package targets_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const prefix = "github.com/volperm/volperm/framework/targets/"

// TestNoTargetImportsATarget: a target shares code through framework packages (refnode,
// lifecycle, probe, cluster, ...), never by importing another target, and no framework package
// imports a target (docs/architecture.md). Every package under this directory is a target.
func TestNoTargetImportsATarget(t *testing.T) {
	err := filepath.WalkDir("..", func(name string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return err
		}
		src, err := os.ReadFile(name)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.ImportsOnly)
		if err != nil {
			return err
		}
		// A target and its subpackages are one target; "" is a framework package.
		self := ""
		if rest, ok := strings.CutPrefix(filepath.ToSlash(name), "../targets/"); ok {
			self, _, _ = strings.Cut(rest, "/")
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			other, ok := strings.CutPrefix(path, prefix)
			other, _, _ = strings.Cut(other, "/")
			switch {
			case !ok || other == self:
			case self == "":
				t.Errorf("%s, a framework package, imports the target %s: targets are plug-ins of the framework", name, other)
			default:
				t.Errorf("%s imports the target %s: share the code through a framework package instead", name, other)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
