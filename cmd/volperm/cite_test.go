package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every Markdown file a Go source file of the repository names (a rule's source, a doc to read)
// exists in the repository: "README.md", "docs/spec.md" are files at the repository root; a bare
// name is looked for at the root and in docs/. (The shared design notes outside the repository
// are not cited: what the project needs of them is in its own docs.)
func TestSourcesCiteExistingDocs(t *testing.T) {
	root := filepath.Join("..", "..")
	cite := regexp.MustCompile(`\b(?:[A-Za-z0-9_-]+/)*[A-Za-z0-9_.-]+\.md\b`)
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "build" || strings.HasPrefix(d.Name(), ".")) && p != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, line := range strings.Split(string(b), "\n") {
			if !strings.Contains(line, "//") {
				continue
			}
			for _, m := range cite.FindAllString(line[strings.Index(line, "//"):], -1) {
				if m == "summary.md" {
					continue // a report volperm writes, not a doc
				}
				if !exists(filepath.Join(root, m)) && !exists(filepath.Join(root, "docs", m)) {
					t.Errorf("%s cites %s, which is not in the repository", p, m)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
