package framework

import (
	"fmt"
	"maps"
	"slices"
	"sort"
)

// Gate is one feature gate volperm knows: every component, target and report reads it from this
// table (issue 35: one table per concept). A new gate is one row here, its rule in docs/spec.md
// and the oracle, and, for an upstream gate, its feature constant in agents/upstream (which
// cannot import this package; a test checks the two agree).
type Gate struct {
	Name string
	// Default is the gate's value when a component is not told one.
	Default bool
	// First is the first release that has it: a component of an older release refuses the flag.
	First string
	// Upstream says that Kubernetes has the gate (v1.37 pkg/features/kube_features.go) on
	// kube-apiserver and kubelet, so real components (upstream, kind, cluster) can set it; a gate
	// that is not upstream is volperm's own, which only the reference node simulates.
	Upstream bool
	// Feature is the claimable feature (feature.go) a case belongs to when it turns the gate on.
	Feature string
}

// gateTable is every gate a Case may set.
var gateTable = []Gate{
	// KEP-5502 (seed 000): alpha in v1.37, default off, on both components.
	{Name: GateEmptyDirVolumeMode, Default: false, First: "v1.37", Upstream: true, Feature: FeatureEmptyDirVolumeMode},
	// Seed 002's proposal: volperm's own gate, only the newest release as the reference
	// simulates it.
	{Name: GatePreservePermissions, Default: false, First: "v1.37", Upstream: false, Feature: FeaturePreservePermissions},
	// KEP-5936: alpha in v1.37, default off, on both components: defaultUser and item user.
	{Name: GateAtomicWriteVolumeUserFields, Default: false, First: "v1.37", Upstream: true, Feature: FeatureAtomicWriteVolumeUserFields},
	// KEP-5855: alpha in v1.37, default off, on both components: volumeMounts' bindMountOptions.
	{Name: GateVolumeBindMountOptions, Default: false, First: "v1.37", Upstream: true, Feature: FeatureVolumeBindMountOptions},
}

// GateTable lists every gate, in table order.
func GateTable() []Gate { return slices.Clone(gateTable) }

// GateNamed returns the gate called name.
func GateNamed(name string) (Gate, bool) {
	i := slices.IndexFunc(gateTable, func(g Gate) bool { return g.Name == name })
	if i < 0 {
		return Gate{}, false
	}
	return gateTable[i], true
}

// UpstreamGates are the names of the gates Kubernetes has, sorted.
func UpstreamGates() []string {
	var out []string
	for _, g := range gateTable {
		if g.Upstream {
			out = append(out, g.Name)
		}
	}
	sort.Strings(out)
	return out
}

// RegisterGate adds a row to the gate table, for a gate a fork or a test binary adds without
// editing this file (cmd/volperm/tinygate_test.go: the recipe of docs/architecture.md "Add a
// gate or a release", proven). Call it from an init function, before any run; a name that is
// already a gate, or a row without a name or first release, panics.
func RegisterGate(g Gate) {
	if g.Name == "" || ReleaseMinor(g.First) < 0 {
		panic(fmt.Sprintf("framework.RegisterGate(%+v): a gate needs a name and a first release (v1.N)", g))
	}
	if _, dup := GateNamed(g.Name); dup {
		panic("framework.RegisterGate: " + g.Name + " is a gate already")
	}
	gateTable = append(gateTable, g)
	KnownGates[g.Name] = g.Default
}

// KnownGates maps every gate volperm understands to its default value (gateTable).
var KnownGates = func() map[string]bool {
	out := map[string]bool{}
	for _, g := range gateTable {
		out[g.Name] = g.Default
	}
	return out
}()

// GatesMismatch says how the gates want differ from the gates a cluster's components report
// (have), "" when they do not: for every known gate, want's value (its default when want does
// not name it) against have's ("absent" when the component does not have it).
func GatesMismatch(want, have Gates) string {
	for _, comp := range []struct {
		name       string
		want, have map[string]bool
	}{{"apiserver", want.APIServer, have.APIServer}, {"kubelet", want.Kubelet, have.Kubelet}} {
		for _, g := range slices.Sorted(maps.Keys(KnownGates)) {
			w, ok := comp.want[g]
			if !ok {
				w = KnownGates[g]
			}
			if w != comp.have[g] {
				return fmt.Sprintf("needs %s gate %s=%v, the cluster runs %s", comp.name, g, w, GateWord(comp.have, g))
			}
		}
	}
	return ""
}

// GateWord is gate g of a component's gates m as a word: on, off, or absent (the component
// does not have it).
func GateWord(m map[string]bool, g string) string {
	v, ok := m[g]
	switch {
	case !ok:
		return "absent"
	case v:
		return "on"
	}
	return "off"
}
