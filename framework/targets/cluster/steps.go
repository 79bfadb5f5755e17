package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"time"

	"github.com/volperm/volperm/framework"
)

// kubeletSettle is how long the target waits after a kubelet restart for the volume manager to
// set up the running pod's volumes again (v1.37 reconstruction marks them uncertain; the
// reconciler mounts them again within a sync period).
const kubeletSettle = 5 * time.Second

// runSteps applies the case's steps (docs/spec.md "order of events" 5) to its running pod:
// chmod from the probe container as root, kubelet gates written to the node's configuration,
// kubelet restarts. restore, to be called once the pod has been observed, gives the kubelet the
// cluster's own gates back.
func (t *Target) runSteps(ctx context.Context, p *probePod) (restore func(), err error) {
	r := p.runs[0]
	names := map[string]string{}
	for _, v := range r.vols {
		names[r.pod.Spec.Volumes[v.index].Name] = v.unique
	}
	gates := maps.Clone(t.gates.Kubelet)
	maps.Copy(gates, r.c.Gates.Kubelet)
	changed := false
	restore = func() {
		if !changed {
			return
		}
		ctx := context.WithoutCancel(ctx)
		err := t.opts.NodeControl.SetKubeletGates(ctx, t.gates.Kubelet)
		if err == nil {
			err = t.restartKubelet(ctx, t.gates.Kubelet)
		}
		if err != nil {
			t.logf("restore kubelet gates: %v", err)
		}
	}
	for i, s := range r.c.After {
		switch {
		case s.Chmod != nil:
			u, ok := names[s.Chmod.Volume]
			if !ok {
				return restore, fmt.Errorf("step %d: chmod in volume %q, not in the pod", i, s.Chmod.Volume)
			}
			req, err := json.Marshal(map[string]any{"path": path.Join("/volumes", u, s.Chmod.Path), "mode": s.Chmod.Mode})
			if err != nil {
				return restore, err
			}
			if _, err := t.exec(ctx, p.pod.Namespace, p.name, []string{ProbeCommand, "-chmod", string(req)}, nil); err != nil {
				return restore, fmt.Errorf("step %d: %w", i, err)
			}
		case s.SetGates != nil:
			// docs/spec.md: apiserver gates no longer matter for a pod that exists.
			if len(s.SetGates.Kubelet) == 0 {
				continue
			}
			maps.Copy(gates, s.SetGates.Kubelet)
			if err := t.opts.NodeControl.SetKubeletGates(ctx, gates); err != nil {
				return restore, fmt.Errorf("step %d: %w", i, err)
			}
			changed = true
		case s.RestartKubelet:
			if err := t.restartKubelet(ctx, gates); err != nil {
				return restore, fmt.Errorf("step %d: %w", i, err)
			}
		}
	}
	return restore, nil
}

// restartKubelet restarts the kubelet and waits until it reports want (its gates in force),
// then lets the volume manager set the pod's volumes up again.
func (t *Target) restartKubelet(ctx context.Context, want map[string]bool) error {
	if err := t.restartKubeletOnly(ctx, want); err != nil {
		return err
	}
	time.Sleep(kubeletSettle)
	return nil
}

// restartKubeletOnly restarts the kubelet and waits until it reports want.
func (t *Target) restartKubeletOnly(ctx context.Context, want map[string]bool) error {
	if err := t.opts.NodeControl.RestartKubelet(ctx); err != nil {
		return err
	}
	return waitFor(ctx, 90*time.Second, 500*time.Millisecond, "kubelet of "+t.node+" back", func() (bool, error) {
		got, err := t.featureGatesOnce(ctx, "/api/v1/nodes/"+t.node+"/proxy/metrics")
		if err != nil {
			return false, nil // restarting
		}
		return GatesMismatch(framework.Gates{Kubelet: want}, framework.Gates{Kubelet: got}) == "", nil
	})
}
