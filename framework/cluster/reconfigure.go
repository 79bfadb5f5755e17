package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"sort"
	"strings"
	"time"

	"github.com/volperm/volperm/framework"
)

// In-place reconfiguration (Options.Reconfigure): one cluster serves every gate combination.
// Cases without gate steps are grouped by the gates they need (a cell of the skew matrix); the
// cluster is moved from cell to cell, each move flipping as few components as it can (the
// apiserver through its static pod's flags, the kubelet through its configuration and a
// restart), and each cell's cases run as one batch. Cases whose steps flip gates (Case.After:
// KEP-5502 version skew, upgrades and downgrades) run as timelines: the cluster goes through
// the gate history of the longest case for real, and every case whose history is a later part
// of it has its pod created at that point, so pods created before and after each flip live
// through the rest of the history together and are observed at its end.

// unsettable says why the cluster cannot be given gates g ("" = it can): a gate the cluster's
// components do not have can only keep its default (off).
func (t *Target) unsettable(g framework.Gates) string {
	for _, comp := range []struct {
		name       string
		want, have map[string]bool
	}{{"apiserver", g.APIServer, t.gates.APIServer}, {"kubelet", g.Kubelet, t.gates.Kubelet}} {
		for _, name := range sortedKeys(framework.KnownGates) {
			w, ok := comp.want[name]
			if !ok {
				w = framework.KnownGates[name]
			}
			if _, has := comp.have[name]; !has && w {
				return fmt.Sprintf("needs %s gate %s=true, a gate this cluster's %s does not have", comp.name, name, comp.name)
			}
		}
	}
	return ""
}

// fullGates is g with every known gate the cluster has, defaults filled in.
func (t *Target) fullGates(g framework.Gates) framework.Gates {
	fill := func(want, have map[string]bool) map[string]bool {
		out := map[string]bool{}
		for name := range have {
			v, ok := want[name]
			if !ok {
				v = framework.KnownGates[name]
			}
			out[name] = v
		}
		return out
	}
	return framework.Gates{APIServer: fill(g.APIServer, t.gates.APIServer), Kubelet: fill(g.Kubelet, t.gates.Kubelet)}
}

// cellKey names a full set of gates.
func cellKey(g framework.Gates) string {
	word := func(m map[string]bool) string {
		var parts []string
		for _, k := range sortedKeys(m) {
			parts = append(parts, fmt.Sprintf("%s=%v", k, m[k]))
		}
		return strings.Join(parts, ",")
	}
	return "apiserver[" + word(g.APIServer) + "] kubelet[" + word(g.Kubelet) + "]"
}

// flips counts the components whose gates differ between a and b.
func flips(a, b framework.Gates) int {
	n := 0
	if !maps.Equal(a.APIServer, b.APIServer) {
		n++
	}
	if !maps.Equal(a.Kubelet, b.Kubelet) {
		n++
	}
	return n
}

// observeReconfiguring runs the timelines, then the cells nearest first.
func (t *Target) observeReconfiguring(ctx context.Context, runs []*caseRun) {
	var plain, histories []*caseRun
	for _, r := range runs {
		switch {
		case r.err != nil:
		case (hasGateSteps(r.c) || framework.ChangesKubeletRelease(r.c)) && !hasChmodSteps(r.c):
			histories = append(histories, r)
		default:
			plain = append(plain, r)
		}
	}
	sortByHistory(histories)
	var lines []*timeline
	for _, r := range histories {
		lines = attach(lines, r, t.fullGates(r.c.Gates))
	}
	for len(lines) > 0 {
		// Nearest start first, then in attach order.
		sort.SliceStable(lines, func(i, j int) bool { return flips(t.gates, lines[i].start) < flips(t.gates, lines[j].start) })
		tl := lines[0]
		lines = lines[1:]
		if err := t.runTimeline(ctx, tl); err != nil {
			for _, r := range tl.runs() {
				if r.err == nil {
					r.err = err
				}
			}
		}
	}
	cells := map[string][]*caseRun{}
	gatesOf := map[string]framework.Gates{}
	for _, r := range plain {
		g := t.fullGates(r.c.Gates)
		k := cellKey(g)
		cells[k] = append(cells[k], r)
		gatesOf[k] = g
	}
	for len(cells) > 0 {
		// Nearest cell first (fewest components to flip), then by name.
		keys := sortedKeys(cells)
		sort.SliceStable(keys, func(i, j int) bool { return flips(t.gates, gatesOf[keys[i]]) < flips(t.gates, gatesOf[keys[j]]) })
		k := keys[0]
		cell := cells[k]
		delete(cells, k)
		if err := t.reconfigure(ctx, gatesOf[k], true); err != nil {
			for _, r := range cell {
				r.err = err
			}
			continue
		}
		start := time.Now()
		t.observeRuns(ctx, cell)
		t.logf("cell %s: %d cases in %s", k, len(cell), time.Since(start).Round(100*time.Millisecond))
	}
}

