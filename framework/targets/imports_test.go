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

// notTargets are packages here that register no target: helpers any target may import.
var notTargets = map[string]bool{"fixturedriver": true}

// knownGaps are the imports of one target by another still to be removed (docs/architecture.md
// "Known gaps"); the test fails when one goes, so that the list shrinks with the code.
var knownGaps = map[string]bool{"kind -> cluster": true}

// TestNoTargetImportsATarget: a target shares code through framework packages (refnode,
// lifecycle, probe, ...), never by importing another target (docs/architecture.md).
func TestNoTargetImportsATarget(t *testing.T) {
	files, _ := filepath.Glob("*/*.go")
	deeper, _ := filepath.Glob("*/*/*.go")
	files = append(files, deeper...)
	seen := map[string]bool{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.ImportsOnly)
		if err != nil {
			t.Fatalf("parse %s: %v", name, err)
		}
		self, _, _ := strings.Cut(name, "/") // a target and its subpackages are one target
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			other, ok := strings.CutPrefix(path, prefix)
			other, _, _ = strings.Cut(other, "/")
			if !ok || other == self || notTargets[other] {
				continue
			}
			edge := self + " -> " + other
			seen[edge] = true
			if !knownGaps[edge] {
				t.Errorf("%s imports the target %s: share the code through a framework package instead", name, other)
			}
		}
	}
	for gap := range knownGaps {
		if !seen[gap] {
			t.Errorf("%s is listed in knownGaps but no longer imported: remove it from the list and from docs/architecture.md", gap)
		}
	}
}
