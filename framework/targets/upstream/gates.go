package upstream

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
	"k8s.io/kubernetes/pkg/features"

	"github.com/volperm/volperm/framework"
)

// upstreamGates maps the volperm gates that exist upstream to Kubernetes' feature names.
var upstreamGates = map[string]featuregate.Feature{
	// v1.37 pkg/features/kube_features.go: KEP-5502, alpha, on kube-apiserver and kubelet.
	framework.GateEmptyDirVolumeMode: features.EmptyDirVolumeMode,
	// v1.37 pkg/features/kube_features.go: KEP-5936, alpha, on kube-apiserver and kubelet.
	framework.GateAtomicWriteVolumeUserFields: features.AtomicWriteVolumeUserFields,
}

// gateMu serializes every use of the process-global feature gate: kube-apiserver and kubelet
// code read utilfeature.DefaultFeatureGate, so one process can be only one component at a time.
var gateMu sync.Mutex

// withGates runs fn with the volperm gates g in force on the process-global feature gate
// (through its API, utilfeature.DefaultMutableFeatureGate.SetFromMap) and restores the values
// it had before. Gates absent from g have their volperm default (framework.KnownGates).
func withGates(g map[string]bool, fn func() error) error {
	want, err := featureMap(g)
	if err != nil {
		return err
	}
	gateMu.Lock()
	defer gateMu.Unlock()
	saved := map[string]bool{}
	for name := range want {
		saved[name] = utilfeature.DefaultFeatureGate.Enabled(featuregate.Feature(name))
	}
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(want); err != nil {
		return fmt.Errorf("set feature gates %v: %w", want, err)
	}
	defer func() {
		if rerr := utilfeature.DefaultMutableFeatureGate.SetFromMap(saved); rerr != nil {
			// The gate accepted these names a moment ago: failing now is a broken process.
			panic(fmt.Sprintf("volperm upstream: restore feature gates %v: %v", saved, rerr))
		}
	}()
	return fn()
}

// featureMap turns volperm gates into the upstream feature map to set: every upstream gate
// volperm knows, with g's value or volperm's default. A gate volperm knows but upstream lacks
// must be off (that is what upstream does); gateSupport says so before a case runs.
func featureMap(g map[string]bool) (map[string]bool, error) {
	if ok, why := gateSupport(g); !ok {
		return nil, fmt.Errorf("feature gates: %s", why)
	}
	out := map[string]bool{}
	for name, feature := range upstreamGates {
		v, ok := g[name]
		if !ok {
			v = framework.KnownGates[name]
		}
		out[string(feature)] = v
	}
	return out, nil
}

// gateSupport reports whether upstream v1.37 can run with the volperm gates g.
func gateSupport(g map[string]bool) (bool, string) {
	names := make([]string, 0, len(g))
	for n := range g {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		if _, ok := upstreamGates[name]; ok {
			continue
		}
		if _, known := framework.KnownGates[name]; !known {
			return false, fmt.Sprintf("unknown feature gate %q (known: %s)", name, strings.Join(knownGateNames(), ", "))
		}
		if g[name] {
			// Off is what upstream does without the gate; on asks for behaviour it lacks.
			return false, fmt.Sprintf("upstream v1.37 has no feature gate %s (seed 002 is a proposal)", name)
		}
	}
	return true, ""
}

func knownGateNames() []string {
	names := make([]string, 0, len(framework.KnownGates))
	for n := range framework.KnownGates {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
