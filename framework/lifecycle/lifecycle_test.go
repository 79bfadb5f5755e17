package lifecycle_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/lifecycle"
	"github.com/volperm/volperm/framework/probe"
)

// fakePod records what the driver asks of it; its one volume "v" is a directory of this test.
type fakePod struct {
	dir      string
	calls    []string
	failVol  string // SetUp fails this volume
	tearErr  error
	deadCtx  bool // TearDown was given a cancelled context
	onSetUp  func()
	setUpErr error
}

func (f *fakePod) volumes() lifecycle.Volumes {
	out := lifecycle.Volumes{"v": {Path: f.dir}}
	if f.failVol != "" {
		out[f.failVol] = lifecycle.Volume{Err: "no such source"}
	}
	return out
}

func (f *fakePod) SetUp(context.Context) (lifecycle.Volumes, error) {
	f.calls = append(f.calls, "setUp")
	if f.onSetUp != nil {
		f.onSetUp()
	}
	return f.volumes(), f.setUpErr
}

func (f *fakePod) SetGates(_ context.Context, g map[string]bool) error {
	f.calls = append(f.calls, fmt.Sprintf("setGates %v", g))
	return nil
}

func (f *fakePod) Restart(context.Context) (lifecycle.Volumes, error) {
	f.calls = append(f.calls, "restart")
	return f.volumes(), nil
}

func (f *fakePod) TearDown(ctx context.Context) error {
	f.calls = append(f.calls, "tearDown")
	f.deadCtx = ctx.Err() != nil
	return f.tearErr
}

func pod(names ...string) *corev1.Pod {
	p := &corev1.Pod{}
	for _, n := range names {
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: n, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}})
	}
	return p
}

// The spec's order: SetUp, each step in order (chmod on the volume's path with the mode's
// 07777 bits, setGates with every kubelet gate so far, restart), snapshot, teardown last.
func TestOrder(t *testing.T) {
	dir := t.TempDir()
	f := &fakePod{dir: dir}
	c := &framework.Case{
		Gates: framework.Gates{Kubelet: map[string]bool{"A": true}},
		After: []framework.Step{
			{Chmod: &framework.Chmod{Volume: "v", Path: "/", Mode: 02750}},
			{SetGates: &framework.Gates{APIServer: map[string]bool{"A": false}}}, // apiserver only: nothing to do
			{SetGates: &framework.Gates{Kubelet: map[string]bool{"B": true}}},
			{RestartKubelet: true},
		},
	}
	vols, probes, err := observe(context.Background(), c, framework.Admitted{Pod: pod("v")}, f)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"setUp", "setGates map[A:true B:true]", "restart", "tearDown"}
	if !reflect.DeepEqual(f.calls, want) {
		t.Errorf("calls %q; want %q", f.calls, want)
	}
	if len(probes) != 0 || len(vols) != 1 || vols[0].Type != "emptyDir" || vols[0].Medium != "Memory" || vols[0].SetUp != framework.SetUpOK {
		t.Fatalf("observations %+v", vols)
	}
	if vols[0].Paths[0].Mode != "2750" {
		t.Errorf("root mode %s after chmod 02750; want 2750", vols[0].Paths[0].Mode)
	}
	st, _ := os.Stat(dir)
	if st.Mode()&os.ModeSetgid == 0 {
		t.Errorf("chmod did not set setgid: %v", st.Mode())
	}
}

// A failed volume carries its SetUp text and no paths; a chmod of it is an error; teardown runs.
func TestFailedVolume(t *testing.T) {
	f := &fakePod{dir: t.TempDir(), failVol: "w"}
	vols, _, err := observe(context.Background(), &framework.Case{}, framework.Admitted{Pod: pod("v", "w")}, f)
	if err != nil {
		t.Fatal(err)
	}
	if vols[1].SetUp != "no such source" || vols[1].Paths != nil {
		t.Errorf("failed volume observed as %+v", vols[1])
	}
	f = &fakePod{dir: t.TempDir(), failVol: "w"}
	c := &framework.Case{After: []framework.Step{{Chmod: &framework.Chmod{Volume: "w", Mode: 0700}}}}
	if _, _, err := observe(context.Background(), c, framework.Admitted{Pod: pod("v", "w")}, f); err == nil || !strings.Contains(err.Error(), `volume "w" is not set up`) {
		t.Errorf("chmod of a failed volume: %v", err)
	}
	if f.calls[len(f.calls)-1] != "tearDown" {
		t.Errorf("no teardown after an error: %q", f.calls)
	}
	// A probe of it: the verdict carries the node's own text, on one line (issue 51).
	f = &fakePod{dir: t.TempDir(), failVol: "w"}
	c = &framework.Case{Probes: []framework.Probe{{Name: "list", Volume: "w", Path: ".", Op: framework.OpList}}}
	want := `probe "list": volume "w" was not set up: its set-up failed with "no such source"`
	if _, _, err := observe(context.Background(), c, framework.Admitted{Pod: pod("v", "w")}, f); err == nil || err.Error() != want {
		t.Errorf("probe of a failed volume: %v; want %s", err, want)
	}
}

