package kind

import (
	"testing"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/cluster"
)

// A cluster gets a steps node when its first batch has gate histories and cases without steps;
// then every case with steps, and only they, run there.
func TestStepsNode(t *testing.T) {
	plain := &framework.Case{Name: "plain"}
	steps := &framework.Case{Name: "steps", After: []framework.Step{{RestartKubelet: true}}}
	history := &framework.Case{Name: "history", After: []framework.Step{{SetGates: &framework.Gates{Kubelet: map[string]bool{framework.GateEmptyDirVolumeMode: true}}}}}
	for _, tt := range []struct {
		cases []*framework.Case
		want  bool
	}{
		{[]*framework.Case{plain, steps, history}, true},
		{[]*framework.Case{plain, history}, true},
		{[]*framework.Case{plain, steps}, false},
		{[]*framework.Case{plain}, false},
		{[]*framework.Case{steps, history}, false},
		{nil, false},
	} {
		if got := splitSteps(tt.cases); got != tt.want {
			t.Errorf("splitSteps(%d cases) = %v, want %v", len(tt.cases), got, tt.want)
		}
	}
	a, b := &cluster.Target{}, &cluster.Target{}
	lc := &liveCluster{target: a, steps: b}
	if lc.of(plain) != a || lc.of(steps) != b || lc.of(history) != b {
		t.Error("with a steps node: the case with steps must run there, the other on the cluster's node")
	}
	lc.steps = nil
	if lc.of(plain) != a || lc.of(steps) != a {
		t.Error("without a steps node every case runs on the cluster's node")
	}
}
