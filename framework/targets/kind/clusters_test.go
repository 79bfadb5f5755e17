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

// fullRef names a Docker image as containerd does, so that LoadImage finds it on a node.
func TestFullRef(t *testing.T) {
	for ref, want := range map[string]string{
		"volperm/volperm:2be01877dd52": "docker.io/volperm/volperm:2be01877dd52",
		"busybox":                      "docker.io/library/busybox:latest",
		"busybox:1.36":                 "docker.io/library/busybox:1.36",
		"registry.k8s.io/pause:3.10.2": "registry.k8s.io/pause:3.10.2",
		"localhost:5000/x/y":           "localhost:5000/x/y:latest",
		"localhost/x@sha256:abc":       "localhost/x@sha256:abc",
	} {
		if got := fullRef(ref); got != want {
			t.Errorf("fullRef(%q) = %q, want %q", ref, got, want)
		}
	}
}
