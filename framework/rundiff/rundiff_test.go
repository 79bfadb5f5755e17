package rundiff

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/reporters"

	"github.com/volperm/volperm/framework/report"
)

// tc is one testcase of a synthetic junit.xml: state p(assed), f(ailed), k(nown difference),
// s(kipped: could not run), n(ot applicable).
type tc struct{ name, state, msg, observed string }

func writeRun(t *testing.T, file string, cases ...tc) string {
	t.Helper()
	dir := t.TempDir()
	var s reporters.JUnitTestSuite
	for _, c := range cases {
		j := reporters.JUnitTestCase{Name: c.name, Properties: &reporters.JUnitProperties{}}
		facts := report.CaseFacts{Area: "hostpath"}
		switch c.state {
		case "f", "k":
			j.Failure = &reporters.JUnitFailure{Message: c.msg + "\nrules (docs/spec.md): [x]"}
			if c.state == "k" {
				j.Properties.Properties = append(j.Properties.Properties, reporters.JUnitProperty{Name: report.KnownDifferenceEntry, Value: c.msg})
			}
			if c.observed != "" {
				j.Properties.Properties = append(j.Properties.Properties, reporters.JUnitProperty{Name: report.ObservedEntry, Value: c.observed})
			}
		case "s":
			j.Skipped = &reporters.JUnitSkipped{Message: "skipped - " + c.msg}
		case "n":
			j.Skipped = &reporters.JUnitSkipped{Message: "skipped - " + c.msg}
			facts.NotApplicable = c.msg
		}
		raw, _ := json.Marshal(facts)
		j.Properties.Properties = append(j.Properties.Properties, reporters.JUnitProperty{Name: report.CaseProperty, Value: string(raw)})
		s.TestCases = append(s.TestCases, j)
	}
	raw, err := xml.Marshal(reporters.JUnitTestSuites{TestSuites: []reporters.JUnitTestSuite{s}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, file), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Every kind of change, between the runs of two targets (the target tag is not part of a case),
// the newer one a hydrophone result set.
func TestCompare(t *testing.T) {
	old := writeRun(t, "junit.xml",
		tc{"[a] same pass [target=upstream@v1.37.1]", "p", "", ""},
		tc{"[a] same fail [target=upstream@v1.37.1]", "f", "setUp: expected x, observed y", "{o1}"},
		tc{"[a] breaks [target=upstream@v1.37.1]", "p", "", ""},
		tc{"[a] heals [target=upstream@v1.37.1]", "f", "mode: expected 0777, observed 0755", ""},
		tc{"[a] now known [target=upstream@v1.37.1]", "p", "", ""},
		tc{"[a] cannot run now [target=upstream@v1.37.1]", "p", "", ""},
		tc{"[a] now not applicable [target=upstream@v1.37.1]", "p", "", ""},
		tc{"[a] other observation [target=upstream@v1.37.1]", "f", "mode: expected 0777, observed 0755", "{o1}"},
		tc{"[a] gone [target=upstream@v1.37.1]", "p", "", ""},
	)
	newer := writeRun(t, "junit_01.xml",
		tc{"[a] same pass [target=upstream@v1.37.2]", "p", "", ""},
		tc{"[a] same fail [target=upstream@v1.37.2]", "f", "setUp: expected x, observed y", "{o1}"},
		tc{"[a] breaks [target=upstream@v1.37.2]", "f", "mode: expected 0777, observed 0755", ""},
		tc{"[a] heals [target=upstream@v1.37.2]", "p", "", ""},
		tc{"[a] now known [target=upstream@v1.37.2]", "k", "kubelet before v1.38 words it otherwise", ""},
		tc{"[a] cannot run now [target=upstream@v1.37.2]", "s", "needs huge pages", ""},
		tc{"[a] now not applicable [target=upstream@v1.37.2]", "n", "feature imageVolumes not claimed", ""},
		tc{"[a] other observation [target=upstream@v1.37.2]", "f", "mode: expected 0777, observed 0755", "{o2}"},
		tc{"[a] new and failing [target=upstream@v1.37.2]", "f", "owner: expected 0, observed 1000", ""},
		tc{"[a] new [target=upstream@v1.37.2]", "p", "", ""},
	)
	r, err := Compare(old, newer)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range r.Changes {
		got[c.Name] = c.Kind()
	}
	want := map[string]string{
		"[a] breaks": "worse", "[a] now known": "worse", "[a] cannot run now": "worse", "[a] new and failing": "worse",
		"[a] heals": "better", "[a] now not applicable": "changed", "[a] other observation": "changed",
		"[a] new": "new", "[a] gone": "gone",
	}
	for name, kind := range want {
		if got[name] != kind {
			t.Errorf("%s: %q, want %q", name, got[name], kind)
		}
	}
	if len(got) != len(want) || r.Same != 2 || r.Worse() != 4 {
		t.Errorf("changes %v, same %d, worse %d", got, r.Same, r.Worse())
	}
	var b strings.Builder
	r.Write(&b, 2)
	out := b.String()
	for _, line := range []string{
		"(9 cases) -> " + newer + " (10 cases): 2 the same, 4 worse, 1 better, 2 changed, 1 new, 1 gone\nworse:\n",
		"  [a] breaks: passed -> failed (mode: expected 0777, observed 0755)\n",
		"  ... and 2 more (--all shows them)\n",
		"  [a] heals: failed (mode: expected 0777, observed 0755) -> passed\n",
		"  [a] now not applicable: passed -> not applicable (feature imageVolumes not claimed)\n",
		"  [a] other observation: failed (mode: expected 0777, observed 0755) -> failed (mode: expected 0777, observed 0755)\n    another Observation",
		"  [a] gone: passed -> absent\n",
	} {
		if !strings.Contains(out, line) {
			t.Errorf("the diff lacks %q:\n%s", line, out)
		}
	}
}
