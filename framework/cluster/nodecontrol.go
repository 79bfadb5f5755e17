package cluster

import (
	"context"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/nodecontrol"
)

// Node control, which only a cluster volperm controls (kind) reaches, is framework/nodecontrol:
// the plan (cells, timelines, the actions of each move) and its execution (nodecontrol.Driver,
// t.ctl). This package creates and observes the pods around it (reconfigure.go, timeline.go,
// steps.go, stepgroups.go) and gives the Driver its view of the cluster (nodeView).

// NodeControl changes the node's kubelet, for the steps of a case: nodecontrol.Control.
type NodeControl = nodecontrol.Control

// KubeletReleaser is a NodeControl that can also replace the node's kubelet by one of another
// release: nodecontrol.KubeletReleaser.
type KubeletReleaser = nodecontrol.KubeletReleaser

// timeline is a gate history of this target's case runs.
type timeline = nodecontrol.Timeline[*caseRun]

func caseOf(r *caseRun) *framework.Case { return r.c }

// kubeletReleases are the kubelet releases the node control can give the node, and whether it
// can give any.
func (t *Target) kubeletReleases() ([]string, bool) {
	if t.ctl == nil {
		return nil, false
	}
	return t.ctl.Releases()
}

// nodeView is the cluster as node control reads it (nodecontrol.Cluster): each read one GET,
// bounded by callTimeout.
type nodeView struct{ t *Target }

var _ nodecontrol.Cluster = nodeView{}

func (v nodeView) KubeletGates(ctx context.Context) (map[string]bool, error) {
	return v.t.featureGatesOnce(ctx, "/api/v1/nodes/"+v.t.node+"/proxy/metrics")
}

func (v nodeView) APIServerGates(ctx context.Context, endpoint string) (map[string]bool, error) {
	return v.t.featureGatesOnce(withEndpoint(ctx, endpoint), "/metrics")
}

func (v nodeView) APIServerReady(ctx context.Context, endpoint string) bool {
	rctx, cancel := context.WithTimeout(withEndpoint(ctx, endpoint), callTimeout)
	defer cancel()
	_, err := v.t.client.CoreV1().RESTClient().Get().AbsPath("/readyz").DoRaw(rctx)
	return err == nil
}

func (v nodeView) KubeletState(ctx context.Context) *nodecontrol.KubeletState {
	return v.t.kubeletNow(ctx)
}

func (v nodeView) UseEndpoint(endpoint string) { v.t.endpoint.set(endpoint) }
