package cluster

import (
	"testing"

	"github.com/volperm/volperm/framework"
)

func stepsPod(name string, steps ...framework.Step) *probePod {
	return &probePod{name: name, runs: []*caseRun{{c: &framework.Case{Name: name, After: steps}}}}
}

// Pods whose steps are chmods and restarts in the same order share a group; any other step, a
// hostPath pod or a pod of several cases runs alone.
func TestStepGroups(t *testing.T) {
	chmod := framework.Step{Chmod: &framework.Chmod{Volume: "v", Mode: 0o700}}
	restart := framework.Step{RestartKubelet: true}
	gates := framework.Step{SetGates: &framework.Gates{Kubelet: map[string]bool{framework.GateEmptyDirVolumeMode: true}}}
	a, b, c := stepsPod("a", chmod, restart), stepsPod("b", restart), stepsPod("c", chmod, restart)
	d, e := stepsPod("d", restart), stepsPod("e", gates, restart)
	host := stepsPod("host", restart)
	host.hostPath = true
	got := stepGroups([]*probePod{a, b, c, d, e, host})
	var names [][]string
	for _, g := range got {
		var n []string
		for _, p := range g {
			n = append(n, p.name)
		}
		names = append(names, n)
	}
	want := [][]string{{"a", "c"}, {"b", "d"}, {"e"}, {"host"}}
	if len(names) != len(want) {
		t.Fatalf("groups %v, want %v", names, want)
	}
	for i := range want {
		if len(names[i]) != len(want[i]) {
			t.Fatalf("groups %v, want %v", names, want)
		}
		for j := range want[i] {
			if names[i][j] != want[i][j] {
				t.Fatalf("groups %v, want %v", names, want)
			}
		}
	}
}
