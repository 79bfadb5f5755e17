package cluster

import (
	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/nodecontrol"
)

// The node control of a cluster volperm controls (kind's) is planned in framework/nodecontrol;
// this package executes the plan (reconfigure.go, timeline.go, steps.go).

// NodeControl changes the node's kubelet, for the steps of a case: nodecontrol.Control.
type NodeControl = nodecontrol.Control

// KubeletReleaser is a NodeControl that can also replace the node's kubelet by one of another
// release: nodecontrol.KubeletReleaser.
type KubeletReleaser = nodecontrol.KubeletReleaser

// timeline is a gate history of this target's case runs.
type timeline = nodecontrol.Timeline[*caseRun]

func caseOf(r *caseRun) *framework.Case { return r.c }
