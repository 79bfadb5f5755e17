package nodecontrol

import (
	"fmt"
	"maps"
	"slices"

	"github.com/volperm/volperm/framework"
)

// What node control does to a node is an ordered list of Actions, as kind's cluster creation is
// a list of actions: a move to a cell of the skew matrix (Move), the start of a gate history
// (Start), each kubelet step of it (KubeletStep) and the node's own kubelet given back (Home)
// are planned here, purely, from what runs now (State); a Driver executes them (driver.go).

// State is what runs on the node now: the gates the apiserver in force and the kubelet report,
// and the kubelet's release ("v1.N").
type State struct {
	Gates   framework.Gates
	Release string
}

// ActionKind is what an Action does.
type ActionKind int

const (
	// UseAPIServer: an apiserver of the cluster with Gates serves its requests from now on
	// (Control.SetAPIServerGates), waited for until it reports them and is ready.
	UseAPIServer ActionKind = iota + 1
	// WriteKubeletGates: Gates written into the kubelet's configuration, in force at its next
	// restart (Control.SetKubeletGates).
	WriteKubeletGates
	// RestartKubelet: the kubelet restarted, waited for until it reports Gates.
	RestartKubelet
	// SwapKubelet: the kubelet replaced by one of Release configured with Gates
	// (KubeletReleaser.SetKubeletRelease), waited for until it reports them.
	SwapKubelet
)

// Action is one thing done to the node.
type Action struct {
	Kind ActionKind
	// Gates are the apiserver's (UseAPIServer) or the kubelet's (the others): full maps, every
	// gate the component has (Full).
	Gates map[string]bool
	// Release is SwapKubelet's release ("v1.36").
	Release string
	// Settle (RestartKubelet, SwapKubelet): pods of the harness run on the node, and the action
	// ends once the kubelet has set their volumes up again (driver.go settle).
	Settle bool
}

func (a Action) String() string {
	gates := CellKey(framework.Gates{Kubelet: a.Gates})
	if a.Kind == UseAPIServer {
		gates = CellKey(framework.Gates{APIServer: a.Gates})
	}
	settle := ""
	if a.Settle {
		settle = ", settled"
	}
	switch a.Kind {
	case UseAPIServer:
		return "use the apiserver of " + gates
	case WriteKubeletGates:
		return "write " + gates
	case RestartKubelet:
		return "restart the kubelet with " + gates + settle
	case SwapKubelet:
		return "swap in the kubelet of " + a.Release + " with " + gates + settle
	}
	return fmt.Sprintf("action %d", a.Kind)
}

// Move is the actions that give the node gates want (full maps, Full) from now: the apiserver
// of want first, then the kubelet's configuration and a restart, each only if it changes. With
// pods (the harness's pods run on the node) the restart waits until their volumes are set up
// again.
func Move(now State, want framework.Gates, pods bool) []Action {
	var out []Action
	if !maps.Equal(want.APIServer, now.Gates.APIServer) {
		out = append(out, Action{Kind: UseAPIServer, Gates: maps.Clone(want.APIServer)})
	}
	if !maps.Equal(want.Kubelet, now.Gates.Kubelet) {
		out = append(out,
			Action{Kind: WriteKubeletGates, Gates: maps.Clone(want.Kubelet)},
			Action{Kind: RestartKubelet, Gates: maps.Clone(want.Kubelet), Settle: pods})
	}
	return out
}

// Start is the actions that put an idle node at the start of tl, whose node's own kubelet
// release is home: created under another release, the apiserver first, then that release's
// kubelet with the start's gates it has; else a Move to the start's gates.
func Start[R any](tl *Timeline[R], now State, home string) []Action {
	if tl.Release == home {
		return Move(now, tl.Start, false)
	}
	return append(Move(now, framework.Gates{APIServer: tl.Start.APIServer, Kubelet: now.Gates.Kubelet}, false),
		Action{Kind: SwapKubelet, Release: tl.Release, Gates: framework.GatesOfRelease(tl.Start.Kubelet, tl.Release)})
}

// Home gives the node its own kubelet (release home) back at the end of a history, with the
// defaults of the gates the kubelet running now has (none when it runs home already).
func Home(now State, home string) []Action {
	if now.Release == home {
		return nil
	}
	return []Action{{Kind: SwapKubelet, Release: home, Gates: Full(now.Gates, framework.Gates{}).Kubelet}}
}

// KubeletStep is the actions of s, a kubelet step of a timeline whose pods run on the node
// (IsKubeletStep), and the kubelet configuration after it; configured is the one before: gates
// written into it (in force at the next restart), a restart with it, or the kubelet of another
// release with those of its gates that release has (docs/spec.md [steps.kubelet-release]).
func KubeletStep(s framework.Step, configured map[string]bool) ([]Action, map[string]bool, error) {
	next := maps.Clone(configured)
	switch s.Kind() {
	case framework.StepSetGates:
		maps.Copy(next, s.SetGates.Kubelet)
		return []Action{{Kind: WriteKubeletGates, Gates: maps.Clone(next)}}, next, nil
	case framework.StepRestartKubelet:
		return []Action{{Kind: RestartKubelet, Gates: maps.Clone(next), Settle: true}}, next, nil
	case framework.StepKubeletRelease:
		next = framework.GatesOfRelease(next, s.KubeletRelease)
		return []Action{{Kind: SwapKubelet, Release: s.KubeletRelease, Gates: maps.Clone(next), Settle: true}}, next, nil
	}
	return nil, configured, fmt.Errorf("only gate changes, kubelet restarts and kubelet releases are run in a timeline")
}

// Full is g with every known gate the components of have have, defaults filled in: the cell a
// case of gates g runs in on a cluster whose components report have.
func Full(have, g framework.Gates) framework.Gates {
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
	return framework.Gates{APIServer: fill(g.APIServer, have.APIServer), Kubelet: fill(g.Kubelet, have.Kubelet)}
}

// Unsettable says why a cluster whose components report have cannot be given gates g ("" = it
// can): a gate a component does not have can only keep its default (off).
func Unsettable(have, g framework.Gates) string {
	for _, comp := range []struct {
		name       string
		want, have map[string]bool
	}{{"apiserver", g.APIServer, have.APIServer}, {"kubelet", g.Kubelet, have.Kubelet}} {
		for _, name := range slices.Sorted(maps.Keys(framework.KnownGates)) {
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
