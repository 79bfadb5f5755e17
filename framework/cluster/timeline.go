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
// from its point on, with framework/lifecycle (historyPod); each kubelet step runs once for
// every pod, as a round (rounds.go) of which the timeline's driver, the loop below, is a member:
// it creates the pods of a point before it arrives at the round of that point's step, and puts
// the apiserver's gates of a step in force (they matter to the pods created after it, not to
// those that exist: docs/spec.md "Order of events"). Every pod is observed at the end.
func (t *Target) runTimeline(ctx context.Context, tl *timeline) error {
	start := time.Now()
	home := framework.MinorRelease(t.kubeletVersion)
	if tl.Release != home {
		// Created under another kubelet: the apiserver first, then that kubelet with the
		// start's gates it has. The history ends on the node's own release (a matrix routes a
		// case to the node of its last kubelet release); if it does not, the node gets it back.
		if err := t.reconfigure(ctx, framework.Gates{APIServer: tl.Start.APIServer, Kubelet: t.gates.Kubelet}, true); err != nil {
			return err
		}
		if err := t.setKubeletRelease(ctx, tl.Release, framework.GatesOfRelease(tl.Start.Kubelet, tl.Release), false); err != nil {
			return err
		}
	} else if err := t.reconfigure(ctx, tl.Start, true); err != nil {
		return err
	}
	defer func() {
		if t.release != home {
			if err := t.setKubeletRelease(context.WithoutCancel(ctx), home, t.fullGates(framework.Gates{}).Kubelet, false); err != nil {
				t.logf("give node %s its kubelet %s back: %v", t.node, home, err)
			}
		}
	}()
	ns, err := t.createNamespace(ctx, true)
	if ns != "" {
		defer t.deleteNamespace(ns)
	}
	if err != nil {
		return err
	}
	configured := maps.Clone(t.gates.Kubelet)
	defer func() {
		// A kubelet gate set but never restarted: give the configuration back what runs.
		if !maps.Equal(configured, t.gates.Kubelet) {
			if err := t.opts.NodeControl.SetKubeletGates(context.WithoutCancel(ctx), t.gates.Kubelet); err != nil {
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
	r := newRounds(1, func(ctx context.Context, i int) error {
		if err := pctx.Err(); err != nil {
			return err
		}
		k := kubeletSteps[i]
		if err := t.applyKubeletStep(ctx, tl.Steps[k], configured); err != nil {
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
		r.leave(ctx)
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
				r.join()
				wg.Add(1)
				i, hp := len(errs)-1, &historyPod{vols: caseVolumes(p), steps: tl.Steps, next: k, r: r}
				go func() {
					defer wg.Done()
					_, errs[i] = lifecycle.Steps(pctx, p.runs[0].c, hp)
					r.leave(ctx)
				}()
			}
		}
		if k == len(tl.Steps) {
			break
		}
		s := tl.Steps[k]
		if s.SetGates != nil && len(s.SetGates.APIServer) > 0 {
			g := framework.Gates{APIServer: maps.Clone(t.gates.APIServer), Kubelet: t.gates.Kubelet}
			maps.Copy(g.APIServer, s.SetGates.APIServer)
			if err := t.reconfigure(ctx, g, false); err != nil {
				return abort(fmt.Errorf("step %d: %w", k, err))
			}
		}
		if nodecontrol.IsKubeletStep(s) {
			if err := r.arrive(ctx); err != nil {
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

// applyKubeletStep applies s, a kubelet step of a timeline, to the node: kubelet gates written into
// configured (the configuration, in force at the next restart), a restart with them, or the
// kubelet of another release with those of them it has.
func (t *Target) applyKubeletStep(ctx context.Context, s framework.Step, configured map[string]bool) error {
	switch {
	case s.SetGates != nil:
		maps.Copy(configured, s.SetGates.Kubelet)
		return t.opts.NodeControl.SetKubeletGates(ctx, configured)
	case s.RestartKubelet:
		begin := time.Now()
		if err := t.restartKubelet(ctx, configured); err != nil {
			return err
		}
		t.gates.Kubelet = maps.Clone(configured)
		t.logf("kubelet restarted with %s in %s", nodecontrol.CellKey(framework.Gates{Kubelet: configured}), time.Since(begin).Round(100*time.Millisecond))
		return nil
	case s.KubeletRelease != "":
		// [steps.kubelet-release]: the gates that release lacks leave the configuration.
		gates := framework.GatesOfRelease(configured, s.KubeletRelease)
		maps.DeleteFunc(configured, func(name string, _ bool) bool { _, kept := gates[name]; return !kept })
		return t.setKubeletRelease(ctx, s.KubeletRelease, configured, true)
	}
	return fmt.Errorf("only gate changes, kubelet restarts and kubelet releases are run in a timeline")
}

// historyPod is a running probe pod of a timeline as framework/lifecycle drives it through its
// case's steps, steps[next:]: each of its kubelet steps arrives at the timeline's round that
// applies it to the node, once for every pod; the timeline gives the kubelet its configuration
// back at the end.
type historyPod struct {
	vols  lifecycle.Volumes
	steps []framework.Step
	next  int
	r     *rounds
}

var _ lifecycle.ReleaseChanger = (*historyPod)(nil)

// SetUp: the kubelet set the volumes up before the pod ran.
func (h *historyPod) SetUp(context.Context) (lifecycle.Volumes, error) { return h.vols, nil }

func (h *historyPod) SetGates(ctx context.Context, _ map[string]bool) error {
	return h.arrive(ctx, "setGates", func(s framework.Step) bool { return s.SetGates != nil })
}

func (h *historyPod) Restart(ctx context.Context) (lifecycle.Volumes, error) {
	return h.vols, h.arrive(ctx, "restartKubelet", func(s framework.Step) bool { return s.RestartKubelet })
}

func (h *historyPod) SetKubeletRelease(ctx context.Context, release string, _ map[string]bool) (lifecycle.Volumes, error) {
	return h.vols, h.arrive(ctx, "kubeletRelease "+release, func(s framework.Step) bool { return s.KubeletRelease == release })
}

// TearDown: the pod is deleted with its namespace.
func (h *historyPod) TearDown(context.Context) error { return nil }

// arrive is the pod reaching its next kubelet step, which must be what framework/lifecycle asks
// for (what): it waits for the step's round.
func (h *historyPod) arrive(ctx context.Context, what string, is func(framework.Step) bool) error {
	for h.next < len(h.steps) && !nodecontrol.IsKubeletStep(h.steps[h.next]) {
		h.next++
	}
	if h.next == len(h.steps) || !is(h.steps[h.next]) {
		return fmt.Errorf("timeline: %s is not the pod's next kubelet step (step %d)", what, h.next)
	}
	h.next++
	return h.r.arrive(ctx)
}
