package main

import (
	"fmt"
	"sort"
	"sync"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
)

// gateMu serializes every use of the process-global feature gate: kube-apiserver and kubelet
// code read utilfeature.DefaultFeatureGate, so one process can be only one component at a time.
var gateMu sync.Mutex

// withGates runs fn with the request's gates g in force on the process-global feature gate
// (through its API, utilfeature.DefaultMutableFeatureGate.SetFromMap) and restores the values
// it had before. The harness sends every gate it knows (docs/exec-protocol.md "Request":
// kubeletGates, apiserverGates): those this release has (upstreamGates) are set; one it lacks
// must be off, which is what the release does without it (the harness does not send a case
// that turns it on: framework/targets/upstream gateSupport).
func withGates(g map[string]bool, fn func() error) error {
	want := map[string]bool{}
	gates := make([]string, 0, len(g))
	for gate := range g {
		gates = append(gates, gate)
	}
	sort.Strings(gates)
	for _, gate := range gates {
		feature, ok := upstreamGates[gate]
		switch {
		case ok:
			want[string(feature)] = g[gate]
		case g[gate]:
			return fmt.Errorf("feature gates: this release (%s) has no feature gate %s", kubernetesRelease, gate)
		}
	}
	gateMu.Lock()
	defer gateMu.Unlock()
	saved := map[string]bool{}
	for feature := range want {
		saved[feature] = utilfeature.DefaultFeatureGate.Enabled(featuregate.Feature(feature))
	}
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(want); err != nil {
		return fmt.Errorf("set feature gates %v: %w", want, err)
	}
	defer func() {
		if rerr := utilfeature.DefaultMutableFeatureGate.SetFromMap(saved); rerr != nil {
			// The gate accepted these names a moment ago: failing now is a broken process.
			panic(fmt.Sprintf("%s: restore feature gates %v: %v", name, saved, rerr))
		}
	}()
	return fn()
}
