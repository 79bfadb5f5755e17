package kind

import (
	"testing"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/cluster"
)

// A cluster gets a steps node when its first batch has cases with steps and cases without;
// then the cases with steps, and only they, run there.
func TestStepsNode(t *testing.T) {
	plain := &framework.Case{Name: "plain"}
	steps := &framework.Case{Name: "steps", After: []framework.Step{{RestartKubelet: true}}}
	for _, tt := range []struct {
		cases []*framework.Case
		want  bool
	}{
		{[]*framework.Case{plain, steps}, true},
		{[]*framework.Case{plain}, false},
		{[]*framework.Case{steps}, false},
		{nil, false},
	} {
		if got := splitSteps(tt.cases); got != tt.want {
			t.Errorf("splitSteps(%d cases) = %v, want %v", len(tt.cases), got, tt.want)
		}
	}
	a, b := &cluster.Target{}, &cluster.Target{}
	lc := &liveCluster{target: a, steps: b}
	if lc.of(plain) != a || lc.of(steps) != b {
		t.Error("with a steps node: the case with steps must run there, the other on the cluster's node")
	}
	lc.steps = nil
	if lc.of(plain) != a || lc.of(steps) != a {
		t.Error("without a steps node every case runs on the cluster's node")
	}
}
