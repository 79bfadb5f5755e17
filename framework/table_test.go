package framework

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Issue 35: the releases and the gates are each defined in one table. No Go source of the
// module but release.go writes a patch release ("v1.N.P") in code, and none but gate.go lists
// gates in a map or slice literal of gate names; comments may name them.
func TestOneTablePerConcept(t *testing.T) {
	// A Kubernetes patch release (minor 20 and on); runc's "v1.5.2" is another project's.
	patch := regexp.MustCompile(`"v1\.[2-9]\d\.\d+"`)
	gateList := regexp.MustCompile(`\{\s*(framework\.)?Gate[A-Z]\w*(: true)?,\s*(framework\.)?Gate[A-Z]\w*`)
	err := filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "agents" || d.Name() == "e2e" || d.Name() == "build" || strings.HasPrefix(d.Name(), ".")) && p != ".." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(data), "\n") {
			code, _, _ := strings.Cut(line, "//")
			if patch.MatchString(code) && filepath.Base(p) != "release.go" {
				t.Errorf("%s:%d writes a patch release; name it through framework's release table (release.go): %s", p, i+1, strings.TrimSpace(line))
			}
			if gateList.MatchString(code) && filepath.Base(p) != "gate.go" {
				t.Errorf("%s:%d lists gates; read framework's gate table (gate.go): %s", p, i+1, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
