package cluster

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"time"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/nodecontrol"
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

// gatesGap says why the cluster cannot run one component's gates of c (api: the apiserver's,
// else the kubelet's): reconfiguring, gates it cannot be given; otherwise gates other than the
// ones it runs ("" = none). The other component's maps are left empty (every gate is off by
// default: framework.KnownGates).
func (t *Target) gatesGap(c *framework.Case, api bool) string {
	want, have := framework.Gates{Kubelet: c.Gates.Kubelet}, framework.Gates{Kubelet: t.gates.Kubelet}
	if api {
		want, have = framework.Gates{APIServer: c.Gates.APIServer}, framework.Gates{APIServer: t.gates.APIServer}
	}
	if t.opts.Reconfigure {
		return t.unsettable(want)
	}
	return GatesMismatch(want, have)
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

// observeReconfiguring runs the timelines, then the cells nearest first.
func (t *Target) observeReconfiguring(ctx context.Context, runs []*caseRun) {
	var plain, histories []*caseRun
	for _, r := range runs {
		switch {
		case r.err != nil:
		case nodecontrol.IsHistory(r.c):
			histories = append(histories, r)
		default:
			plain = append(plain, r)
		}
	}
	nodecontrol.SortByHistory(histories, caseOf)
	var lines []*timeline
	for _, r := range histories {
		lines = nodecontrol.Attach(lines, r, r.c, t.fullGates(r.c.Gates))
	}
	for len(lines) > 0 {
		// Nearest start first, then in attach order.
		sort.SliceStable(lines, func(i, j int) bool {
			return nodecontrol.Flips(t.gates, lines[i].Start) < nodecontrol.Flips(t.gates, lines[j].Start)
		})
		tl := lines[0]
		lines = lines[1:]
		if err := t.runTimeline(ctx, tl); err != nil {
			for _, r := range tl.Runs() {
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
		k := nodecontrol.CellKey(g)
		cells[k] = append(cells[k], r)
		gatesOf[k] = g
	}
	for len(cells) > 0 {
		// Nearest cell first (fewest components to flip), then by name.
		keys := sortedKeys(cells)
		sort.SliceStable(keys, func(i, j int) bool {
			return nodecontrol.Flips(t.gates, gatesOf[keys[i]]) < nodecontrol.Flips(t.gates, gatesOf[keys[j]])
		})
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

// setKubeletRelease replaces the node's kubelet by one of release with gates (KubeletReleaser)
// and waits until it reports them; with pods, it then waits for the volume manager to set their
// volumes up again (settle), as after a restart.
func (t *Target) setKubeletRelease(ctx context.Context, release string, gates map[string]bool, pods bool) error {
	kr, ok := t.opts.NodeControl.(KubeletReleaser)
	if !ok {
		return fmt.Errorf("node %s: this target cannot replace the kubelet", t.node)
	}
	begin := time.Now()
	var before *kubeletState
	if pods {
		before = t.kubeletNow(ctx)
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
	t.logf("kubelet of node %s replaced by %s with %s in %s", t.node, release, nodecontrol.CellKey(framework.Gates{Kubelet: gates}), time.Since(begin).Round(100*time.Millisecond))
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
		ep, err := t.apiserverOf(ctx, want.APIServer)
		if err != nil {
			return err // the apiserver of the gates in force still serves
		}
		t.endpoint.set(ep)
		t.gates.APIServer = maps.Clone(want.APIServer)
		where := "the kubeconfig's apiserver"
		if ep != "" {
			where = "the apiserver at " + ep
		}
		t.logf("%s serves %s, in %s", where, nodecontrol.CellKey(framework.Gates{APIServer: want.APIServer}), time.Since(start).Round(100*time.Millisecond))
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
		t.logf("kubelet restarted with %s in %s", nodecontrol.CellKey(framework.Gates{Kubelet: want.Kubelet}), time.Since(start).Round(100*time.Millisecond))
	}
	return nil
}

// apiserverOf is the endpoint of an apiserver of the cluster that serves gates (full maps,
// fullGates): the node control gives one (NodeControl.SetAPIServerGates), and it is waited for
// until it reports the gates and is ready. Nothing is put in force: the caller sends its requests
// there (endpoint.go).
func (t *Target) apiserverOf(ctx context.Context, gates map[string]bool) (string, error) {
	ep, err := t.opts.NodeControl.SetAPIServerGates(ctx, gates)
	if err != nil {
		return "", err
	}
	ectx := withEndpoint(ctx, ep)
	err = waitFor(ctx, 3*time.Minute, 500*time.Millisecond, "apiserver with gates "+nodecontrol.CellKey(framework.Gates{APIServer: gates}), func() (bool, error) {
		got, err := t.featureGatesOnce(ectx, "/metrics")
		if err != nil || GatesMismatch(framework.Gates{APIServer: gates}, framework.Gates{APIServer: got}) != "" {
			return false, nil // starting, or not serving those gates yet
		}
		rctx, cancel := context.WithTimeout(ectx, callTimeout)
		defer cancel()
		_, err = t.client.CoreV1().RESTClient().Get().AbsPath("/readyz").DoRaw(rctx)
		return err == nil, nil
	})
	return ep, err
}
