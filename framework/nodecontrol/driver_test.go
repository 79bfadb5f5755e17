package nodecontrol

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/volperm/volperm/framework"
)

func TestMissing(t *testing.T) {
	before := &KubeletState{
		Pods:    map[string]bool{"a": true, "b": true},
		Mounted: map[string]int{"kubernetes.io/empty-dir": 12, "kubernetes.io/configmap": 3},
	}
	for _, tc := range []struct {
		now  KubeletState
		want string
	}{
		{KubeletState{}, "2 of 2 pods not known yet, kubernetes.io/configmap 0 of 3 mounted, kubernetes.io/empty-dir 0 of 12 mounted"},
		{KubeletState{Pods: map[string]bool{"a": true, "b": true}, Mounted: map[string]int{"kubernetes.io/empty-dir": 11, "kubernetes.io/configmap": 3}}, "kubernetes.io/empty-dir 11 of 12 mounted"},
		// Seen on kind: the volumes back, a pod not known yet (an exec into it is refused).
		{KubeletState{Pods: map[string]bool{"a": true}, Mounted: map[string]int{"kubernetes.io/empty-dir": 12, "kubernetes.io/configmap": 3}}, "1 of 2 pods not known yet"},
		{KubeletState{Pods: map[string]bool{"a": true, "b": true}, Mounted: map[string]int{"kubernetes.io/empty-dir": 12, "kubernetes.io/configmap": 3}}, ""},
		{KubeletState{Pods: map[string]bool{"a": true, "b": true, "c": true}, Mounted: map[string]int{"kubernetes.io/empty-dir": 13, "kubernetes.io/configmap": 4, "kubernetes.io/secret": 1}}, ""},
	} {
		if got := Missing(before, &tc.now); got != tc.want {
			t.Errorf("Missing(%v) = %q, want %q", tc.now, got, tc.want)
		}
	}
}

func TestUnsettable(t *testing.T) {
	have := framework.Gates{
		APIServer: map[string]bool{framework.GateEmptyDirVolumeMode: false},
		Kubelet:   map[string]bool{framework.GateEmptyDirVolumeMode: true},
	}
	if r := Unsettable(have, framework.Gates{APIServer: map[string]bool{framework.GateEmptyDirVolumeMode: true}}); r != "" {
		t.Errorf("a gate the cluster has: %q", r)
	}
	if r := Unsettable(have, framework.Gates{Kubelet: map[string]bool{framework.GatePreservePermissions: false}}); r != "" {
		t.Errorf("a gate the cluster lacks, off: %q", r)
	}
	want := "needs kubelet gate PreservePermissions=true, a gate this cluster's kubelet does not have"
	if r := Unsettable(have, framework.Gates{Kubelet: map[string]bool{framework.GatePreservePermissions: true}}); r != want {
		t.Errorf("a gate the cluster lacks, on: %q, want %q", r, want)
	}
}

// fakeNode is a node and its cluster as a Driver sees them: a kubelet whose configuration takes
// effect at a restart (and which does not answer for the first reads after one), apiservers
// per gate setting, and the kubelet's pods and mounted volumes, which come back a few reads
// after a restart.
type fakeNode struct {
	calls      []string
	configured map[string]bool
	running    map[string]bool
	release    string
	down       int // reads the kubelet does not answer
	endpoints  map[string]map[string]bool
	used       string
	mounted    int // reads before the volumes are mounted again
	stateReads int
	noGates    bool // the kubelet never reports what it is given
	unknown    int  // reads after a restart before the kubelet knows its pods again
	forget     int  // what unknown is set to at a restart
	logged     []string
}

func (f *fakeNode) SetKubeletGates(_ context.Context, g map[string]bool) error {
	f.calls = append(f.calls, "write "+CellKey(framework.Gates{Kubelet: g}))
	f.configured = maps.Clone(g)
	return nil
}

func (f *fakeNode) RestartKubelet(context.Context) error {
	f.calls = append(f.calls, "restart")
	f.running, f.down, f.mounted, f.unknown = maps.Clone(f.configured), 2, 3, f.forget
	return nil
}

func (f *fakeNode) SetAPIServerGates(_ context.Context, g map[string]bool) (string, error) {
	ep := fmt.Sprintf("10.0.0.%d:6443", len(f.endpoints)+2)
	f.calls = append(f.calls, "apiserver "+ep)
	f.endpoints[ep] = maps.Clone(g)
	return ep, nil
}

func (f *fakeNode) KubeletReleases() []string { return []string{"v1.36"} }

func (f *fakeNode) SetKubeletRelease(_ context.Context, release string, g map[string]bool) error {
	f.calls = append(f.calls, "swap "+release+" "+CellKey(framework.Gates{Kubelet: g}))
	f.release, f.configured = release, maps.Clone(g)
	return f.RestartKubelet(context.Background())
}

