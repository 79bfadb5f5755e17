// Package rundiff compares two runs case by case (`volperm report diff OLD NEW`, issue 54): a
// report directory volperm run wrote (its junit.xml) or a result set hydrophone copied back (its
// junit_01.xml). Every case whose verdict or Observation changed is named, worse ones first.
package rundiff

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/volperm/volperm/framework/certify"
	"github.com/volperm/volperm/framework/report"
)

// Verdict is a case's state in one run, in words: passed, failed, known difference (a failure
// the target documents), could not run, not applicable (never the target's: a release or a
// feature it does not have, docs/certify.md "Not applicable").
type Verdict string

const (
	Passed        Verdict = "passed"
	Failed        Verdict = "failed"
	Known         Verdict = "known difference"
	CouldNotRun   Verdict = "could not run"
	NotApplicable Verdict = "not applicable"
)

// rank orders the verdicts a target is asked for: a change to a lower rank is worse. Not
// applicable has none: a change to or from it is a change of what the run asked, never worse.
var rank = map[Verdict]int{Passed: 3, Known: 2, CouldNotRun: 1, Failed: 0}

// Case is one case of a run.
type Case struct {
	// Name is the spec's name without its target tag (report.WithoutTarget).
	Name    string
	Verdict Verdict
	// Message is the failure's message or why the case did not run.
	Message string
	// Observed is a failed case's Observation (junit.xml property "observed").
	Observed string
}

// Change is one case whose verdict or Observation is not the same in both runs. Old or New is
// nil for a case of one run only.
type Change struct {
	Name     string
	Old, New *Case
}

// Kind words a change: worse, better, changed (same verdict, another failure or Observation,
// or a change to or from not applicable), new, gone.
func (c Change) Kind() string {
	switch {
	case c.Old == nil && c.New.Verdict == Failed:
		return "worse" // a new case that fails: the implementation fails something it never ran
	case c.Old == nil:
		return "new"
	case c.New == nil:
		return "gone"
	}
	o, okO := rank[c.Old.Verdict]
	n, okN := rank[c.New.Verdict]
	switch {
	case okO && okN && n < o:
		return "worse"
	case okO && okN && n > o:
		return "better"
	}
	return "changed"
}

// Result is the comparison of two runs.
type Result struct {
	Old, New string // the two directories
	// OldCases, NewCases count the cases of each run.
	OldCases, NewCases int
	// Same counts the cases of both runs with the same verdict, message and Observation.
	Same    int
	Changes []Change
}

// Worse counts the changes that are worse.
func (r *Result) Worse() int {
	n := 0
	for _, c := range r.Changes {
		if c.Kind() == "worse" {
			n++
		}
	}
	return n
}

// Read reads the cases of a run's directory: junit.xml, else hydrophone's junit_01.xml.
func Read(dir string) ([]Case, error) {
	path := filepath.Join(dir, "junit.xml")
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		path = filepath.Join(dir, certify.RunnerJUnit)
	}
	outcomes, err := certify.ReadJUnit(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s has neither junit.xml (volperm run --report-dir) nor %s (hydrophone): give a directory a run wrote", dir, certify.RunnerJUnit)
	}
	if err != nil {
		return nil, err
	}
	cases := make([]Case, 0, len(outcomes))
	for _, o := range outcomes {
		c := Case{Name: report.WithoutTarget(o.Name), Message: firstLine(o.Message), Observed: o.Observed}
		switch {
		case o.State == certify.StatePassed:
			c.Verdict = Passed
		case o.State == certify.StateFailed && o.KnownDifference != "":
			c.Verdict, c.Message = Known, o.KnownDifference
		case o.State == certify.StateFailed:
			c.Verdict = Failed
		case o.Facts.NotApplicable != "":
			c.Verdict, c.Message = NotApplicable, o.Facts.NotApplicable
		default:
			// Ginkgo's JUnit words a skip "skipped - REASON".
			c.Verdict, c.Message = CouldNotRun, strings.TrimPrefix(c.Message, "skipped - ")
		}
		cases = append(cases, c)
	}
	return cases, nil
}

// Compare compares the runs of two directories.
func Compare(oldDir, newDir string) (*Result, error) {
	oldCases, err := Read(oldDir)
	if err != nil {
		return nil, err
	}
	newCases, err := Read(newDir)
	if err != nil {
		return nil, err
	}
	r := &Result{Old: oldDir, New: newDir, OldCases: len(oldCases), NewCases: len(newCases)}
	byName := map[string]*Case{}
	for i := range oldCases {
		byName[oldCases[i].Name] = &oldCases[i]
	}
	for i := range newCases {
		n := &newCases[i]
		o, ok := byName[n.Name]
		delete(byName, n.Name)
		switch {
		case !ok:
			r.Changes = append(r.Changes, Change{Name: n.Name, New: n})
		case *o == *n:
			r.Same++
		default:
			r.Changes = append(r.Changes, Change{Name: n.Name, Old: o, New: n})
		}
	}
	for _, o := range byName {
		r.Changes = append(r.Changes, Change{Name: o.Name, Old: o})
	}
	order := map[string]int{"worse": 0, "better": 1, "changed": 2, "new": 3, "gone": 4}
	sort.Slice(r.Changes, func(i, j int) bool {
		a, b := r.Changes[i], r.Changes[j]
		if order[a.Kind()] != order[b.Kind()] {
			return order[a.Kind()] < order[b.Kind()]
		}
		return a.Name < b.Name
	})
	return r, nil
}

// Write prints r: one line of counts, then each change with its two verdicts and, for a failure,
// its message; a group of more than limit changes shows limit of them and how many more (0: all).
func (r *Result) Write(w io.Writer, limit int) {
	counts := map[string]int{}
	for _, c := range r.Changes {
		counts[c.Kind()]++
	}
	fmt.Fprintf(w, "%s (%d cases) -> %s (%d cases): %d the same, %d worse, %d better, %d changed, %d new, %d gone\n",
		r.Old, r.OldCases, r.New, r.NewCases, r.Same, counts["worse"], counts["better"], counts["changed"], counts["new"], counts["gone"])
	shown := map[string]int{}
	for _, c := range r.Changes {
		k := c.Kind()
		if shown[k] == 0 {
			fmt.Fprintf(w, "%s:\n", k)
		}
		shown[k]++
		if limit > 0 && shown[k] > limit {
			if shown[k] == limit+1 {
				fmt.Fprintf(w, "  ... and %d more (--all shows them)\n", counts[k]-limit)
			}
			continue
		}
		fmt.Fprintf(w, "  %s: %s -> %s\n", c.Name, words(c.Old), words(c.New))
		if c.Old != nil && c.New != nil && c.Old.Verdict == c.New.Verdict && c.Old.Message == c.New.Message && c.Old.Observed != c.New.Observed {
			fmt.Fprintf(w, "    another Observation: junit.xml property \"observed\" of each run\n")
		}
	}
}

// words is "failed (MESSAGE)", "passed" or "absent".
func words(c *Case) string {
	if c == nil {
		return "absent"
	}
	if c.Message == "" || c.Verdict == Passed {
		return string(c.Verdict)
	}
	return fmt.Sprintf("%s (%s)", c.Verdict, c.Message)
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