// sortByHistory puts the longest histories first, for attach.
func sortByHistory(runs []*caseRun) {
	sort.SliceStable(runs, func(i, j int) bool { return len(runs[i].c.After) > len(runs[j].c.After) })
}

func hasGateSteps(c *framework.Case) bool {
	for _, s := range c.After {
		if s.SetGates != nil {
			return true
		}
	}
	return false
}

func hasChmodSteps(c *framework.Case) bool {
	for _, s := range c.After {
		if s.Chmod != nil {
			return true
		}
	}
	return false
}

// timeline is one gate history: start (the gates, and the kubelet's release, "v1.N"), then
// steps; created[k] are the cases whose pods are created before steps[k] (created[len(steps)]:
// at the end).
type timeline struct {
	start   framework.Gates
	release string
	steps   []framework.Step
	created [][]*caseRun
}

func (tl *timeline) runs() []*caseRun {
	var out []*caseRun
	for _, c := range tl.created {
		out = append(out, c...)
	}
	return out
}

// at is the gates in force and the kubelet's release before steps[k], and whether the kubelet's
// configuration is the one it runs (a kubelet gate set but not yet restarted is not a point a
// case can start at).
func (tl *timeline) at(k int) (framework.Gates, string, bool) {
	g := framework.Gates{APIServer: maps.Clone(tl.start.APIServer), Kubelet: maps.Clone(tl.start.Kubelet)}
	configured := maps.Clone(g.Kubelet)
	release := tl.release
	for _, s := range tl.steps[:k] {
		switch {
		case s.SetGates != nil:
			maps.Copy(g.APIServer, s.SetGates.APIServer)
			maps.Copy(configured, s.SetGates.Kubelet)
		case s.RestartKubelet:
			g.Kubelet = maps.Clone(configured)
		case s.KubeletRelease != "":
			release = s.KubeletRelease
			configured = framework.GatesOfRelease(configured, release)
			g.Kubelet = maps.Clone(configured)
		}
	}
	return g, release, maps.Equal(configured, g.Kubelet)
}

// pointKey names a point of a history: the kubelet's release and the gates in force, of the
// kubelet only those its release has.
func pointKey(g framework.Gates, release string) string {
	return release + " " + cellKey(framework.Gates{APIServer: g.APIServer, Kubelet: framework.GatesOfRelease(g.Kubelet, release)})
}

// attach puts r into the first timeline of which it is a later part (the same remaining steps
// from a point where the gates and the kubelet's release are the ones r is created with), or
// starts a new one. Longer histories should be attached first.
func attach(lines []*timeline, r *caseRun, gates framework.Gates) []*timeline {
	want := stepsKey(r.c.After)
	created := r.c.Releases.Of(false)
	for _, tl := range lines {
		k := len(tl.steps) - len(r.c.After)
		if k < 0 || stepsKey(tl.steps[k:]) != want {
			continue
		}
		if g, release, settled := tl.at(k); settled && pointKey(g, release) == pointKey(gates, created) {
			tl.created[k] = append(tl.created[k], r)
			return lines
		}
	}
	tl := &timeline{start: gates, release: created, steps: r.c.After, created: make([][]*caseRun, len(r.c.After)+1)}
	tl.created[0] = []*caseRun{r}
	return append(lines, tl)
}

