package framework

import (
	"strings"
	"testing"
	"time"
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
	if got := p.Slowest(1); strings.Count(got, "cases in") != 1 || !strings.HasPrefix(got, "the slowest areas: ") {
		t.Errorf("Slowest(1) = %q, want one area", got)
	}
}

// Areas observed one after the other have a slowest; areas observed together (a cluster's one
// batch) do not, and Slowest says they ran together.
func TestSlowestOfAreasTogether(t *testing.T) {
	at := func(s int) time.Time { return time.Unix(1000+int64(s), 0) }
	p := Progress{done: map[Area]int{AreaEmptyDir: 10, AreaHostPath: 5, AreaFSGroup: 2}}
	p.first = map[Area]time.Time{AreaEmptyDir: at(0), AreaHostPath: at(6), AreaFSGroup: at(9)}
	p.last = map[Area]time.Time{AreaEmptyDir: at(6), AreaHostPath: at(9), AreaFSGroup: at(10)}
	if got, want := p.Slowest(2), "the slowest areas: emptydir 10 cases in 6s, hostpath 5 cases in 3s"; got != want {
		t.Errorf("one after the other: %q, want %q", got, want)
	}
	p.first = map[Area]time.Time{AreaEmptyDir: at(0), AreaHostPath: at(1), AreaFSGroup: at(2)}
	p.last = map[Area]time.Time{AreaEmptyDir: at(352), AreaHostPath: at(350), AreaFSGroup: at(340)}
	if got, want := p.Slowest(2), "the areas were observed together: 17 cases of 3 areas in 5m52s"; got != want {
		t.Errorf("together: %q, want %q", got, want)
	}
	if got := (&Progress{}).Slowest(3); got != "" {
		t.Errorf("no observation: %q", got)
	}
}
