package cluster

import (
	"testing"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/catalogue"
	"github.com/volperm/volperm/framework/nodecontrol"
)

// TestTimelinesOfTheSkewArea: the skew area's gate-step cases merge into shared histories. The
// upgrade, downgrade, re-upgrade sequence takes its 6 cases with steps (its last phase has
// none and runs in its cell), the "gates on, off, on" case created while off (its remaining
// history is the re-upgrade's) and the flip case whose one step is the re-upgrade's last.
// The on/off/on case created while on and the other 7 flip cases have histories of their own.
// KEP-5936's upgrade, downgrade, re-upgrade sequence (AtomicWriteVolumeUserFields) is one more
// history of 6 cases.
func TestTimelinesOfTheSkewArea(t *testing.T) {
	tg := &Target{now: nodecontrol.State{Gates: framework.Gates{
		APIServer: map[string]bool{framework.GateEmptyDirVolumeMode: false, framework.GateAtomicWriteVolumeUserFields: false},
		Kubelet:   map[string]bool{framework.GateEmptyDirVolumeMode: false, framework.GateAtomicWriteVolumeUserFields: false},
	}}}
	var lines []*timeline
	var histories []*caseRun
	for i, c := range catalogue.All() {
		if c.Area == framework.AreaSkew && nodecontrol.HasGateSteps(c) && !nodecontrol.HasChmodSteps(c) {
			histories = append(histories, &caseRun{id: i, c: c})
		}
	}
	if len(histories) == 0 {
		t.Fatal("no skew case has gate steps")
	}
	nodecontrol.SortByHistory(histories, caseOf)
	for _, r := range histories {
		lines = nodecontrol.Attach(lines, r, r.c, tg.fullGates(r.c.Gates))
	}
	var created []int
	total := 0
	for _, tl := range lines {
		n := 0
		for k, rs := range tl.Created {
			n += len(rs)
			for _, r := range rs {
				// Every case starts where the history is in its own gates, with its own steps left.
				g, _, settled := tl.At(k)
				if !settled || nodecontrol.CellKey(g) != nodecontrol.CellKey(tg.fullGates(r.c.Gates)) || nodecontrol.StepsKey(tl.Steps[k:]) != nodecontrol.StepsKey(r.c.After) {
					t.Errorf("case %q attached at step %d of a timeline that is elsewhere", r.c.Name, k)
				}
			}
		}
		created = append(created, n)
		total += n
	}
	if total != len(histories) {
		t.Errorf("%d cases in timelines, want %d", total, len(histories))
	}
	want := map[int]int{8: 1, 6: 1, 1: 8}
	got := map[int]int{}
	for _, n := range created {
		got[n]++
	}
	for n, k := range want {
		if got[n] != k {
			t.Errorf("timelines with %d cases: %d, want %d (all: %v)", n, got[n], k, created)
		}
	}
}

// TestTimelinesOfKubeletReleases: each kubelet-release history (a v1.37 pod through a downgrade
// to an older kubelet and the re-upgrade) takes the pod created under that older kubelet at the
// point after the downgrade: one timeline per older release, its two media together, all on
// the node of the last release (v1.37), and at that point the kubelet runs the older release
// with none of the v1.37 gates.
func TestTimelinesOfKubeletReleases(t *testing.T) {
	tg := &Target{now: nodecontrol.State{Gates: framework.Gates{
		APIServer: map[string]bool{framework.GateEmptyDirVolumeMode: false, framework.GateAtomicWriteVolumeUserFields: false},
		Kubelet:   map[string]bool{framework.GateEmptyDirVolumeMode: false, framework.GateAtomicWriteVolumeUserFields: false},
	}}}
	var histories []*caseRun
	for i, c := range catalogue.All() {
		if framework.ChangesKubeletRelease(c) {
			histories = append(histories, &caseRun{id: i, c: c})
			if r := framework.ObservedReleases(c); r.Kubelet != framework.NewestRelease {
				t.Errorf("case %q is observed under kubelet %s, want the re-upgraded %s", c.Name, r.Kubelet, framework.NewestRelease)
			}
		}
	}
	if len(histories) != 12 {
		t.Fatalf("%d kubelet-release cases, want 12 (3 older releases x 2 media x created before and after the downgrade)", len(histories))
	}
	nodecontrol.SortByHistory(histories, caseOf)
	var lines []*timeline
	for _, r := range histories {
		lines = nodecontrol.Attach(lines, r, r.c, tg.fullGates(r.c.Gates))
	}
	if len(lines) != 3 {
		t.Fatalf("%d timelines, want 3", len(lines))
	}
	for _, tl := range lines {
		if tl.Release != framework.NewestRelease || len(tl.Steps) != 2 || len(tl.Created[0]) != 2 || len(tl.Created[1]) != 2 {
			t.Errorf("timeline from kubelet %s through %d steps, created %d/%d/%d", tl.Release, len(tl.Steps), len(tl.Created[0]), len(tl.Created[1]), len(tl.Created[2]))
			continue
		}
		g, release, settled := tl.At(1)
		if !settled || release != tl.Steps[0].KubeletRelease || len(g.Kubelet) != 0 || tl.Created[1][0].c.Releases.Kubelet != release {
			t.Errorf("after the downgrade: kubelet %s, gates %v, settled %v; created there under %s", release, g.Kubelet, settled, tl.Created[1][0].c.Releases.Kubelet)
		}
	}
}
