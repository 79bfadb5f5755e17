package nodecontrol

import (
	"testing"

	"github.com/volperm/volperm/framework"
)

// TestTimelineAt: a kubelet gate set but not restarted is not a settled point.
func TestTimelineAt(t *testing.T) {
	off := map[string]bool{"G": false}
	on := map[string]bool{"G": true}
	tl := &Timeline[int]{Start: framework.Gates{APIServer: off, Kubelet: off}, Steps: []framework.Step{
		{SetGates: &framework.Gates{APIServer: on}},
		{SetGates: &framework.Gates{Kubelet: on}},
		{RestartKubelet: true},
	}}
	for k, want := range []struct {
		api, kubelet, settled bool
	}{{false, false, true}, {true, false, true}, {true, false, false}, {true, true, true}} {
		g, _, settled := tl.At(k)
		if g.APIServer["G"] != want.api || g.Kubelet["G"] != want.kubelet || settled != want.settled {
			t.Errorf("at(%d) = %v settled %v, want apiserver %v kubelet %v settled %v", k, g, settled, want.api, want.kubelet, want.settled)
		}
	}
}

// TestAttach: a case whose steps are the later part of a longer history, created at the point
// where that history's gates are its own, joins the longer one's timeline; one created at a
// point with other gates starts a timeline of its own.
func TestAttach(t *testing.T) {
	off, on := map[string]bool{"G": false}, map[string]bool{"G": true}
	flip := []framework.Step{{SetGates: &framework.Gates{Kubelet: on}}, {RestartKubelet: true}}
	long := &framework.Case{Name: "long", After: append([]framework.Step{{SetGates: &framework.Gates{APIServer: on}}}, flip...)}
	later := &framework.Case{Name: "later", After: flip}
	other := &framework.Case{Name: "other", After: flip}
	runs := []*framework.Case{later, long}
	SortByHistory(runs, func(c *framework.Case) *framework.Case { return c })
	if runs[0] != long {
		t.Fatalf("SortByHistory put %s first; want the longest history", runs[0].Name)
	}
	var lines []*Timeline[string]
	lines = Attach(lines, "long", long, framework.Gates{APIServer: off, Kubelet: off})
	lines = Attach(lines, "later", later, framework.Gates{APIServer: on, Kubelet: off})
	lines = Attach(lines, "other", other, framework.Gates{APIServer: off, Kubelet: off})
	if len(lines) != 2 || len(lines[0].Created[1]) != 1 || lines[0].Created[1][0] != "later" || lines[1].Runs()[0] != "other" {
		t.Errorf("timelines %+v, want long with later at its second point, and other alone", lines)
	}
	// A case created with the apiserver on and the kubelet off whose one step is a restart
	// matches long's last step, but long's point there is not settled (its kubelet gate is
	// written, not yet in force): the case starts a timeline of its own.
	restart := &framework.Case{Name: "restart", After: []framework.Step{{RestartKubelet: true}}}
	lines = Attach(lines, "restart", restart, framework.Gates{APIServer: on, Kubelet: off})
	if len(lines) != 3 || len(lines[0].Created[2]) != 0 {
		t.Errorf("a case attached at an unsettled point: timelines %+v", lines)
	}
	if !IsHistory(long) || IsHistory(&framework.Case{After: []framework.Step{{RestartKubelet: true}}}) {
		t.Error("IsHistory: a gate history is one, a lone restart is not")
	}
	if Flips(framework.Gates{APIServer: off, Kubelet: off}, framework.Gates{APIServer: on, Kubelet: off}) != 1 {
		t.Error("Flips: one component differs")
	}
}
