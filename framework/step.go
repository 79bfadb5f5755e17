package framework

import "slices"

// StepKind is what a Step does (docs/spec.md "The order of events" 5): one field of Step, named
// by its JSON name, and one row of stepKinds (issue 35: one table per concept). A new kind of
// step is a field of Step, a row here, its rule in docs/spec.md and the oracle, and what a node
// does with it (framework/lifecycle's Pod; framework/nodecontrol on a cluster's kubelet);
// TestStepKinds fails when a field of Step has no row.
type StepKind string

// The kinds of step, in table order.
const (
	StepChmod          StepKind = "chmod"
	StepSetGates       StepKind = "setGates"
	StepRestartKubelet StepKind = "restartKubelet"
	StepUpdateSources  StepKind = "updateSources"
	StepKubeletRelease StepKind = "kubeletRelease"
)

// stepKindRow is one kind of step: whether a Step is one (set), and whether it starts a
// kubelet process while the pod runs, which sets every volume up again (docs/spec.md [steps]).
type stepKindRow struct {
	kind          StepKind
	set           func(Step) bool
	startsKubelet bool
}

// stepKinds is every kind of step.
var stepKinds = []stepKindRow{
	{StepChmod, func(s Step) bool { return s.Chmod != nil }, false},
	{StepSetGates, func(s Step) bool { return s.SetGates != nil }, false},
	{StepRestartKubelet, func(s Step) bool { return s.RestartKubelet }, true},
	{StepUpdateSources, func(s Step) bool { return len(s.UpdateSources) > 0 }, false},
	{StepKubeletRelease, func(s Step) bool { return s.KubeletRelease != "" }, true},
}

// StepKinds are every kind of step, in table order.
func StepKinds() []StepKind {
	out := make([]StepKind, 0, len(stepKinds))
	for _, k := range stepKinds {
		out = append(out, k.kind)
	}
	return out
}

// Kind is what s does: "" unless exactly one field of s is set (Load refuses such a step).
func (s Step) Kind() StepKind {
	var kind StepKind
	for _, k := range stepKinds {
		if k.set(s) {
			if kind != "" {
				return ""
			}
			kind = k.kind
		}
	}
	return kind
}

// fieldsSet counts the fields of s that are set.
func (s Step) fieldsSet() int {
	n := 0
	for _, k := range stepKinds {
		if k.set(s) {
			n++
		}
	}
	return n
}

// StartsKubelet says whether s starts a kubelet process while the pod runs (restartKubelet,
// kubeletRelease), which sets every volume of the pod up again.
func (s Step) StartsKubelet() bool {
	kind := s.Kind()
	i := slices.IndexFunc(stepKinds, func(k stepKindRow) bool { return k.kind == kind })
	return i >= 0 && stepKinds[i].startsKubelet
}

// SetsKubeletGates says whether s writes gates into the kubelet's configuration (a setGates
// step with kubelet gates): they take effect at the next kubelet start.
func (s Step) SetsKubeletGates() bool {
	return s.Kind() == StepSetGates && len(s.SetGates.Kubelet) > 0
}
