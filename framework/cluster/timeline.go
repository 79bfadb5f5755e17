package cluster

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/lifecycle"
	"github.com/volperm/volperm/framework/nodecontrol"
)

// runTimeline goes through tl on the cluster: pods are created (and seen running or failing
// to mount) at their point, and each running pod goes through its case's steps, the timeline's
// from its point on, with framework/lifecycle (nodecontrol.HistoryPod); each kubelet step runs
// once for every pod, as a round (nodecontrol.Rounds) of which the timeline's driver, the loop
// below, is a member: it creates the pods of a point before it arrives at the round of that
// point's step, and puts the apiserver's gates of a step in force (they matter to the pods
// created after it, not to those that exist: docs/spec.md "Order of events"). Every pod is
// observed at the end. The node is changed by node control's actions (nodecontrol.Start,
// KubeletStep, Home).
func (t *Target) runTimeline(ctx context.Context, tl *timeline) error {
	start := time.Now()
	// Created under another kubelet, the history ends on the node's own release (a matrix
	// routes a case to the node of its last kubelet release); if it does not, the node gets
	// it back.
	home := framework.MinorRelease(t.kubeletVersion)
	if err := t.ctl.Do(ctx, nodecontrol.Start(tl, t.now, home)...); err != nil {
		return err
	}
	defer func() {
		if err := t.ctl.Do(context.WithoutCancel(ctx), nodecontrol.Home(t.now, home)...); err != nil {
			t.logf("give node %s its kubelet %s back: %v", t.node, home, err)
		}
	}()
	ns, err := t.createNamespace(ctx, true)
	if ns != "" {
		defer t.deleteNamespace(ns)
	}
	if err != nil {
		return err
	}
	configured := maps.Clone(t.now.Gates.Kubelet)
	defer func() {
		// A kubelet gate set but never restarted: give the configuration back what runs.
		if !maps.Equal(configured, t.now.Gates.Kubelet) {
			if err := t.ctl.Do(context.WithoutCancel(ctx), nodecontrol.Action{Kind: nodecontrol.WriteKubeletGates, Gates: t.now.Gates.Kubelet}); err != nil {
				t.logf("restore kubelet configuration: %v", err)
			}
		}
	}()
	var kubeletSteps []int
	for k, s := range tl.Steps {
		if nodecontrol.IsKubeletStep(s) {
			kubeletSteps = append(kubeletSteps, k)
		}
	}
	// The pods stop at their next arrival when the driver gives up; a round that has not run
	// then does not run.
	pctx, stop := context.WithCancel(ctx)
	defer stop()
	r := nodecontrol.NewRounds(1, func(ctx context.Context, i int) error {
		if err := pctx.Err(); err != nil {
			return err
		}
		k := kubeletSteps[i]
		actions, next, err := nodecontrol.KubeletStep(tl.Steps[k], configured)
		if err == nil {
			// The configuration is the step's from now on, even if the step fails half-way:
			// the end of the timeline then writes back the one the kubelet runs.
			configured = next
			err = t.ctl.Do(ctx, actions...)
		}
		if err != nil {
			return fmt.Errorf("step %d: %w", k, err)
		}
		return nil
	})
	var (
		wg   sync.WaitGroup
		pods []*probePod
		errs []error
	)
	// driverDone ends the driver's part: it leaves the rounds and waits for every pod's steps;
	// abort does so when the driver gives up (its pods stop at their next arrival).
	driverDone := func() {
		r.Leave(ctx)
		wg.Wait()
	}
	abort := func(err error) error {
		stop()
		driverDone()
		return err
	}
	for k := 0; k <= len(tl.Steps); k++ {
		if len(tl.Created[k]) > 0 {
			ps, err := t.setUp(ctx, ns, fmt.Sprintf("t%d", k), tl.Created[k])
			if err != nil {
				return abort(err)
			}
			t.count(len(ps))
			for _, p := range ps {
				if err := t.startPod(ctx, p); err != nil {
					p.fail(t.explain(ctx, p, err))
					continue
				}
				pods = append(pods, p)
				errs = append(errs, nil)
				if !p.running {
					continue // its volumes failed to mount: observed as it is
				}
				r.Join()
				wg.Add(1)
				i, hp := len(errs)-1, &nodecontrol.HistoryPod{Vols: caseVolumes(p), Steps: tl.Steps, Next: k, Rounds: r}
				go func() {
					defer wg.Done()
					_, errs[i] = lifecycle.Steps(pctx, p.runs[0].c, hp)
					r.Leave(ctx)
				}()
			}
		}
		if k == len(tl.Steps) {
			break
		}
		s := tl.Steps[k]
		if s.SetGates != nil && len(s.SetGates.APIServer) > 0 {
			g := framework.Gates{APIServer: maps.Clone(t.now.Gates.APIServer), Kubelet: t.now.Gates.Kubelet}
			maps.Copy(g.APIServer, s.SetGates.APIServer)
			if err := t.ctl.Do(ctx, nodecontrol.Move(t.now, g, true)...); err != nil {
				return abort(fmt.Errorf("step %d: %w", k, err))
			}
		}
		if nodecontrol.IsKubeletStep(s) {
			if err := r.Arrive(ctx); err != nil {
				return abort(err)
			}
		}
	}
	driverDone()
	for i, p := range pods {
		err := errs[i]
		if err == nil {
			err = t.finishPod(ctx, p)
		}
		p.fail(t.explain(ctx, p, err))
	}
	t.logf("timeline of %d cases through %d steps in %s", len(tl.Runs()), len(tl.Steps), time.Since(start).Round(100*time.Millisecond))
	return nil
}
