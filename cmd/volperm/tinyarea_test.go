package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/caseroot/caseroottest"
	"github.com/volperm/volperm/framework/catalogue"
	"github.com/volperm/volperm/framework/report"
	"github.com/volperm/volperm/hostfeature"
)

// tinyArea is an area added the documented way (docs/architecture.md "Recipe: add an area") for
// an area of no new behaviour: a row of framework's area table (framework.RegisterArea instead
// of an edit of area.go) and its generated cases (catalogue.RegisterGenerator instead of an edit
// of catalogue.go), nothing else. Its cases are of volume types and rules other areas have, so
// the oracle, the reference node and the targets need no line of it. It is registered only in
// the process of its own TestTinyArea runs (tinyAreaChild): every other test of this binary
// sees the catalogue as it is.
const tinyArea framework.Area = "tiny"

// tinyAreaCases are the tiny area's cases: an emptyDir and a hostPath of type DirectoryOrCreate,
// as other areas have them.
const tinyAreaCases = `apiVersion: volperm.dev/v1
kind: Case
name: tiny area - an emptyDir on the default medium lets uid 1003 create
area: tiny
profile: conformance
pod:
  spec:
    volumes:
    - name: scratch
      emptyDir: {}
probes:
- {name: uid 1003 creates a file, volume: scratch, as: {uid: 1003, gid: 1003}, op: create, path: f}
---
apiVersion: volperm.dev/v1
kind: Case
name: tiny area - a hostPath DirectoryOrCreate is made 0755 root
area: tiny
profile: conformance
pod:
  spec:
    volumes:
    - name: host
      hostPath: {path: /tiny/made, type: DirectoryOrCreate}
`

const tinyAreaDescription = "a tiny area of no new behaviour (cmd/volperm/tinyarea_test.go): the recipe proven"

// registerTinyArea is the whole of adding the tiny area: its two rows.
func registerTinyArea() {
	framework.RegisterArea(framework.AreaInfo{Name: tinyArea, Description: tinyAreaDescription})
	catalogue.RegisterGenerator(func() []*framework.Case {
		cases, err := framework.LoadCases("tinyarea_test.go", []byte(tinyAreaCases), framework.Gates{})
		if err != nil {
			panic(err)
		}
		return cases
	})
}

// TestTinyArea: with the area's two rows and no other change, `volperm run` selects the area by
// its label on the catalogue, runs its cases on the reference target and passes them, and the
// reports have the area with its description; a case file of the area loads. Without the rows a
// case file of the area is refused naming the unknown area, and the catalogue has none of it.
func TestTinyArea(t *testing.T) {
	hostfeature.Need(t, hostfeature.Root)
	if os.Getenv(tinyAreaChild) != "" {
		registerTinyArea()
		dir := t.TempDir()
		code, stdout, stderr := runMain("run", "--target", "reference", "--work-dir", caseroottest.TempDir(t), "--report-dir", dir, "--label-filter", string(tinyArea))
		if code != exitOK || !strings.Contains(stdout, "PASSED on target reference") || !strings.Contains(stdout, "2 cases") {
			t.Fatalf("run: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		var s report.Summary
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		if len(s.Areas) != 1 || s.Areas[0].Name != string(tinyArea) || s.Areas[0].Description != tinyAreaDescription || s.Areas[0].Counts.Passed != 2 {
			t.Errorf("summary.json areas %+v, want the tiny area with its description, 2 passed", s.Areas)
		}
		file := writeFile(t, "tiny.yaml", tinyAreaCases)
		if code, _, stderr := runMain("expect", "-f", file); code != exitOK {
			t.Errorf("expect -f a case file of the tiny area: exit %d: %s", code, stderr)
		}
		return
	}
	child := exec.Command(os.Args[0], "-test.run", "^TestTinyArea$", "-test.count", "1")
	child.Env = append(os.Environ(), tinyAreaChild+"=1")
	if out, err := child.CombinedOutput(); err != nil {
		t.Fatalf("the run with the tiny area: %v\n%s", err, out)
	}
	file := writeFile(t, "tiny.yaml", tinyAreaCases)
	if code, _, stderr := runMain("expect", "-f", file); code == exitOK || !strings.Contains(stderr, `area: unknown "tiny"`) {
		t.Errorf("expect -f a case of an area not registered: exit %d: %s; want refused naming the area", code, stderr)
	}
	for _, c := range catalogue.All() {
		if c.Area == tinyArea {
			t.Fatalf("the catalogue of this process has the tiny area's case %q: it is registered in the child only", c.Name)
		}
	}
}

// tinyAreaChild marks TestTinyArea's own process, which registers the area.
const tinyAreaChild = "VOLPERM_TEST_TINYAREA"