func stepsKey(s []framework.Step) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// runTimeline goes through tl on the cluster: pods are created (and seen running or failing
// to mount) at their point, the steps are applied for real, and every pod is observed at the
// end.
func (t *Target) runTimeline(ctx context.Context, tl *timeline) error {
	start := time.Now()
	home := framework.MinorRelease(t.kubeletVersion)
	if tl.release != home {
		// Created under another kubelet: the apiserver first, then that kubelet with the
		// start's gates it has. The history ends on the node's own release (a matrix routes a
		// case to the node of its last kubelet release); if it does not, the node gets it back.
		if err := t.reconfigure(ctx, framework.Gates{APIServer: tl.start.APIServer, Kubelet: t.gates.Kubelet}, true); err != nil {
			return err
		}
		if err := t.setKubeletRelease(ctx, tl.release, framework.GatesOfRelease(tl.start.Kubelet, tl.release), false); err != nil {
			return err
		}
	} else if err := t.reconfigure(ctx, tl.start, true); err != nil {
		return err
	}
	defer func() {
		if t.release != home {
			if err := t.setKubeletRelease(context.WithoutCancel(ctx), home, t.fullGates(framework.Gates{}).Kubelet, false); err != nil {
				t.logf("give node %s its kubelet %s back: %v", t.node, home, err)
			}
		}
	}()
	ns, err := t.createNamespace(ctx)
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
	var pods []*probePod
	for k := 0; k <= len(tl.steps); k++ {
		if len(tl.created[k]) > 0 {
			ps, cleanup, err := t.setUp(ctx, ns, fmt.Sprintf("t%d", k), tl.created[k])
			cleanup()
			if err != nil {
				return err
			}
			t.count(len(ps))
			for _, p := range ps {
				if err := t.startPod(ctx, p); err != nil {
					p.fail(t.explain(ctx, p, err))
					continue
				}
				pods = append(pods, p)
			}
		}
		if k == len(tl.steps) {
			break
		}
		switch s := tl.steps[k]; {
		case s.SetGates != nil && len(s.SetGates.APIServer) > 0:
			g := framework.Gates{APIServer: maps.Clone(t.gates.APIServer), Kubelet: t.gates.Kubelet}
			maps.Copy(g.APIServer, s.SetGates.APIServer)
			if err := t.reconfigure(ctx, g, false); err != nil {
				return fmt.Errorf("step %d: %w", k, err)
			}
			fallthrough
		case s.SetGates != nil:
			if len(s.SetGates.Kubelet) > 0 {
				maps.Copy(configured, s.SetGates.Kubelet)
				if err := t.opts.NodeControl.SetKubeletGates(ctx, configured); err != nil {
					return fmt.Errorf("step %d: %w", k, err)
				}
			}
		case s.RestartKubelet:
			begin := time.Now()
			if err := t.restartKubelet(ctx, configured); err != nil {
				return fmt.Errorf("step %d: %w", k, err)
			}
			t.gates.Kubelet = maps.Clone(configured)
			t.logf("kubelet restarted with %s in %s", cellKey(framework.Gates{Kubelet: configured}), time.Since(begin).Round(100*time.Millisecond))
		case s.KubeletRelease != "":
			// [steps.kubelet-release]: the gates that release lacks leave the configuration.
			configured = framework.GatesOfRelease(configured, s.KubeletRelease)
			if err := t.setKubeletRelease(ctx, s.KubeletRelease, configured, true); err != nil {
				return fmt.Errorf("step %d: %w", k, err)
			}
		default:
			return fmt.Errorf("step %d: only gate changes, kubelet restarts and kubelet releases are run in a timeline", k)
		}
	}
	for _, p := range pods {
		p.fail(t.explain(ctx, p, t.finishPod(ctx, p)))
	}
	t.logf("timeline of %d cases through %d steps in %s", len(tl.runs()), len(tl.steps), time.Since(start).Round(100*time.Millisecond))
	return nil
}

