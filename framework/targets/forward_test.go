package targets_test

import (
	"reflect"
	"testing"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/cluster"
	"github.com/volperm/volperm/framework/targets/kind"
)

// questions are the optional questions the suites and the reports ask a target of each case,
// besides Supports and Observe (suites/suites.go, framework.NotApplicable, framework.RunAsReleases).
var questions = map[string]reflect.Type{
	"Batcher":          reflect.TypeFor[framework.Batcher](),
	"NodeReporter":     reflect.TypeFor[framework.NodeReporter](),
	"PoolObserver":     reflect.TypeFor[framework.PoolObserver](),
	"ObserveTimer":     reflect.TypeFor[framework.ObserveTimer](),
	"HostNeeds":        reflect.TypeFor[framework.HostNeeds](),
	"KnownDifferences": reflect.TypeFor[framework.KnownDifferences](),
	"NotApplicable":    reflect.TypeFor[interface{ NotApplicable(*framework.Case) string }](),
	"Releases":         reflect.TypeFor[interface{ Releases() framework.Releases }](),
}

// TestWrappersForwardEveryQuestion: a target that hands cases to other targets (a cluster's
// nodes, kind's cluster, a matrix's cells) answers every optional question the targets it wraps
// answer. A question it does not forward is never asked of them, and the verdict changes without
// a word: Spread and Matrix did not forward NotApplicable until 2026-11-27 (issue 35: until a
// target answers each case once, this list is the guard). A wrapper that does not forward a
// question says why here.
func TestWrappersForwardEveryQuestion(t *testing.T) {
	for _, w := range []struct {
		name           string
		wrapper, inner reflect.Type
		not            map[string]string // question -> why the wrapper does not forward it
	}{
		{"cluster.Spread over its nodes' cluster.Target", reflect.TypeFor[*cluster.Spread](), reflect.TypeFor[*cluster.Target](), nil},
		{"kind.Target over its cluster's cluster.Target", reflect.TypeFor[*kind.Target](), reflect.TypeFor[*cluster.Target](), nil},
		// A matrix's cells may be any target: it forwards every question.
		{"framework.Matrix over its cells", reflect.TypeFor[*framework.Matrix](), nil, map[string]string{
			"Releases": "a matrix is every cell's releases: RunAsReleases asks its Cells instead"}},
	} {
		for name, q := range questions {
			if w.inner != nil && !w.inner.Implements(q) {
				continue
			}
			if why, ok := w.not[name]; ok {
				if w.wrapper.Implements(q) {
					t.Errorf("%s answers %s now: drop its reason (%s)", w.name, name, why)
				}
				continue
			}
			if !w.wrapper.Implements(q) {
				t.Errorf("%s does not answer %s, which the targets it wraps answer", w.name, name)
			}
		}
	}
}