func (f *fakeNode) KubeletGates(context.Context) (map[string]bool, error) {
	if f.down > 0 {
		f.down--
		return nil, errors.New("connection refused")
	}
	if f.noGates {
		return map[string]bool{}, nil
	}
	return maps.Clone(f.running), nil
}

func (f *fakeNode) APIServerGates(_ context.Context, ep string) (map[string]bool, error) {
	g, ok := f.endpoints[ep]
	if !ok {
		return nil, errors.New("no such apiserver")
	}
	return g, nil
}

func (f *fakeNode) APIServerReady(context.Context, string) bool { return true }

func (f *fakeNode) KubeletState(context.Context) *KubeletState {
	f.stateReads++
	n := 4
	if f.mounted > 0 {
		f.mounted--
		n = 1
	}
	pods := map[string]bool{"a": true}
	if f.unknown > 0 {
		f.unknown--
		pods, n = map[string]bool{}, 0
	}
	return &KubeletState{Pods: pods, Mounted: map[string]int{"kubernetes.io/empty-dir": n}}
}

func (f *fakeNode) UseEndpoint(ep string) {
	f.calls = append(f.calls, "use "+ep)
	f.used = ep
}

var (
	off = map[string]bool{framework.GateEmptyDirVolumeMode: false}
	on  = map[string]bool{framework.GateEmptyDirVolumeMode: true}
)

func newFake() (*fakeNode, *State, *Driver) {
	f := &fakeNode{configured: off, running: off, release: "v1.37", endpoints: map[string]map[string]bool{}}
	now := &State{Gates: framework.Gates{APIServer: off, Kubelet: off}, Release: "v1.37"}
	d := NewDriver(f, f, "node", now, Waits{Kubelet: time.Second, APIServer: time.Second, Settle: 2 * time.Second, Poll: time.Millisecond}, nil)
	return f, now, d
}

// A move to another cell is the apiserver of its gates first, then the kubelet's configuration
// and a restart; each component only when it changes; the restart settles only with pods.
func TestMove(t *testing.T) {
	now := State{Gates: framework.Gates{APIServer: off, Kubelet: off}}
	for _, tc := range []struct {
		name string
		want framework.Gates
		pods bool
		acts []string
	}{
		{"same cell", framework.Gates{APIServer: off, Kubelet: off}, false, nil},
		{"both", framework.Gates{APIServer: on, Kubelet: on}, false, []string{
			"use the apiserver of apiserver[EmptyDirVolumeMode=true] kubelet[]",
			"write apiserver[] kubelet[EmptyDirVolumeMode=true]",
			"restart the kubelet with apiserver[] kubelet[EmptyDirVolumeMode=true]"}},
		{"kubelet, pods on the node", framework.Gates{APIServer: off, Kubelet: on}, true, []string{
			"write apiserver[] kubelet[EmptyDirVolumeMode=true]",
			"restart the kubelet with apiserver[] kubelet[EmptyDirVolumeMode=true], settled"}},
		{"apiserver", framework.Gates{APIServer: on, Kubelet: off}, true, []string{
			"use the apiserver of apiserver[EmptyDirVolumeMode=true] kubelet[]"}},
	} {
		var got []string
		for _, a := range Move(now, tc.want, tc.pods) {
			got = append(got, a.String())
		}
		if !slices.Equal(got, tc.acts) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.acts)
		}
	}
}

// A history created under an older kubelet starts with that kubelet (the gates of the start it
// has), and the node gets its own back at the end; the release step of a timeline drops the
// gates the release lacks from the configuration.
func TestTimelineActions(t *testing.T) {
	tl := &Timeline[int]{Start: framework.Gates{APIServer: on, Kubelet: on}, Release: "v1.36"}
	now := State{Gates: framework.Gates{APIServer: off, Kubelet: off}, Release: "v1.37"}
	var got []string
	for _, a := range Start(tl, now, "v1.37") {
		got = append(got, a.String())
	}
	want := []string{"use the apiserver of apiserver[EmptyDirVolumeMode=true] kubelet[]", "swap in the kubelet of v1.36 with apiserver[] kubelet[]"}
	if !slices.Equal(got, want) {
		t.Errorf("start under v1.36: %q, want %q", got, want)
	}
	if a := Home(State{Release: "v1.37"}, "v1.37"); a != nil {
		t.Errorf("home on the node's own kubelet: %v", a)
	}
	if a := Home(State{Release: "v1.36", Gates: framework.Gates{Kubelet: map[string]bool{}}}, "v1.37"); len(a) != 1 || a[0].Kind != SwapKubelet || a[0].Release != "v1.37" {
		t.Errorf("home from v1.36: %v", a)
	}
	acts, next, err := KubeletStep(framework.Step{KubeletRelease: "v1.36"}, on)
	if err != nil || len(acts) != 1 || acts[0].Kind != SwapKubelet || !acts[0].Settle || len(next) != 0 || len(on) != 1 {
		t.Errorf("kubeletRelease v1.36 from %v: %v, configured %v, %v", on, acts, next, err)
	}
	acts, next, err = KubeletStep(framework.Step{SetGates: &framework.Gates{Kubelet: on}}, off)
	if err != nil || len(acts) != 1 || acts[0].Kind != WriteKubeletGates || !maps.Equal(next, on) || !maps.Equal(off, map[string]bool{framework.GateEmptyDirVolumeMode: false}) {
		t.Errorf("setGates: %v, configured %v, %v", acts, next, err)
	}
	if _, _, err := KubeletStep(framework.Step{Chmod: &framework.Chmod{}}, off); err == nil {
		t.Error("a chmod step is not a kubelet step")
	}
}

