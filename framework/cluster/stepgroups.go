package cluster

import (
	"context"
	"strings"
	"sync"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/nodecontrol"
)

// A kubelet restart disturbs every pod of the node, so the pods of cases with steps run after
// the others (observeIn). They used to run one at a time, each with a kubelet restart of its
// own and the volume manager's settle time (nodecontrol Waits.Settle): on kind the fsGroup area's
// fourteen such cases took two minutes. Pods whose cases' steps are only chmods and kubelet
// restarts, in the same order of kinds, form a step group: they start together, each goes
// through its own case's steps (framework/lifecycle), and each restart happens once for the
// group, when every pod still in it has reached it (nodecontrol.Rounds). Every case still sees
// exactly the history its steps say: its chmods, then as many restarts as it names, then the
// observation. Steps of other kinds (gate writes, kubelet releases, source updates) keep a pod
// to itself, as before.

// stepShape is the order of step kinds of p's case ("CR": a chmod, then a restart), "" when
// p must run alone: a hostPath pod, a pod of several cases, or a step that is neither.
func stepShape(p *probePod) string {
	if p.hostPath || len(p.runs) != 1 {
		return ""
	}
	var b strings.Builder
	for _, s := range p.runs[0].c.After {
		switch s.Kind() {
		case framework.StepChmod:
			b.WriteByte('C')
		case framework.StepRestartKubelet:
			b.WriteByte('R')
		default:
			return ""
		}
	}
	return b.String()
}

// stepGroups splits pods into groups of one shape (in the order their shapes first appear),
// each pod that must run alone a group of its own.
func stepGroups(pods []*probePod) [][]*probePod { return groupInOrder(pods, stepShape) }

// runStepGroup runs a step group: every pod started at once (at most Options.Parallel at a
// time), each through its case's steps with the group's shared restarts, observed, deleted.
func (t *Target) runStepGroup(ctx context.Context, pods []*probePod) {
	var round *nodecontrol.Rounds
	if len(pods) > 1 {
		round = nodecontrol.NewRounds(len(pods), func(ctx context.Context, _ int) error { return t.ctl.Do(ctx, restart(t.now.Gates.Kubelet)) })
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, t.opts.Parallel)
	for _, p := range pods {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.fail(t.explain(ctx, p, t.runPodIn(ctx, p, round, sem)))
			t.deletePod(p)
		}()
	}
	wg.Wait()
}