// setKubeletRelease replaces the node's kubelet by one of release with gates (KubeletReleaser)
// and waits until it reports them; with pods, it then waits for the volume manager to set their
// volumes up again (settle), as after a restart.
func (t *Target) setKubeletRelease(ctx context.Context, release string, gates map[string]bool, pods bool) error {
	kr, ok := t.opts.NodeControl.(KubeletReleaser)
	if !ok {
		return fmt.Errorf("node %s: this target cannot replace the kubelet", t.node)
	}
	begin := time.Now()
	var before map[string]int
	if pods {
		before = t.mountedVolumes(ctx)
	}
	if err := kr.SetKubeletRelease(ctx, release, gates); err != nil {
		return err
	}
	var got map[string]bool
	err := waitFor(ctx, 90*time.Second, 500*time.Millisecond, "kubelet "+release+" of "+t.node+" back", func() (bool, error) {
		var err error
		got, err = t.featureGatesOnce(ctx, "/api/v1/nodes/"+t.node+"/proxy/metrics")
		if err != nil {
			return false, nil // restarting
		}
		return GatesMismatch(framework.Gates{Kubelet: gates}, framework.Gates{Kubelet: got}) == "", nil
	})
	if err != nil {
		return err
	}
	t.gates.Kubelet, t.release = got, release
	if pods {
		if err := t.settle(ctx, before); err != nil {
			return err
		}
	}
	t.logf("kubelet of node %s replaced by %s with %s in %s", t.node, release, cellKey(framework.Gates{Kubelet: gates}), time.Since(begin).Round(100*time.Millisecond))
	return nil
}

// reconfigure gives the cluster gates want (full maps, fullGates): the apiserver of those gates
// first (the target's requests go there from then on: endpoint.go), then the kubelet, each only
// if it changes, each waited for until it reports the gates. With idle (no pod of the harness on
// the node) the kubelet is only restarted; with pods, the volume manager is given time to set
// their volumes up again.
func (t *Target) reconfigure(ctx context.Context, want framework.Gates, idle bool) error {
	if !maps.Equal(want.APIServer, t.gates.APIServer) {
		start := time.Now()
		ep, err := t.opts.NodeControl.SetAPIServerGates(ctx, want.APIServer)
		if err != nil {
			return err
		}
		previous := t.endpoint.get()
		t.endpoint.set(ep)
		err = waitFor(ctx, 3*time.Minute, 500*time.Millisecond, "apiserver with gates "+cellKey(framework.Gates{APIServer: want.APIServer}), func() (bool, error) {
			got, err := t.featureGatesOnce(ctx, "/metrics")
			if err != nil || GatesMismatch(framework.Gates{APIServer: want.APIServer}, framework.Gates{APIServer: got}) != "" {
				return false, nil // starting, or not serving those gates yet
			}
			rctx, cancel := context.WithTimeout(ctx, callTimeout)
			defer cancel()
			_, err = t.client.CoreV1().RESTClient().Get().AbsPath("/readyz").DoRaw(rctx)
			return err == nil, nil
		})
		if err != nil {
			t.endpoint.set(previous) // the apiserver of the gates in force still serves
			return err
		}
		t.gates.APIServer = maps.Clone(want.APIServer)
		where := "the kubeconfig's apiserver"
		if ep != "" {
			where = "the apiserver at " + ep
		}
		t.logf("%s serves %s, in %s", where, cellKey(framework.Gates{APIServer: want.APIServer}), time.Since(start).Round(100*time.Millisecond))
	}
	if !maps.Equal(want.Kubelet, t.gates.Kubelet) {
		start := time.Now()
		if err := t.opts.NodeControl.SetKubeletGates(ctx, want.Kubelet); err != nil {
			return err
		}
		restart := t.restartKubelet // then the volume manager sets the pods' volumes up again
		if idle {
			restart = t.restartKubeletOnly
		}
		if err := restart(ctx, want.Kubelet); err != nil {
			return err
		}
		t.gates.Kubelet = maps.Clone(want.Kubelet)
		t.logf("kubelet restarted with %s in %s", cellKey(framework.Gates{Kubelet: want.Kubelet}), time.Since(start).Round(100*time.Millisecond))
	}
	return nil
}
