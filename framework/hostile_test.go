package framework

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Hostile case files get a one-line error naming the file, without reading or building what
// they describe (issue: a case file of a hundred megabytes, a hundred thousand volumes, deeply
// nested).
func TestHostileCaseFiles(t *testing.T) {
	dir := t.TempDir()
	huge := filepath.Join(dir, "huge.yaml")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	// 100 MB, sparse: the loader must refuse it by its size, not read it.
	if err := f.Truncate(100 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()

	var vols strings.Builder
	vols.WriteString("apiVersion: volperm.dev/v1\nkind: Case\nname: many volumes\narea: emptydir\nprofile: conformance\npod:\n  apiVersion: v1\n  kind: Pod\n  metadata: {name: p}\n  spec:\n    containers: [{name: c, image: x}]\n    volumes:\n")
	for i := 0; i < 100000; i++ {
		fmt.Fprintf(&vols, "    - {name: v%d, emptyDir: {}}\n", i)
	}
	many := filepath.Join(dir, "many.yaml")
	deep := filepath.Join(dir, "deep.yaml")
	deepBlock := filepath.Join(dir, "deep-block.yaml")
	var block strings.Builder
	block.WriteString("apiVersion: volperm.dev/v1\nkind: Case\nname: x\npod:\n")
	for i := 0; i < 3000; i++ {
		block.WriteString(strings.Repeat(" ", i+2) + "a:\n")
	}
	for p, data := range map[string]string{
		many:      vols.String(),
		deep:      "apiVersion: volperm.dev/v1\nkind: Case\nname: x\npod: " + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "\n",
		deepBlock: block.String(),
	} {
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for path, want := range map[string]string{
		huge:      "a case file may have at most 16777216",
		many:      "100000 volumes; a case may have at most 1000",
		deep:      "deep.yaml: document 1",
		deepBlock: "deep-block.yaml: document 1",
	} {
		_, err := LoadFile(path, Gates{})
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), filepath.Base(path)) {
			t.Errorf("%s: error %v, want one line naming the file and containing %q", filepath.Base(path), err, want)
		}
	}
}