// The Driver executes a move in order, waits for each component to report its gates (the
// kubelet does not answer for a while after its restart), sends the cluster's requests to the
// new apiserver, and keeps the node's state; with pods, a restart waits until the kubelet's
// volumes are mounted again.
func TestDriverDoes(t *testing.T) {
	f, now, d := newFake()
	if err := d.Do(context.Background(), Move(*now, framework.Gates{APIServer: on, Kubelet: on}, true)...); err != nil {
		t.Fatal(err)
	}
	want := []string{"apiserver 10.0.0.2:6443", "use 10.0.0.2:6443", "write apiserver[] kubelet[EmptyDirVolumeMode=true]", "restart"}
	if !slices.Equal(f.calls, want) {
		t.Errorf("calls %q, want %q", f.calls, want)
	}
	if !maps.Equal(now.Gates.APIServer, on) || !maps.Equal(now.Gates.Kubelet, on) || f.used != "10.0.0.2:6443" {
		t.Errorf("state %v, requests to %q", now.Gates, f.used)
	}
	if f.mounted != 0 {
		t.Errorf("the restart returned with the volumes not mounted again (%d reads to go)", f.mounted)
	}
	// Swapping the kubelet: the state says the release and the gates it reports.
	f.calls = nil
	if err := d.Do(context.Background(), Action{Kind: SwapKubelet, Release: "v1.36", Gates: map[string]bool{}}); err != nil {
		t.Fatal(err)
	}
	if now.Release != "v1.36" || len(now.Gates.Kubelet) != 0 || f.stateReads != 5 {
		t.Errorf("after the swap: %+v, %d state reads (none without pods)", now, f.stateReads)
	}
}

// A restarted kubelet that knows its pods again only after longer than Waits.Settle (seen in
// CI: an exec into a pod it does not know is refused) is waited for, up to Waits.Kubelet, and
// its volumes Waits.Settle after; one that never knows them is given up on after Waits.Kubelet,
// and that is logged.
func TestSettleWaitsForThePods(t *testing.T) {
	for _, tc := range []struct {
		forget int
		logged bool
	}{{forget: 4}, {forget: 1000, logged: true}} {
		f := &fakeNode{configured: on, running: off, release: "v1.37", endpoints: map[string]map[string]bool{}, forget: tc.forget}
		now := &State{Gates: framework.Gates{APIServer: off, Kubelet: off}, Release: "v1.37"}
		d := NewDriver(f, f, "node", now, Waits{Kubelet: 2 * time.Second, APIServer: time.Second, Settle: 10 * time.Millisecond, Poll: time.Millisecond},
			func(format string, a ...any) { f.logged = append(f.logged, fmt.Sprintf(format, a...)) })
		if err := d.Do(context.Background(), Action{Kind: RestartKubelet, Gates: on, Settle: true}); err != nil {
			t.Fatal(err)
		}
		var gaveUp []string
		for _, l := range f.logged {
			if strings.Contains(l, "not all back") {
				gaveUp = append(gaveUp, l)
			}
		}
		switch {
		case tc.logged && (len(gaveUp) != 1 || !strings.Contains(gaveUp[0], "1 of 1 pods not known yet")):
			t.Errorf("pods never known: logged %q, want one line that says so", f.logged)
		case !tc.logged && len(gaveUp) > 0:
			t.Errorf("pods known after %d reads: gave up: %q", tc.forget, gaveUp)
		case !tc.logged && (f.unknown > 0 || f.mounted > 0):
			t.Errorf("returned with %d reads to go before the pods are known, %d before the volumes are mounted", f.unknown, f.mounted)
		}
	}
}

