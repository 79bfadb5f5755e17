package catalogue_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/volperm/volperm/framework/catalogue"
	"github.com/volperm/volperm/framework/oracle"
	"github.com/volperm/volperm/framework/rule"
)

// TestCatalogueCoversEveryRule is issue 11's coverage test (docs/coverage.md): every rule of
// docs/spec.md is applied by at least one case, under every condition it needs (both sides of
// each boundary, every medium and volume type it depends on, gates at default and set, first
// SetUp and restart).
func TestCatalogueCoversEveryRule(t *testing.T) {
	cov, err := oracle.Coverage(catalogue.All())
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range cov.Gaps() {
		t.Error(g)
	}
	if t.Failed() {
		t.Log("\n" + cov.Text(false))
	}
}

// TestSpecNamesEveryRule: each rule's ID is written in brackets in docs/spec.md, and every
// bracketed ID there is a rule.
func TestSpecNamesEveryRule(t *testing.T) {
	data, err := os.ReadFile("../../docs/spec.md")
	if err != nil {
		t.Fatal(err)
	}
	spec := string(data)
	for _, r := range rule.All {
		if !strings.Contains(spec, "["+string(r.ID)+"]") {
			t.Errorf("docs/spec.md does not name rule [%s] (%s)", r.ID, r.Says)
		}
	}
	for _, m := range regexp.MustCompile(`\[([a-z]+\.[a-z-]+)\]`).FindAllStringSubmatch(spec, -1) {
		if _, ok := rule.Get(rule.ID(m[1])); !ok {
			t.Errorf("docs/spec.md names [%s], which is not in rule.All", m[1])
		}
	}
}

// TestExplainIsExpect: recording the rules changes nothing the oracle answers.
func TestExplainIsExpect(t *testing.T) {
	for _, c := range catalogue.All() {
		got, _ := oracle.Explain(c)
		want := oracle.Expect(c)
		if string(got.JSON()) != string(want.JSON()) {
			t.Errorf("case %q: Explain and Expect differ", c.Name)
		}
	}
}
