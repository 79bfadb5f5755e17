package catalogue

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/volperm/volperm/framework"
)

// painIssues are the upstream issues of issue 11's step 3 that the catalogue models, each with
// the number of cases that must at least carry it.
var painIssues = map[string]int{
	"76158": 3, "110835": 3, "57923": 3, "67814": 3, "30378": 3, "83125": 3, "90263": 3, "82573": 3, "69699": 2,
}

// TestUserPainCases: every user-pain case names one issue in a label and opens its description
// with it ("kubernetes issue NNNNN:"), a new one also at the end of its name; each issue of the
// list has its cases, conditions varied; the timed ones are large volumes.
func TestUserPainCases(t *testing.T) {
	opening := regexp.MustCompile(`^kubernetes issue ([0-9]+): \S`)
	perIssue := map[string]int{}
	timed := 0
	for _, c := range All() {
		var issues []string
		for _, l := range c.Labels {
			if n, ok := strings.CutPrefix(l, "issue-"); ok {
				issues = append(issues, n)
			}
		}
		pain := slices.Contains(c.Labels, LabelUserPain)
		if pain != (len(issues) > 0) || len(issues) > 1 {
			t.Errorf("%q: labels %v: a user-pain case names exactly one issue, and only such a case names one", c.Name, c.Labels)
			continue
		}
		if !pain {
			continue
		}
		perIssue[issues[0]]++
		m := opening.FindStringSubmatch(c.Description)
		if m == nil || m[1] != issues[0] {
			t.Errorf("%q: description %q does not open with \"kubernetes issue %s: \"", c.Name, c.Description, issues[0])
		}
		if strings.Contains(c.Name, "(kubernetes issue") && !strings.HasSuffix(c.Name, "(kubernetes issue "+issues[0]+")") {
			t.Errorf("%q: the name cites another issue than its label issue-%s", c.Name, issues[0])
		}
		if slices.Contains(c.Labels, framework.LabelTimed) {
			timed++
			if n := len(c.Storage[flexVolumeName]); n < largeFiles {
				t.Errorf("%q is timed with %d storage entries: a timed case is a large volume (>= %d files)", c.Name, n, largeFiles)
			}
		}
	}
	for issue, min := range painIssues {
		if perIssue[issue] < min {
			t.Errorf("kubernetes issue %s: %d cases, want at least %d", issue, perIssue[issue], min)
		}
	}
	for issue := range perIssue {
		if _, ok := painIssues[issue]; !ok {
			t.Errorf("kubernetes issue %s has cases but is not in painIssues (and docs/user-pain.md)", issue)
		}
	}
	if timed != 2 {
		t.Errorf("%d timed cases, want 2 (OnRootMismatch and Always on the same large volume)", timed)
	}
}
