package docnumbers

import (
	"encoding/json"
	"encoding/xml"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/catalogue"
	"github.com/volperm/volperm/suites"
)

var update = flag.Bool("update", false, "rewrite the marked numbers of README.md and docs/*.md from the code")

// root is the repository, from this package's directory.
const root = "../.."

// docs are README.md and docs/*.md.
func docs(t *testing.T) []string {
	t.Helper()
	md, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{filepath.Join(root, "README.md")}, md...)
}

// TestDocNumbers: every number marked <!--volperm:NAME-->VALUE<!--/volperm--> in README.md and
// docs/*.md is the code's (Numbers), so that no count in the docs goes stale (issue 51).
// Regenerate: make docs (go test ./framework/docnumbers -run TestDocNumbers -args -update).
func TestDocNumbers(t *testing.T) {
	n := Numbers()
	marked := 0
	for _, path := range docs(t) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		marked += len(marker.FindAllString(string(b), -1))
		out, diffs := Fill(string(b), n)
		if len(diffs) == 0 {
			continue
		}
		if *update && out != string(b) {
			if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: rewrote %d number(s)", path, len(diffs))
			continue
		}
		for _, d := range diffs {
			t.Errorf("%s %s (regenerate: make docs)", strings.TrimPrefix(path, root+"/"), d)
		}
	}
	if marked == 0 {
		t.Error("no marked number in README.md or docs/*.md: is the marker syntax still <!--volperm:NAME-->VALUE<!--/volperm-->?")
	}
}

// TestREADMENoTypedCount: README.md types no count of cases, mutants, texts or rules: each is a
// marked number (docs/*.md keep their dated measurements, "the catalogue as it was").
func TestREADMENoTypedCount(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range Bare(string(b)) {
		t.Errorf("README.md %s: a typed count; mark it <!--volperm:NAME-->N<!--/volperm--> (names: %s)", l, strings.Join(Names(Numbers()), ", "))
	}
}

func TestBare(t *testing.T) {
	got := Bare("a 4009 cases b <!--volperm:cases-->4275<!--/volperm--> cases c 103 realistic bugs, 12 cases\n4,275 cases")
	want := []string{`line 1: "4009 cases"`, `line 1: "103 realistic bugs"`, `line 2: "4,275 cases"`}
	if !slices.Equal(got, want) {
		t.Errorf("Bare = %q, want %q", got, want)
	}
	out, diffs := Fill("x <!--volperm:cases-->1<!--/volperm--> y\n<!--volperm:nope-->2<!--/volperm-->", map[string]int{"cases": 7})
	if out != "x <!--volperm:cases-->7<!--/volperm--> y\n<!--volperm:nope-->2<!--/volperm-->" || len(diffs) != 2 {
		t.Errorf("Fill = %q, %q", out, diffs)
	}
}

// TestSample: reports/sample is a run of the whole catalogue as it is (make sample): its counts
// per area and per profile and its cases, by name, are the catalogue's, and its volperm is the
// VERSION file's, built from a commit (no local changes: the sample can be made again). Times, the kernel and the dates differ from run to run and are not
// compared.
func TestSample(t *testing.T) {
	const dir = root + "/reports/sample"
	const regen = "(regenerate: make sample, as root)"
	var s struct {
		Result   string
		Versions struct{ Volperm string }
		Target   struct{ Name string }
		Totals   struct{ Total, Passed, Failed, Skipped int }
		Areas    []struct {
			Name  string
			Total int
		}
		Profiles []struct {
			Name  string
			Total int
		}
	}
	b, err := os.ReadFile(dir + "/summary.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	all := catalogue.All()
	n := Numbers()
	if s.Target.Name != "reference" || s.Result != "passed" || s.Totals.Failed != 0 {
		t.Errorf("reports/sample: target %q, result %q, %d failed; want a passed run on reference %s", s.Target.Name, s.Result, s.Totals.Failed, regen)
	}
	if s.Totals.Total != len(all) {
		t.Errorf("reports/sample has %d cases, the catalogue %d %s", s.Totals.Total, len(all), regen)
	}
	var areas []string
	for _, a := range s.Areas {
		areas = append(areas, a.Name)
		if a.Total != n["cases-"+a.Name] {
			t.Errorf("reports/sample: area %s has %d cases, the catalogue %d %s", a.Name, a.Total, n["cases-"+a.Name], regen)
		}
	}
	var want []string
	for _, a := range framework.Areas {
		want = append(want, string(a))
	}
	if !slices.Equal(areas, want) {
		t.Errorf("reports/sample's areas are %v, the catalogue's %v %s", areas, want, regen)
	}
	for _, p := range s.Profiles {
		if p.Total != n["cases-"+p.Name] {
			t.Errorf("reports/sample: profile %s has %d cases, the catalogue %d %s", p.Name, p.Total, n["cases-"+p.Name], regen)
		}
	}
	version, err := os.ReadFile(root + "/VERSION")
	if err != nil {
		t.Fatal(err)
	}
	v := strings.TrimSpace(string(version))
	if base, _, _ := strings.Cut(s.Versions.Volperm, "+"); base != v || strings.Contains(s.Versions.Volperm, "dirty") || strings.Contains(s.Versions.Volperm, "unstamped") {
		t.Errorf("reports/sample's volperm is %q; want VERSION's %s, built from a commit without local changes %s", s.Versions.Volperm, v, regen)
	}

	// The cases, by their spec names (suites.SpecName) in junit.xml.
	f, err := os.Open(dir + "/junit.xml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var j struct {
		Suites []struct {
			Cases []struct {
				Name string `xml:"name,attr"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.NewDecoder(f).Decode(&j); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, s := range j.Suites {
		for _, c := range s.Cases {
			got[c.Name] = true
		}
	}
	missing := 0
	for _, c := range all {
		name := suites.SpecName(c, "reference")
		if !got[name] {
			if missing++; missing <= 5 {
				t.Errorf("reports/sample/junit.xml has no case %q %s", name, regen)
			}
			continue
		}
		delete(got, name)
	}
	extra := 0
	for name := range got {
		if extra++; extra <= 5 {
			t.Errorf("reports/sample/junit.xml has a case the catalogue has not: %q %s", name, regen)
		}
	}
	if missing+extra > 10 {
		t.Errorf("... %d missing and %d extra in all", missing, extra)
	}
}

// TestDocLinks: every relative link of README.md and docs/*.md names a file or directory of the
// repository (the README's sections moved to docs/ in issue 51; a link must move with them).
func TestDocLinks(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	code := regexp.MustCompile("`[^`]*`") // a code span is text, not a link
	for _, path := range docs(t) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		fenced := false
		for i, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				fenced = !fenced
			}
			if fenced {
				continue
			}
			for _, m := range link.FindAllStringSubmatch(code.ReplaceAllString(line, ""), -1) {
				target, _, _ := strings.Cut(m[1], "#")
				if target == "" || strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				if _, err := os.Stat(filepath.Join(filepath.Dir(path), target)); err != nil {
					t.Errorf("%s line %d links %s, which is not in the repository", strings.TrimPrefix(path, root+"/"), i+1, m[1])
				}
			}
		}
	}
}
