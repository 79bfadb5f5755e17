package framework

import (
	"context"
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
	out := RunAsReleases(p, []*Case{plain, gated, named})
	if len(out) != 3 {
		t.Fatalf("RunAsReleases made %d cases of 3", len(out))
	}
	plain, gated, named = out[0], out[1], out[2]
	if plain.Releases != (Releases{APIServer: "v1.36", Kubelet: "v1.34"}) {
		t.Errorf("a case naming no releases runs as %+v, want the halves' v1.36 x v1.34", plain.Releases)
	}
	if strings.Join(plain.Labels, ",") != "release-skew,old-apiserver,old-kubelet" {
		t.Errorf("the cell v1.36 x v1.34 made of a plain case is labelled %v, want its skew labels", plain.Labels)
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
	for c, want := range map[*Case]string{
		gated: "sets feature gate EmptyDirVolumeMode, which kube-apiserver v1.36 lacks (that release refuses the flag); this target's kube-apiserver (fakeapi) is v1.36",
		named: "needs kube-apiserver v1.37; this target's kube-apiserver (fakeapi) is v1.36",
	} {
		if ok, why := p.Supports(c); ok || why != want {
			t.Errorf("Supports(%s) = %v %q, want %q", c.Name, ok, why, want)
		}
	}
	// The gated case is not the pair's failure but not a case of its releases: not run even
	// where every case is required (the suites skip it); the others are cases of the pair.
	if why := NotInReleases(p, gated); !strings.Contains(why, "not a case of kube-apiserver v1.36 x kubelet v1.34") || !strings.Contains(why, "EmptyDirVolumeMode") {
		t.Errorf("NotInReleases(gated) = %q", why)
	}
	for _, c := range []*Case{plain, named} {
		if why := NotInReleases(p, c); why != "" {
			t.Errorf("NotInReleases(%s) = %q, want \"\"", c.Name, why)
		}
	}
	// A pair of the newest release (or of halves that run any) leaves every case as it is.
	newest := NewPair("new", releasedAPI{fakeAPI{allow: true}, NewestRelease}, fakeNode{observed: &n, support: true})
	c := &Case{Name: "plain", Pod: podWithVolumes("v")}
	c = RunAsReleases(newest, []*Case{c})[0]
	if c.Releases != (Releases{}) {
		t.Errorf("the newest release's pair made the case a cell of %+v", c.Releases)
	}
	if why := NotInReleases(newest, &Case{Name: "gated", Pod: podWithVolumes("v"), Gates: Gates{APIServer: map[string]bool{GateEmptyDirVolumeMode: false}}}); why != "" {
		t.Errorf("NotInReleases(the newest release's pair, a gated case) = %q", why)
	}
	if ok, why := newest.Supports(&Case{Name: "old kubelet", Pod: podWithVolumes("v"), Releases: Releases{Kubelet: "v1.36"}}); ok {
		t.Errorf("a kubelet that runs the newest only ran a v1.36 cell (%q)", why)
	}
}

// cellTarget answers for one cell: it records the cases it was asked about.
type cellTarget struct {
	r        Releases
	observed []string
	prepared int
}

func (c *cellTarget) Info() TargetInfo                            { return TargetInfo{Name: "cell"} }
func (c *cellTarget) Supports(*Case) (bool, string)               { return true, "" }
func (c *cellTarget) Close() error                                { return nil }
func (c *cellTarget) Prepare(_ context.Context, cs []*Case) error { c.prepared += len(cs); return nil }
func (c *cellTarget) Observe(_ context.Context, in *Case) (*Observation, error) {
	c.observed = append(c.observed, in.Name)
	return &Observation{Case: in.Name, Source: "cell"}, nil
}

// A matrix makes a case naming no releases one cell per cell its gates can exist in, and hands
// every cell's cases to that cell's target only.
func TestMatrix(t *testing.T) {
	newest := Releases{}
	cells := []Releases{{APIServer: "v1.37", Kubelet: "v1.37"}, {APIServer: "v1.37", Kubelet: "v1.34"}, {APIServer: "v1.36", Kubelet: "v1.36"}}
	by := map[Releases]Target{}
	targets := map[Releases]*cellTarget{}
	for _, r := range cells {
		ct := &cellTarget{r: r}
		by[r], targets[r] = ct, ct
	}
	m := NewMatrix("m", cells, by, nil).WithDetails(map[string]string{"nodesLeftOut": "1 cordoned"})
	if d := m.Info().Details; d["nodesLeftOut"] != "1 cordoned" || d["cells"] != "3" {
		t.Errorf("the matrix's details %v: want its own and its cells'", d)
	}
	plain := &Case{Name: "plain", Pod: podWithVolumes("v")}
	apiGate := &Case{Name: "apigate", Pod: podWithVolumes("v"), Gates: Gates{APIServer: map[string]bool{GateEmptyDirVolumeMode: true}}}
	bothGates := &Case{Name: "bothgates", Pod: podWithVolumes("v"), Gates: Gates{APIServer: map[string]bool{GateEmptyDirVolumeMode: true}, Kubelet: map[string]bool{GateEmptyDirVolumeMode: true}}}
	out := RunAsReleases(m, []*Case{plain, apiGate, bothGates})
	count := map[string][]Releases{}
	for _, c := range out {
		count[c.Name] = append(count[c.Name], c.Releases)
	}
	if len(count["plain"]) != 3 || count["plain"][0] != newest {
		t.Errorf("plain runs in %v, want every cell, the newest unnamed", count["plain"])
	}
	if len(count["apigate"]) != 2 {
		t.Errorf("a case with an apiserver gate of v1.37 runs in %v, want the two cells of a v1.37 apiserver", count["apigate"])
	}
	if len(count["bothgates"]) != 1 || count["bothgates"][0] != newest {
		t.Errorf("a case with both v1.37 gates runs in %v, want v1.37 x v1.37 only", count["bothgates"])
	}
	if err := m.Prepare(context.Background(), out); err != nil {
		t.Fatal(err)
	}
	for _, c := range out {
		if _, err := m.Observe(context.Background(), c); err != nil {
			t.Fatal(err)
		}
	}
	want := map[Releases]int{cells[0]: 3, cells[1]: 2, cells[2]: 1}
	for r, n := range want {
		if got := len(targets[r].observed); got != n || targets[r].prepared != n {
			t.Errorf("cell %v observed %d, prepared %d cases, want %d", r, got, targets[r].prepared, n)
		}
	}
	if ok, why := m.Supports(&Case{Name: "x", Releases: Releases{APIServer: "v1.35", Kubelet: "v1.35"}}); ok || !strings.Contains(why, "no cell kube-apiserver v1.35 x kubelet v1.35") {
		t.Errorf("Supports(a cell the matrix lacks) = %v %q", ok, why)
	}
}

// naCell is a cell that is not the implementation of cases named "restart" (a cluster's pools
// without node control).
type naCell struct{ cellTarget }

func (c *naCell) NotApplicable(in *Case) string {
	if in.Name == "restart" {
		return "node-control: no control of the node"
	}
	return ""
}

// A matrix (a cluster's pools of two kubelet releases) says what its cells say is not
// applicable: the cell a case is observed in answers.
func TestMatrixNotApplicable(t *testing.T) {
	v37, v36 := Releases{APIServer: "v1.37", Kubelet: "v1.37"}, Releases{APIServer: "v1.37", Kubelet: "v1.36"}
	m := NewMatrix("m", []Releases{v37, v36}, map[Releases]Target{v37: &naCell{}, v36: &cellTarget{}}, nil)
	restart := &Case{Name: "restart", Pod: podWithVolumes("v")}
	if why := Reasons(m, restart).NotApplicable; why != "node-control: no control of the node" {
		t.Errorf("a case of the v1.37 cell its target is not: %q", why)
	}
	old := &Case{Name: "restart", Pod: podWithVolumes("v"), Releases: v36}
	if why := Reasons(m, old).NotApplicable; why != "" {
		t.Errorf("the same case in the v1.36 cell, whose target runs it: %q", why)
	}
}

func TestGatesMismatch(t *testing.T) {
	on := map[string]bool{"EmptyDirVolumeMode": true}
	cluster := Gates{APIServer: on, Kubelet: map[string]bool{"EmptyDirVolumeMode": false}}
	for _, tc := range []struct {
		name string
		want Gates
		diff string
	}{
		{"same", Gates{APIServer: on}, ""},
		{"kubelet differs", Gates{APIServer: on, Kubelet: on}, "needs kubelet gate EmptyDirVolumeMode=true, the cluster runs off"},
		{"default differs", Gates{}, "needs apiserver gate EmptyDirVolumeMode=false, the cluster runs on"},
		{"gate the cluster lacks", Gates{APIServer: map[string]bool{"EmptyDirVolumeMode": true, "PreservePermissions": true}},
			"needs apiserver gate PreservePermissions=true, the cluster runs absent"},
	} {
		if got := GatesMismatch(tc.want, cluster); got != tc.diff {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.diff)
		}
	}
}