// Cancellation stops between steps; teardown still runs, with a live context; a teardown error
// fails an observation that had not failed already.
func TestCancelAndTearDownError(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	f := &fakePod{dir: t.TempDir(), onSetUp: cancel}
	c := &framework.Case{After: []framework.Step{{RestartKubelet: true}}}
	_, _, err := observe(ctx, c, framework.Admitted{Pod: pod("v")}, f)
	if !errors.Is(err, context.Canceled) || f.deadCtx {
		t.Errorf("cancelled: %v, teardown with a cancelled context %v; want context.Canceled and a teardown with a live one", err, f.deadCtx)
	}
	if want := []string{"setUp", "tearDown"}; !reflect.DeepEqual(f.calls, want) {
		t.Errorf("calls %q; want %q (no restart after cancel, teardown with a live context)", f.calls, want)
	}
	f = &fakePod{dir: t.TempDir(), tearErr: errors.New("left a mount")}
	vols, _, err := observe(context.Background(), &framework.Case{}, framework.Admitted{Pod: pod("v")}, f)
	if err == nil || err.Error() != "left a mount" || vols != nil {
		t.Errorf("teardown error: %v, %v", vols, err)
	}
	// After an earlier failure the first error is the verdict, in one line.
	f = &fakePod{dir: t.TempDir(), tearErr: errors.New("left a mount"), setUpErr: errors.New("setup exited with status 3")}
	if _, _, err = observe(context.Background(), &framework.Case{}, framework.Admitted{Pod: pod("v")}, f); err == nil || err.Error() != "setup exited with status 3" {
		t.Errorf("setup then teardown failing: %v; want the setup's error alone", err)
	}
}

// Probes run on the volumes' paths, as their uids: uid 1000 may not read a 0600 file of root.
func TestProbesSeeThePaths(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("probes run as other uids: needs root")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0600); err != nil {
		t.Fatal(err)
	}
	f := &fakePod{dir: dir}
	c := &framework.Case{Probes: []framework.Probe{{Name: "read", Volume: "v", Path: "f", Op: framework.OpRead, As: framework.User{UID: 1000, GID: 1000}}}}
	_, probes, err := observe(context.Background(), c, framework.Admitted{Pod: pod("v")}, f)
	if err != nil {
		t.Fatal(err)
	}
	if len(probes) != 1 || probes[0].Allowed || probes[0].Errno != "EACCES" {
		t.Errorf("probes %+v", probes)
	}
}

func TestMain(m *testing.M) {
	probe.MaybeRunChild()
	os.Exit(m.Run())
}

// remotePod's volumes are elsewhere (a cluster's node): it applies chmod steps itself.
type remotePod struct {
	fakePod
	chmods []string
}

func (r *remotePod) Chmod(_ context.Context, path string, mode uint32) error {
	r.calls = append(r.calls, "chmod")
	r.chmods = append(r.chmods, fmt.Sprintf("%s %o", path, mode))
	return nil
}

// A Chmoder gets each chmod step, in order, with the volume's path joined to the step's (kept
// inside the volume) and only the mode's 07777 bits; nothing is changed on this machine.
func TestChmoderAppliesChmod(t *testing.T) {
	r := &remotePod{fakePod: fakePod{dir: "/volumes/c0-v0"}}
	c := &framework.Case{After: []framework.Step{
		{Chmod: &framework.Chmod{Volume: "v", Path: "sub/../../x", Mode: 0o100640}},
		{RestartKubelet: true},
		{Chmod: &framework.Chmod{Volume: "v", Path: ".", Mode: 01777}},
	}}
	if _, err := lifecycle.Steps(context.Background(), c, r); err != nil {
		t.Fatal(err)
	}
	if want := []string{"/volumes/c0-v0/x 640", "/volumes/c0-v0 1777"}; !reflect.DeepEqual(r.chmods, want) {
		t.Errorf("chmods %q; want %q", r.chmods, want)
	}
	if want := []string{"setUp", "chmod", "restart", "chmod"}; !reflect.DeepEqual(r.calls, want) {
		t.Errorf("calls %q; want %q", r.calls, want)
	}
}

// observe is lifecycle.Observe's answer as its three parts.
func observe(ctx context.Context, c *framework.Case, a framework.Admitted, p lifecycle.Pod) ([]framework.VolumeObservation, []framework.ProbeResult, error) {
	r := lifecycle.Observe(ctx, c, a, p)
	return r.Volumes, r.Probes, r.Err
}
