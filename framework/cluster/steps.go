package cluster

import (
	"context"
	"encoding/json"
	"maps"
	"path"
	"time"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/lifecycle"
	"github.com/volperm/volperm/framework/probe/incontainer"
)

// kubeletSettle is the longest the target waits after a kubelet restart for the volume manager
// to set up the running pods' volumes again (v1.37 reconstruction marks them uncertain; the
// reconciler mounts them again within a sync period): it waits until every volume mounted before
// the restart is mounted again (settle), usually about a second, and this long at most (the
// fixed wait it used to be: a pod that went away meanwhile never comes back).
const kubeletSettle = 5 * time.Second

// runSteps applies the case's steps (docs/spec.md "order of events" 5) to its running pod, in
// the spec's order through framework/lifecycle: chmod from the probe container as root, kubelet
// gates written to the node's configuration, kubelet restarts (the step group's rounds, when
// round is set: stepgroups.go). restore, to be called once the pod has been observed, gives the
// kubelet the cluster's own gates back.
func (t *Target) runSteps(ctx context.Context, p *probePod, round *rounds) (restore func(), err error) {
	sp := &stepPod{t: t, p: p, vols: caseVolumes(p), round: round}
	restore = func() {
		if err := sp.TearDown(context.WithoutCancel(ctx)); err != nil {
			t.logf("restore kubelet gates: %v", err)
		}
	}
	_, err = lifecycle.Steps(ctx, p.runs[0].c, sp)
	return restore, err
}

// caseVolumes is where the volumes of p's (one) case are in its probe container, by the case's
// volume names.
func caseVolumes(p *probePod) lifecycle.Volumes {
	vols := lifecycle.Volumes{}
	r := p.runs[0]
	for _, v := range r.vols {
		vols[r.pod.Spec.Volumes[v.index].Name] = lifecycle.Volume{Path: path.Join("/volumes", v.unique)}
	}
	return vols
}

// stepPod is a running probe pod as framework/lifecycle drives it through a case's steps: its
// volumes were set up when it started; a chmod runs in its probe container.
type stepPod struct {
	t    *Target
	p    *probePod
	vols lifecycle.Volumes
	// gates are the kubelet's gates in force since a setGates step (nil: the cluster's own).
	gates map[string]bool
	// round shares the kubelet restarts with the pod's step group (nil: alone).
	round *rounds
}

var (
	_ lifecycle.Pod     = (*stepPod)(nil)
	_ lifecycle.Chmoder = (*stepPod)(nil)
)

// SetUp: the kubelet set the volumes up before the pod ran.
func (s *stepPod) SetUp(context.Context) (lifecycle.Volumes, error) { return s.vols, nil }

// Chmod changes a mode from the probe container, as root.
func (s *stepPod) Chmod(ctx context.Context, path string, mode uint32) error {
	req, err := json.Marshal(incontainer.Chmod{Path: path, Mode: mode})
	if err != nil {
		return err
	}
	_, err = s.t.exec(ctx, s.p.pod.Namespace, s.p.name, []string{ProbeCommand, "-chmod", string(req)}, nil)
	return err
}

// SetGates writes the cluster's kubelet gates with gates over them into the node's
// configuration; they take effect at the next restart.
func (s *stepPod) SetGates(ctx context.Context, gates map[string]bool) error {
	all := maps.Clone(s.t.gates.Kubelet)
	maps.Copy(all, gates)
	if err := s.t.opts.NodeControl.SetKubeletGates(ctx, all); err != nil {
		return err
	}
	s.gates = all
	return nil
}

// Restart restarts the kubelet, waits until it reports the gates in force and lets it set the
// pod's volumes up again (in the same place).
func (s *stepPod) Restart(ctx context.Context) (lifecycle.Volumes, error) {
	if s.round != nil {
		return s.vols, s.round.arrive(ctx)
	}
	want := s.gates
	if want == nil {
		want = s.t.gates.Kubelet
	}
	return s.vols, s.t.restartKubelet(ctx, want)
}

// TearDown gives the kubelet the cluster's own gates back when a step changed them; the pod
// itself is deleted with its batch.
func (s *stepPod) TearDown(ctx context.Context) error {
	if s.gates == nil {
		return nil
	}
	s.gates = nil
	err := s.t.opts.NodeControl.SetKubeletGates(ctx, s.t.gates.Kubelet)
	if err == nil {
		err = s.t.restartKubelet(ctx, s.t.gates.Kubelet)
	}
	return err
}

// restartKubelet restarts the kubelet and waits until it reports want (its gates in force),
// then until the volume manager has set the pods' volumes up again (settle).
func (t *Target) restartKubelet(ctx context.Context, want map[string]bool) error {
	before := t.kubeletNow(ctx)
	if err := t.restartKubeletOnly(ctx, want); err != nil {
		return err
	}
	return t.settle(ctx, before)
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
