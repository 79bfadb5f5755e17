package e2etest

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestListed: the Makefile's E2E_TESTS names exactly the tests that call Gate, and its e2e
// target's packages hold them all, so that `make e2e` runs every test `make test` skips as
// end-to-end, and no other.
func TestListed(t *testing.T) {
	root := filepath.Join("..", "..")
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^E2E_TESTS \?= (.*)$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("the Makefile has no line E2E_TESTS ?= ...")
	}
	listed := strings.Split(strings.TrimSpace(string(m[1])), "|")
	recipe := regexp.MustCompile(`(?m)^e2e:\n\t.*\$\$'\)? (.*)$`).FindSubmatch(mk)
	if recipe == nil {
		t.Fatal("the Makefile's e2e target does not end with its packages")
	}
	packages := map[string]bool{}
	for _, p := range strings.Fields(string(recipe[1])) {
		packages[filepath.Clean(p)] = true
	}
	gated := regexp.MustCompile(`func (Test\w+)\(t \*testing\.T\) \{\n(?:\s*//.*\n)*\s*e2etest\.Gate\(t\)`)
	var found []string
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "e2e" && path != root) {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range gated.FindAllSubmatch(b, -1) {
			found = append(found, string(m[1]))
			if dir, _ := filepath.Rel(root, filepath.Dir(path)); !packages[dir] {
				t.Errorf("%s in %s: the Makefile's e2e target does not test ./%s", m[1], path, dir)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(listed)
	slices.Sort(found)
	if !slices.Equal(listed, found) {
		t.Errorf("the Makefile's E2E_TESTS %q, want the tests that call e2etest.Gate first: %q", listed, found)
	}
}
