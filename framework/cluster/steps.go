package cluster

import (
	"context"
	"encoding/json"
	"maps"
	"path"

	"github.com/volperm/volperm/framework/lifecycle"
	"github.com/volperm/volperm/framework/nodecontrol"
	"github.com/volperm/volperm/framework/probe/incontainer"
)

// runSteps applies the case's steps (docs/spec.md "order of events" 5) to its running pod, in
// the spec's order through framework/lifecycle: chmod from the probe container as root, kubelet
// gates written to the node's configuration, kubelet restarts (the step group's rounds, when
// round is set: stepgroups.go). restore, to be called once the pod has been observed, gives the
// kubelet the cluster's own gates back.
func (t *Target) runSteps(ctx context.Context, p *probePod, round *nodecontrol.Rounds) (restore func(), err error) {
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
// volumes were set up when it started; a chmod runs in its probe container; the kubelet's
// gates and restarts are node control's actions (t.ctl).
type stepPod struct {
	t    *Target
	p    *probePod
	vols lifecycle.Volumes
	// gates are the kubelet's configured gates since a setGates step (nil: the ones it runs),
	// home the ones it ran before it (TearDown gives them back).
	gates, home map[string]bool
	// round shares the kubelet restarts with the pod's step group (nil: alone).
	round *nodecontrol.Rounds
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

// SetGates writes the kubelet's gates with gates over them into the node's configuration; they
// take effect at the next restart.
func (s *stepPod) SetGates(ctx context.Context, gates map[string]bool) error {
	if s.home == nil {
		s.home = maps.Clone(s.t.now.Gates.Kubelet)
	}
	all := maps.Clone(s.t.now.Gates.Kubelet)
	if s.gates != nil {
		all = maps.Clone(s.gates)
	}
	maps.Copy(all, gates)
	if err := s.t.ctl.Do(ctx, nodecontrol.Action{Kind: nodecontrol.WriteKubeletGates, Gates: all}); err != nil {
		return err
	}
	s.gates = all
	return nil
}

// Restart restarts the kubelet, waits until it reports the gates configured and lets it set the
// pod's volumes up again (in the same place).
func (s *stepPod) Restart(ctx context.Context) (lifecycle.Volumes, error) {
	if s.round != nil {
		return s.vols, s.round.Arrive(ctx)
	}
	want := s.gates
	if want == nil {
		want = s.t.now.Gates.Kubelet
	}
	return s.vols, s.t.ctl.Do(ctx, restart(want))
}

// TearDown gives the kubelet the gates it ran before a step changed them; the pod itself is
// deleted with its batch.
func (s *stepPod) TearDown(ctx context.Context) error {
	if s.home == nil {
		return nil
	}
	home := s.home
	s.gates, s.home = nil, nil
	return s.t.ctl.Do(ctx, nodecontrol.Action{Kind: nodecontrol.WriteKubeletGates, Gates: home}, restart(home))
}

// restart is a kubelet restart with gates, pods of the harness on the node.
func restart(gates map[string]bool) nodecontrol.Action {
	return nodecontrol.Action{Kind: nodecontrol.RestartKubelet, Gates: maps.Clone(gates), Settle: true}
}
