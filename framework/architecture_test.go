package framework_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestPackageTable: docs/architecture.md "Packages, one job each" names every package of the
// module and every module beside it, one short line each (issue 35: the map a newcomer reads
// first stays a map).
func TestPackageTable(t *testing.T) {
	const root = ".."
	doc, err := os.ReadFile(filepath.Join(root, "docs/architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	a := strings.Index(text, "## Packages, one job each")
	b := strings.Index(text, "## What may import what")
	if a < 0 || b < a {
		t.Fatal(`docs/architecture.md has no section "Packages, one job each" before "What may import what"`)
	}
	row := regexp.MustCompile("^\\| `([^`]+)`(?:, `([^`]+)`)?(?: \\(modules?\\))? \\|")
	named := map[string]bool{}
	for _, line := range strings.Split(text[a:b], "\n") {
		m := row.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		named[m[1]] = true
		if m[2] != "" {
			named[m[2]] = true
		}
		if n := len(line); n > 160 {
			t.Errorf("the line of %s is %d characters: keep it under 160, the rest goes in its package comment", m[1], n)
		}
	}
	want := map[string]string{} // dir -> what it is
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if rel != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "bin" || name == "reports" || name == "vendor") {
			return filepath.SkipDir
		}
		if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && rel != "." {
			want[filepath.ToSlash(rel)] = "module"
			return filepath.SkipDir
		}
		files, _ := filepath.Glob(filepath.Join(path, "*.go"))
		for _, f := range files {
			switch {
			case !strings.HasSuffix(f, "_test.go"):
				want[filepath.ToSlash(rel)] = "package"
			case want[filepath.ToSlash(rel)] == "":
				want[filepath.ToSlash(rel)] = "tests" // named if the table wants, not required
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(want) < 50 {
		t.Fatalf("found only %d packages and modules under %s: the walk is wrong", len(want), root)
	}
	for dir, what := range want {
		if dir == "." || what == "tests" {
			continue
		}
		if !named[dir] {
			t.Errorf("docs/architecture.md's package table has no line for the %s %s", what, dir)
		}
	}
	for dir := range named {
		if want[dir] == "" {
			t.Errorf("docs/architecture.md's package table names %s, which is no package or module of this repository", dir)
		}
	}
}
