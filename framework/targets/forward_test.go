package targets_test

import (
	"reflect"
	"testing"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/cluster"
	"github.com/volperm/volperm/framework/targets/kind"
)

// questions are the questions framework.Ask puts to a target of each case, besides Supports
// and Observe (framework/answer.go), and the releases RunAsReleases asks.
var questions = map[string]reflect.Type{
	"ObserveTimer":     reflect.TypeFor[framework.ObserveTimer](),
	"HostNeeds":        reflect.TypeFor[framework.HostNeeds](),
	"KnownDifferences": reflect.TypeFor[framework.KnownDifferences](),
	"NotApplicable":    reflect.TypeFor[interface{ NotApplicable(*framework.Case) string }](),
	"Releases":         reflect.TypeFor[interface{ Releases() framework.Releases }](),
}

// TestRoutersAnswerNoQuestion: a target that hands cases to other targets (a matrix's cells, a
// cluster's pools) routes them (framework.Router, framework.PoolRouter) and answers none of the
// questions of a case itself, so framework.Ask asks the target that runs the case and no
// forwarder can forget a question: Spread and Matrix did not forward NotApplicable until
// 2026-11-27, and a case not applicable on a one-node cluster was "not run" on two (issue 35).
// The kind target and kind@matrix's cells route each case to the target of the case on kind's
// cluster (kind's checks, then the cluster target's), which answers every question the cluster
// target answers.
func TestRoutersAnswerNoQuestion(t *testing.T) {
	kt, err := kind.New(kind.Options{NodeImage: "node", ProbeImage: "probe", KubeletReleases: []string{"v1.37.1", "v1.36.3"}})
	if err != nil {
		t.Fatal(err)
	}
	perCell, err := kind.New(kind.Options{NodeImage: "node", ProbeImage: "probe", PerCell: true})
	if err != nil {
		t.Fatal(err)
	}
	matrix := kt.Matrix()
	cell, why := matrix.Route(&framework.Case{Releases: framework.Releases{APIServer: "v1.37", Kubelet: "v1.36"}})
	if cell == nil {
		t.Fatalf("kind@matrix has no cell v1.37 x v1.36: %s", why)
	}
	routed := func(r framework.Target) reflect.Type {
		to, why := r.(framework.Router).Route(&framework.Case{})
		if to == nil {
			t.Fatalf("%T routes nowhere: %s", r, why)
		}
		return reflect.TypeOf(to)
	}
	for _, r := range []struct {
		name   string
		router reflect.Type
		routes reflect.Type
		// allowed: the questions the router answers itself, and why.
		allowed map[string]string
	}{
		{"framework.Matrix", reflect.TypeFor[*framework.Matrix](), reflect.TypeFor[framework.Router](), nil},
		{"cluster.Spread", reflect.TypeFor[*cluster.Spread](), reflect.TypeFor[framework.PoolRouter](), map[string]string{
			"Releases": "the releases its cases are cells of (RunAsReleases), before any case is routed"}},
		{"kind.Target", reflect.TypeFor[*kind.Target](), reflect.TypeFor[framework.Router](), map[string]string{
			"Releases": "the releases its cases are cells of (RunAsReleases), before any case is routed"}},
		{"kind@matrix's cell", reflect.TypeOf(cell), reflect.TypeFor[framework.Router](), nil},
	} {
		if !r.router.Implements(r.routes) {
			t.Errorf("%s does not route its cases (%s)", r.name, r.routes)
		}
		for name, q := range questions {
			if _, ok := r.allowed[name]; ok {
				continue
			}
			if r.router.Implements(q) {
				t.Errorf("%s answers %s itself: framework.Ask asks the target it routes to; drop the method", r.name, name)
			}
		}
	}
	clusterT := reflect.TypeFor[*cluster.Target]()
	for _, answerer := range []reflect.Type{routed(kt), routed(perCell), routed(cell)} {
		for name, q := range questions {
			if name != "Releases" && clusterT.Implements(q) && !answerer.Implements(q) {
				t.Errorf("%s, where kind routes a case, does not answer %s, which its cluster's target answers", answerer, name)
			}
		}
	}
}
