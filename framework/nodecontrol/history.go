package nodecontrol

import (
	"context"
	"fmt"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/lifecycle"
)

// HistoryPod is a running pod of a timeline as framework/lifecycle drives it through its case's
// steps, Steps[Next:]: each of its kubelet steps arrives at the timeline's round (Rounds) that
// applies the step to the node, once for every pod; the timeline gives the kubelet its
// configuration back at the end.
type HistoryPod struct {
	// Vols are where the pod's volumes are (the kubelet set them up before the pod ran).
	Vols lifecycle.Volumes
	// Steps are the timeline's; Next is the first step the pod goes through.
	Steps []framework.Step
	Next  int
	// Rounds are the timeline's kubelet steps.
	Rounds *Rounds
}

var _ lifecycle.ReleaseChanger = (*HistoryPod)(nil)

// SetUp: the kubelet set the volumes up before the pod ran.
func (h *HistoryPod) SetUp(context.Context) (lifecycle.Volumes, error) { return h.Vols, nil }

func (h *HistoryPod) SetGates(ctx context.Context, _ map[string]bool) error {
	return h.arrive(ctx, "setGates", func(s framework.Step) bool { return s.Kind() == framework.StepSetGates })
}

func (h *HistoryPod) Restart(ctx context.Context) (lifecycle.Volumes, error) {
	return h.Vols, h.arrive(ctx, "restartKubelet", func(s framework.Step) bool { return s.Kind() == framework.StepRestartKubelet })
}

func (h *HistoryPod) SetKubeletRelease(ctx context.Context, release string, _ map[string]bool) (lifecycle.Volumes, error) {
	return h.Vols, h.arrive(ctx, "kubeletRelease "+release, func(s framework.Step) bool { return s.KubeletRelease == release })
}

// TearDown: the pod is deleted with its namespace.
func (h *HistoryPod) TearDown(context.Context) error { return nil }

// arrive is the pod reaching its next kubelet step, which must be what framework/lifecycle asks
// for (what): it waits for the step's round.
func (h *HistoryPod) arrive(ctx context.Context, what string, is func(framework.Step) bool) error {
	for h.Next < len(h.Steps) && !IsKubeletStep(h.Steps[h.Next]) {
		h.Next++
	}
	if h.Next == len(h.Steps) || !is(h.Steps[h.Next]) {
		return fmt.Errorf("timeline: %s is not the pod's next kubelet step (step %d)", what, h.Next)
	}
	h.Next++
	return h.Rounds.Arrive(ctx)
}
