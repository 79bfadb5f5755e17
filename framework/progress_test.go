package framework

import (
	"strings"
	"testing"
)

// TestProgress: the line counts what was observed of what the run selected, per area, and
// names the area observed last; before Start nothing is counted (a test's own Prepared).
func TestProgress(t *testing.T) {
	var p Progress
	e1, e2, h := &Case{Area: AreaEmptyDir}, &Case{Area: AreaEmptyDir}, &Case{Area: AreaHostPath}
	p.Observed(e1)
	p.Start([]*Case{e1, e2, h})
	if got := p.Line(); !strings.HasPrefix(got, "0 of 3 cases observed in ") {
		t.Errorf("before any observation: %q", got)
	}
	p.Observed(h)
	p.Observed(e1)
	if got := p.Line(); !strings.HasPrefix(got, "2 of 3 cases observed in ") || !strings.HasSuffix(got, "(emptydir 1 of 2)") {
		t.Errorf("after two: %q", got)
	}
	if got := p.Slowest(5); !strings.Contains(got, "emptydir 1 cases in ") || !strings.Contains(got, "hostpath 1 cases in ") {
		t.Errorf("Slowest = %q", got)
	}
	if got := p.Slowest(1); strings.Count(got, "cases in") != 1 {
		t.Errorf("Slowest(1) = %q, want one area", got)
	}
}
