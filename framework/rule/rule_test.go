package rule

import (
	"strings"
	"testing"
)

func TestBoundaryOf(t *testing.T) {
	for v, want := range map[int64]string{-1: "below", 0: "lowest", 0750: "inside", 01777: "highest", 02000: "above"} {
		if got := BoundaryOf(v, 0, 01777); got != want {
			t.Errorf("BoundaryOf(%#o) = %s, want %s", v, got, want)
		}
	}
}

// TestCover: a rule's cases are counted once per case, every condition needed and not seen is
// a gap, a rule no case applies is a gap, and a hit of an unknown rule is an error.
func TestCover(t *testing.T) {
	hits := map[string][]Hit{
		"a": {{WalkPolicy, []Cond{{Root, "match"}, {SetUp, "first"}}}, {WalkPolicy, []Cond{{Root, "gid"}, {SetUp, "restart"}}}},
		"b": {{WalkPolicy, []Cond{{Root, "match"}, {SetUp, "first"}}}},
	}
	cov, err := Cover([]string{"a", "b"}, hits)
	if err != nil {
		t.Fatal(err)
	}
	var policy RuleCoverage
	for _, rc := range cov.Rules {
		if rc.Rule.ID == WalkPolicy {
			policy = rc
		}
	}
	if strings.Join(policy.Cases, ",") != "a,b" || len(policy.Seen[Cond{Root, "match"}]) != 2 || len(policy.Seen[Cond{Root, "gid"}]) != 1 {
		t.Errorf("walk.policy coverage: cases %v, seen %v", policy.Cases, policy.Seen)
	}
	var missing []string
	for _, m := range policy.Missing {
		missing = append(missing, m.String())
	}
	if strings.Join(missing, ",") != "root=setgid,root=bits" {
		t.Errorf("missing %v, want root=setgid,root=bits", missing)
	}
	gaps := strings.Join(cov.Gaps(), "\n")
	for _, want := range []string{"walk.policy: no case under root=setgid", "walk.mask: no case applies it"} {
		if !strings.Contains(gaps, want) {
			t.Errorf("gaps lack %q:\n%s", want, gaps)
		}
	}
	if _, err := Cover([]string{"c"}, map[string][]Hit{"c": {{"no.such-rule", nil}}}); err == nil {
		t.Error("a hit of an unknown rule is not an error")
	}
}

// TestRulesAreWellFormed: IDs unique, every needed dimension has values, every value needed
// is one of its dimension's.
func TestRulesAreWellFormed(t *testing.T) {
	seen := map[ID]bool{}
	for _, r := range All {
		if seen[r.ID] {
			t.Errorf("rule %s twice", r.ID)
		}
		seen[r.ID] = true
		if r.Section == "" || r.Says == "" {
			t.Errorf("rule %s lacks a section or a line", r.ID)
		}
		for _, n := range r.Needs {
			if len(Values[n.Dim]) == 0 {
				t.Errorf("rule %s needs dimension %q, which has no values", r.ID, n.Dim)
			}
			for _, v := range n.Only {
				found := false
				for _, w := range Values[n.Dim] {
					found = found || v == w
				}
				if !found {
					t.Errorf("rule %s needs %s=%s, not a value of %s", r.ID, n.Dim, v, n.Dim)
				}
			}
		}
	}
}
