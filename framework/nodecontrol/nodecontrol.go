// Package nodecontrol is what volperm does to a node it controls (kind's) between a case's steps:
// the Control a node gives (kubelet gates, restarts, an apiserver per gate setting, kubelets of
// other releases), the cells of the skew matrix a run moves the cluster through, the gate
// histories (Timeline) whose pods are created at their points and live through the rest
// together, and each move as an ordered list of Actions (actions.go, pure) that a Driver
// executes (driver.go: through the Control, waiting on the cluster's reports of each
// component, settling after a kubelet restart); Rounds and HistoryPod share a node-wide step
// among the pods that name it. framework/targets/kind gives the Control (node.go: docker exec);
// framework/cluster gives the Driver its reads of the cluster and runs the pods around the
// actions (reconfigure.go, timeline.go, steps.go). Issue 35: node control cut from the
// any-cluster path along its seam.
package nodecontrol

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/volperm/volperm/framework"
)

// Control changes the node's kubelet, for the steps of a case (Case.After).
type Control interface {
	// SetKubeletGates writes the kubelet's feature gates into its configuration; they take
	// effect when the kubelet restarts.
	SetKubeletGates(ctx context.Context, gates map[string]bool) error
	// RestartKubelet restarts the kubelet (the target then waits until it answers).
	RestartKubelet(ctx context.Context) error
	// SetAPIServerGates gives the cluster an apiserver with these feature gates, without
	// restarting the one the node's kubelet watches, and returns its endpoint (host:port; "" =
	// the kubeconfig's server). The target sends its requests there from then on and waits
	// until it reports the gates.
	SetAPIServerGates(ctx context.Context, gates map[string]bool) (endpoint string, err error)
}

// KubeletReleaser is a Control that can also replace the node's kubelet by one of another
// release, for kubeletRelease steps (docs/spec.md [steps.kubelet-release]); kind@matrix's is.
type KubeletReleaser interface {
	// KubeletReleases are the releases ("v1.36") it can give the node.
	KubeletReleases() []string
	// SetKubeletRelease replaces the kubelet's binary by one of release, writes gates (only
	// gates that release has) into its configuration and restarts it; it returns once the API
	// reports the node's kubelet as that release.
	SetKubeletRelease(ctx context.Context, release string, gates map[string]bool) error
}

// CellKey names a full set of gates: a cell of the skew matrix.
func CellKey(g framework.Gates) string {
	word := func(m map[string]bool) string {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(m)) {
			parts = append(parts, fmt.Sprintf("%s=%v", k, m[k]))
		}
		return strings.Join(parts, ",")
	}
	return "apiserver[" + word(g.APIServer) + "] kubelet[" + word(g.Kubelet) + "]"
}

// Flips counts the components whose gates differ between a and b: the cost of moving a cluster
// from one cell to the other (an apiserver of other gates, a kubelet restart).
func Flips(a, b framework.Gates) int {
	n := 0
	if !maps.Equal(a.APIServer, b.APIServer) {
		n++
	}
	if !maps.Equal(a.Kubelet, b.Kubelet) {
		n++
	}
	return n
}

// HasGateSteps says whether a step of c sets gates.
func HasGateSteps(c *framework.Case) bool {
	return slices.ContainsFunc(c.After, func(s framework.Step) bool { return s.Kind() == framework.StepSetGates })
}

// HasChmodSteps says whether a step of c changes a mode (run in the pod, not by the node).
func HasChmodSteps(c *framework.Case) bool {
	return slices.ContainsFunc(c.After, func(s framework.Step) bool { return s.Kind() == framework.StepChmod })
}

// IsHistory says whether c runs as (part of) a Timeline: its steps set gates or change the
// kubelet's release, and none is a chmod (those run as step groups: framework/cluster
// stepgroups.go).
func IsHistory(c *framework.Case) bool {
	return (HasGateSteps(c) || framework.ChangesKubeletRelease(c)) && !HasChmodSteps(c)
}

// IsKubeletStep says whether s acts on the kubelet, every pod of the node (a round of a
// timeline): a setGates step with kubelet gates, a restart or a kubelet release.
// framework/lifecycle calls a Pod for exactly these.
func IsKubeletStep(s framework.Step) bool {
	return s.SetsKubeletGates() || s.StartsKubelet()
}

// Timeline is one gate history: Start (the gates, and the kubelet's release, "v1.N"), then
// Steps; Created[k] are the runs (R: what the executor keeps per case) whose pods are created
// before Steps[k] (Created[len(Steps)]: at the end).
type Timeline[R any] struct {
	Start   framework.Gates
	Release string
	Steps   []framework.Step
	Created [][]R
}

// Runs are every run of the timeline, in the order of their points.
func (tl *Timeline[R]) Runs() []R {
	var out []R
	for _, c := range tl.Created {
		out = append(out, c...)
	}
	return out
}

// At is the gates in force and the kubelet's release before Steps[k], and whether the
// kubelet's configuration is the one it runs (a kubelet gate set but not yet restarted is not a
// point a case can start at).
func (tl *Timeline[R]) At(k int) (framework.Gates, string, bool) {
	g := framework.Gates{APIServer: maps.Clone(tl.Start.APIServer), Kubelet: maps.Clone(tl.Start.Kubelet)}
	configured := maps.Clone(g.Kubelet)
	release := tl.Release
	for _, s := range tl.Steps[:k] {
		switch s.Kind() {
		case framework.StepSetGates:
			maps.Copy(g.APIServer, s.SetGates.APIServer)
			maps.Copy(configured, s.SetGates.Kubelet)
		case framework.StepRestartKubelet:
			g.Kubelet = maps.Clone(configured)
		case framework.StepKubeletRelease:
			release = s.KubeletRelease
			configured = framework.GatesOfRelease(configured, release)
			g.Kubelet = maps.Clone(configured)
		}
	}
	return g, release, maps.Equal(configured, g.Kubelet)
}

// PointKey names a point of a history: the kubelet's release and the gates in force, of the
// kubelet only those its release has.
func PointKey(g framework.Gates, release string) string {
	return release + " " + CellKey(framework.Gates{APIServer: g.APIServer, Kubelet: framework.GatesOfRelease(g.Kubelet, release)})
}

// SortByHistory puts the longest histories first, for Attach.
func SortByHistory[R any](runs []R, caseOf func(R) *framework.Case) {
	sort.SliceStable(runs, func(i, j int) bool { return len(caseOf(runs[i]).After) > len(caseOf(runs[j]).After) })
}

// Attach puts r (of case c, whose full gates are gates) into the first timeline of which it is
// a later part (the same remaining steps from a point where the gates and the kubelet's release
// are the ones r is created with), or starts a new one. Longer histories should be attached
// first (SortByHistory).
func Attach[R any](lines []*Timeline[R], r R, c *framework.Case, gates framework.Gates) []*Timeline[R] {
	want := StepsKey(c.After)
	created := c.Releases.Of(false)
	for _, tl := range lines {
		k := len(tl.Steps) - len(c.After)
		if k < 0 || StepsKey(tl.Steps[k:]) != want {
			continue
		}
		if g, release, settled := tl.At(k); settled && PointKey(g, release) == PointKey(gates, created) {
			tl.Created[k] = append(tl.Created[k], r)
			return lines
		}
	}
	tl := &Timeline[R]{Start: gates, Release: created, Steps: c.After, Created: make([][]R, len(c.After)+1)}
	tl.Created[0] = []R{r}
	return append(lines, tl)
}

// StepsKey names a list of steps.
func StepsKey(s []framework.Step) string {
	b, _ := json.Marshal(s)
	return string(b)
}