// The live pods declare fewer emptyDirs than were mounted before the restart (a pod being
// deleted had the rest): only theirs are awaited; a plugin the reader could not name (not in
// Declared) is awaited as mounted before.
func TestMissingDeclared(t *testing.T) {
	pods := map[string]bool{"a": true}
	before := &KubeletState{Pods: pods, Mounted: map[string]int{"kubernetes.io/empty-dir": 258, "volperm/fixture": 2},
		Declared: map[string]int{"kubernetes.io/empty-dir": 2, "kubernetes.io/configmap": 0}}
	for _, tc := range []struct {
		mounted map[string]int
		want    string
	}{
		{map[string]int{"kubernetes.io/empty-dir": 2, "volperm/fixture": 2}, ""},
		{map[string]int{"kubernetes.io/empty-dir": 1, "volperm/fixture": 2}, "kubernetes.io/empty-dir 1 of 2 mounted"},
		{map[string]int{"kubernetes.io/empty-dir": 2, "volperm/fixture": 1}, "volperm/fixture 1 of 2 mounted"},
	} {
		if got := Missing(before, &KubeletState{Pods: pods, Mounted: tc.mounted}); got != tc.want {
			t.Errorf("Missing(%v) = %q, want %q", tc.mounted, got, tc.want)
		}
	}
}

// The state the Driver keeps is its own: changing an executed action's maps afterwards changes
// nothing of it.
func TestDriverKeepsItsState(t *testing.T) {
	f, now, d := newFake()
	f.configured = maps.Clone(on)
	acts := []Action{{Kind: UseAPIServer, Gates: maps.Clone(on)}, {Kind: RestartKubelet, Gates: maps.Clone(on)}}
	if err := d.Do(context.Background(), acts...); err != nil {
		t.Fatal(err)
	}
	for _, a := range acts {
		a.Gates[framework.GateEmptyDirVolumeMode] = false
	}
	if !maps.Equal(now.Gates.APIServer, on) || !maps.Equal(now.Gates.Kubelet, on) {
		t.Errorf("the state follows the actions' maps: %v", now.Gates)
	}
}

// A HistoryPod goes only through the kubelet step its case names next: another step kind or
// another release is refused before its round runs; the right one runs the round once.
func TestHistoryPodArrives(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		step framework.Step
		do   func(h *HistoryPod) error
	}{
		{"another release", framework.Step{KubeletRelease: "v1.36"}, func(h *HistoryPod) error {
			_, err := h.SetKubeletRelease(ctx, "v1.35", nil)
			return err
		}},
		{"a restart for a gate write", framework.Step{SetGates: &framework.Gates{Kubelet: on}}, func(h *HistoryPod) error {
			_, err := h.Restart(ctx)
			return err
		}},
		{"a gate write for a restart", framework.Step{RestartKubelet: true}, func(h *HistoryPod) error {
			return h.SetGates(ctx, on)
		}},
	} {
		ran := 0
		h := &HistoryPod{Steps: []framework.Step{tc.step}, Rounds: NewRounds(1, func(context.Context, int) error { ran++; return nil })}
		if err := tc.do(h); err == nil || !strings.Contains(err.Error(), "not the pod's next kubelet step") || ran != 0 || h.Next != 0 {
			t.Errorf("%s: %v, %d rounds run, next %d", tc.name, err, ran, h.Next)
		}
	}
	ran := 0
	h := &HistoryPod{Steps: []framework.Step{{Chmod: &framework.Chmod{}}, {KubeletRelease: "v1.36"}}, Rounds: NewRounds(1, func(context.Context, int) error { ran++; return nil })}
	if _, err := h.SetKubeletRelease(ctx, "v1.36", nil); err != nil || ran != 1 || h.Next != 2 {
		t.Errorf("its own release: %v, %d rounds run, next %d", err, ran, h.Next)
	}
}

// A kubelet that never reports the gates it was given fails the action, which names it, and
// leaves the state as it was; so does a node control that cannot swap kubelets.
func TestDriverFails(t *testing.T) {
	f, now, d := newFake()
	f.noGates = true
	err := d.Do(context.Background(), Move(*now, framework.Gates{APIServer: off, Kubelet: on}, false)...)
	if !errors.Is(err, ErrNotWithin) || !strings.Contains(err.Error(), "kubelet of node back") {
		t.Errorf("a kubelet without its gates: %v", err)
	}
	if !maps.Equal(now.Gates.Kubelet, off) {
		t.Errorf("state after a failed restart: %v", now.Gates.Kubelet)
	}
	d = NewDriver(struct{ Control }{f}, f, "node", now, Waits{}, nil)
	if err := d.Do(context.Background(), Action{Kind: SwapKubelet, Release: "v1.36"}); err == nil || !strings.Contains(err.Error(), "cannot replace the kubelet") {
		t.Errorf("a swap without a KubeletReleaser: %v", err)
	}
	if _, ok := d.Releases(); ok {
		t.Error("a Control without kubelets of other releases says it has some")
	}
}
