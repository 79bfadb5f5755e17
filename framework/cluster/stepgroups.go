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
//
// Pods of different shapes share one group too (issue 34: the fsGroup, atomicWriter, hostPath
// and emptyDir areas in one batch made five groups of one cell run one after another, a restart
// or two each). Their histories are aligned at the end: in a group of K restarts, a pod whose
// case names k starts after the group's first K-k restarts (it arrives at those rounds at
// once and waits: lateRounds), goes through its chmods and its k restarts as the group's last
// k rounds, and every pod is observed after the last. No pod exists during a restart its case
// does not name, and none is observed while another's restart runs.

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

// stepGroups puts the pods with a shape in one group (first), each pod that must run alone in a
// group of its own.
func stepGroups(pods []*probePod) [][]*probePod {
	return groupInOrder(pods, func(p *probePod) string {
		if stepShape(p) == "" {
			return ""
		}
		return "chmods and restarts"
	})
}

// lateRounds is how many of its group's first rounds each pod waits out before it starts: the
// group's restarts less its case's, so that every history ends at the group's last restart.
func lateRounds(pods []*probePod) []int {
	most := 0
	for _, p := range pods {
		most = max(most, strings.Count(stepShape(p), "R"))
	}
	late := make([]int, len(pods))
	for i, p := range pods {
		late[i] = most - strings.Count(stepShape(p), "R")
	}
	return late
}

// runStepGroup runs a step group: every pod started at once (at most Options.Parallel at a
// time), each through its case's steps with the group's shared restarts, observed, deleted.
func (t *Target) runStepGroup(ctx context.Context, pods []*probePod) {
	var round *nodecontrol.Rounds
	late := make([]int, len(pods))
	if len(pods) > 1 {
		round = nodecontrol.NewRounds(len(pods), func(ctx context.Context, _ int) error { return t.ctl.Do(ctx, restart(t.now.Gates.Kubelet)) })
		late = lateRounds(pods)
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, t.opts.Parallel)
	for i, p := range pods {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.fail(t.explain(ctx, p, t.runPodIn(ctx, p, round, sem, late[i])))
			t.deletePod(p)
		}()
	}
	wg.Wait()
}
