package framework

import (
	"strings"
	"testing"
)

// A half of one release (OfRelease, the upstream agent built for v1.36).
type releasedAPI struct {
	fakeAPI
	release string
}

func (r releasedAPI) Release() string { return r.release }

type releasedNode struct {
	fakeNode
	release string
}

func (r releasedNode) Release() string { return r.release }

// A target whose halves are of one older release runs the cases that name no releases as cells
// of those releases; a case whose gates that release lacks stays as it was, and the pair does
// not run it, naming the release it needs; a case that names its releases keeps them.
func TestRunAsReleases(t *testing.T) {
	n := 0
	p := NewPair("old", releasedAPI{fakeAPI{allow: true}, "v1.36"}, releasedNode{fakeNode{observed: &n, support: true}, "v1.34"})
	if got := p.Releases(); got != (Releases{APIServer: "v1.36", Kubelet: "v1.34"}) {
		t.Fatalf("Releases() = %+v", got)
	}
	plain := &Case{Name: "plain", Pod: podWithVolumes("v")}
	gated := &Case{Name: "gated", Pod: podWithVolumes("v"), Gates: Gates{APIServer: map[string]bool{GateEmptyDirVolumeMode: false}}}
	named := &Case{Name: "named", Pod: podWithVolumes("v"), Releases: Releases{APIServer: "v1.37", Kubelet: "v1.34"}}
	RunAsReleases(p, []*Case{plain, gated, named})
	if plain.Releases != (Releases{APIServer: "v1.36", Kubelet: "v1.34"}) {
		t.Errorf("a case naming no releases runs as %+v, want the halves' v1.36 x v1.34", plain.Releases)
	}
	if gated.Releases != (Releases{}) {
		t.Errorf("a case setting a gate v1.36 lacks was made a cell of %+v", gated.Releases)
	}
	if named.Releases != (Releases{APIServer: "v1.37", Kubelet: "v1.34"}) {
		t.Errorf("a case naming its releases now runs as %+v", named.Releases)
	}
	if ok, why := p.Supports(plain); !ok {
		t.Errorf("Supports(the cell v1.36 x v1.34) = %q", why)
	}
	for _, c := range []*Case{gated, named} {
		if ok, why := p.Supports(c); ok || !strings.Contains(why, "needs kube-apiserver v1.37; this target's kube-apiserver (fakeapi) is v1.36") {
			t.Errorf("Supports(%s) = %v %q, want the release it needs named", c.Name, ok, why)
		}
	}
	// A pair of the newest release (or of halves that run any) leaves every case as it is.
	newest := NewPair("new", releasedAPI{fakeAPI{allow: true}, NewestRelease}, fakeNode{observed: &n, support: true})
	c := &Case{Name: "plain", Pod: podWithVolumes("v")}
	RunAsReleases(newest, []*Case{c})
	if c.Releases != (Releases{}) {
		t.Errorf("the newest release's pair made the case a cell of %+v", c.Releases)
	}
	if ok, why := newest.Supports(&Case{Name: "old kubelet", Pod: podWithVolumes("v"), Releases: Releases{Kubelet: "v1.36"}}); ok {
		t.Errorf("a kubelet that runs the newest only ran a v1.36 cell (%q)", why)
	}
}
