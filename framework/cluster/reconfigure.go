package cluster

import (
	"context"
	"sort"
	"time"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/nodecontrol"
)

// In-place reconfiguration (Options.Reconfigure): one cluster serves every gate combination.
// This file plans which pods run where in the history of the node; node control
// (framework/nodecontrol: Move, the Driver) changes the node.
// Cases without gate steps are grouped by the gates they need (a cell of the skew matrix); the
// cluster is moved from cell to cell, each move flipping as few components as it can (the
// apiserver through its static pod's flags, the kubelet through its configuration and a
// restart), and each cell's cases run as one batch. Cases whose steps flip gates (Case.After:
// KEP-5502 version skew, upgrades and downgrades) run as timelines: the cluster goes through
// the gate history of the longest case for real, and every case whose history is a later part
// of it has its pod created at that point, so pods created before and after each flip live
// through the rest of the history together and are observed at its end.

// gatesGap says why the cluster cannot run one component's gates of c (api: the apiserver's,
// else the kubelet's): reconfiguring, gates it cannot be given; otherwise gates other than the
// ones it runs ("" = none). The other component's maps are left empty (every gate is off by
// default: framework.KnownGates).
func (t *Target) gatesGap(c *framework.Case, api bool) string {
	want, have := framework.Gates{Kubelet: c.Gates.Kubelet}, framework.Gates{Kubelet: t.now.Gates.Kubelet}
	if api {
		want, have = framework.Gates{APIServer: c.Gates.APIServer}, framework.Gates{APIServer: t.now.Gates.APIServer}
	}
	if t.opts.Reconfigure {
		return nodecontrol.Unsettable(t.now.Gates, want)
	}
	return framework.GatesMismatch(want, have)
}

// fullGates is g with every known gate the cluster has, defaults filled in (nodecontrol.Full).
func (t *Target) fullGates(g framework.Gates) framework.Gates {
	return nodecontrol.Full(t.now.Gates, g)
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
			return nodecontrol.Flips(t.now.Gates, lines[i].Start) < nodecontrol.Flips(t.now.Gates, lines[j].Start)
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
			return nodecontrol.Flips(t.now.Gates, gatesOf[keys[i]]) < nodecontrol.Flips(t.now.Gates, gatesOf[keys[j]])
		})
		k := keys[0]
		cell := cells[k]
		delete(cells, k)
		if err := t.ctl.Do(ctx, nodecontrol.Move(t.now, gatesOf[k], false)...); err != nil {
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
