package oracle

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPureImports keeps the oracle a pure model: no syscalls, clock or randomness, and no
// dependency on the reference node it is compared with.
func TestPureImports(t *testing.T) {
	forbidden := []string{"os", "syscall", "golang.org/x/sys", "time", "math/rand", "github.com/volperm/volperm/nodeimpl"}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
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
		checked++
		for _, imp := range f.Imports {
			path, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				t.Fatalf("%s: import %s: %v", name, imp.Path.Value, err)
			}
			for _, bad := range forbidden {
				if path == bad || strings.HasPrefix(path, bad+"/") {
					t.Errorf("%s imports %q: the oracle must stay pure and independent of nodeimpl", name, path)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no package files found")
	}
}
