package container

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/caseroot/caseroottest"
	"github.com/volperm/volperm/framework/e2etest"
	"github.com/volperm/volperm/framework/oracle"
	"github.com/volperm/volperm/framework/owner"
	"github.com/volperm/volperm/framework/probe"
	"github.com/volperm/volperm/framework/refnode"
	"github.com/volperm/volperm/framework/targets/reference"
	"github.com/volperm/volperm/hostfeature"
	"github.com/volperm/volperm/nodeimpl/mountinfo"
)

func TestMain(m *testing.M) {
	probe.MaybeRunChild() // the reference target's probes re-execute this binary
	os.Exit(m.Run())
}

var (
	alpha    = framework.Gates{APIServer: map[string]bool{framework.GateEmptyDirVolumeMode: true}, Kubelet: map[string]bool{framework.GateEmptyDirVolumeMode: true}}
	user1001 = framework.User{UID: 1001, GID: 1001}
	user1002 = framework.User{UID: 1002, GID: 1002}
	stranger = framework.User{UID: 1003, GID: 1003}
)

func emptyDirPod(mode *int32, fsGroup *int64) *corev1.Pod {
	p := &corev1.Pod{}
	p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Mode: mode}}}}
	if fsGroup != nil {
		p.Spec.SecurityContext = &corev1.PodSecurityContext{FSGroup: fsGroup}
	}
	return p
}

func medium(p *corev1.Pod, m corev1.StorageMedium) *corev1.Pod {
	p.Spec.Volumes[0].EmptyDir.Medium = m
	return p
}

func hostPathPod(path string, typ corev1.HostPathType) *corev1.Pod {
	p := &corev1.Pod{}
	p.Spec.Volumes = []corev1.Volume{{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: path, Type: &typ}}}}
	return p
}

// pr is a probe of the volume "data".
func pr(name string, as framework.User, op framework.ProbeOp, path, to string) framework.Probe {
	return framework.Probe{Name: name, Volume: "data", As: as, Op: op, Path: path, To: to}
}

// storyCases are the KEP-5502 stories, fsGroup and hostPath types: the container target must
// observe exactly what the reference target observes on the host.
func storyCases() []*framework.Case {
	return []*framework.Case{
		{
			Name: "emptydir 01777: only the owner deletes or renames", Area: framework.AreaEmptyDir, Profile: framework.ProfileAlpha,
			Gates: alpha, Pod: emptyDirPod(ptr.To[int32](01777), nil),
			Probes: []framework.Probe{
				pr("1001 creates", user1001, framework.OpCreate, "a", ""),
				pr("1002 cannot delete", user1002, framework.OpDelete, "a", ""),
				pr("1002 cannot rename", user1002, framework.OpRename, "a", "b"),
				pr("1002 creates its own", user1002, framework.OpCreate, "c", ""),
				pr("1001 renames", user1001, framework.OpRename, "a", "b"),
				pr("1001 deletes", user1001, framework.OpDelete, "b", ""),
			},
		},
		{
			Name: "emptydir 0750: an unrelated uid cannot list or create", Area: framework.AreaEmptyDir, Profile: framework.ProfileAlpha,
			Gates: alpha, Pod: emptyDirPod(ptr.To[int32](0750), nil),
			Probes: []framework.Probe{
				pr("root creates", framework.User{}, framework.OpCreate, "f", ""),
				pr("stranger cannot list", stranger, framework.OpList, ".", ""),
				pr("stranger cannot create", stranger, framework.OpCreate, "g", ""),
			},
		},
		{
			Name: "fsGroup 2000 on emptyDir 0770: a group member writes, a stranger cannot", Area: framework.AreaFSGroup, Profile: framework.ProfileAlpha,
			Gates: alpha, Pod: emptyDirPod(ptr.To[int32](0770), ptr.To[int64](2000)),
			Probes: []framework.Probe{
				pr("member creates", framework.User{UID: 1001, GID: 1001, Groups: []int64{2000}}, framework.OpCreate, "m", ""),
				pr("member makes a dir", framework.User{UID: 1001, GID: 1001, Groups: []int64{2000}}, framework.OpMkdir, "d", ""),
				pr("stranger cannot create", stranger, framework.OpCreate, "s", ""),
			},
		},
		{
			Name: "emptyDir Memory 0750 with fsGroup: the tmpfs as the node mounted it", Area: framework.AreaEmptyDir, Profile: framework.ProfileAlpha,
			Gates: alpha, Pod: medium(emptyDirPod(ptr.To[int32](0750), ptr.To[int64](2000)), corev1.StorageMediumMemory),
			Probes: []framework.Probe{
				pr("member creates", framework.User{UID: 1001, GID: 1001, Groups: []int64{2000}}, framework.OpCreate, "m", ""),
				pr("stranger cannot list", stranger, framework.OpList, ".", ""),
			},
		},
		{
			Name: "emptyDir HugePages 0770: the hugetlbfs as the node mounted it", Area: framework.AreaEmptyDir, Profile: framework.ProfileAlpha,
			Gates: alpha, Pod: medium(emptyDirPod(ptr.To[int32](0770), nil), corev1.StorageMediumHugePages),
		},
		{
			Name: "secret with fsGroup: the projected tree, read-only", Area: framework.AreaAtomicWriter, Profile: framework.ProfileConformance,
			Pod: func() *corev1.Pod {
				p := &corev1.Pod{}
				p.Spec.SecurityContext = &corev1.PodSecurityContext{FSGroup: ptr.To[int64](3000)}
				p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds", DefaultMode: ptr.To[int32](0440)}}}}
				return p
			}(),
			Sources: map[string]map[string]string{"secret/creds": {"user": "u", "pass": "p"}},
			Probes: []framework.Probe{
				pr("member reads", framework.User{UID: 1001, GID: 1001, Groups: []int64{3000}}, framework.OpRead, "pass", ""),
				pr("stranger cannot read", stranger, framework.OpRead, "pass", ""),
			},
		},
		{
			Name: "hostPath Directory: root writes through the mount", Area: framework.AreaHostPath, Profile: framework.ProfileConformance,
			Pod:  hostPathPod("/srv/data", corev1.HostPathDirectory),
			Host: []framework.HostObject{{Path: "/srv/data", Kind: framework.KindDirectory, Mode: 0700}},
			Probes: []framework.Probe{
				{Name: "root creates", Volume: "host", As: framework.User{}, Op: framework.OpCreate, Path: "new"},
				{Name: "stranger cannot list", Volume: "host", As: stranger, Op: framework.OpList, Path: "."},
			},
		},
		{
			Name: "hostPath Socket: the workload sees the socket", Area: framework.AreaHostPath, Profile: framework.ProfileConformance,
			Pod:  hostPathPod("/var/run/app.sock", corev1.HostPathSocket),
			Host: []framework.HostObject{{Path: "/var/run/app.sock", Kind: framework.KindSocket}},
		},
		{
			Name: "hostPath DirectoryOrCreate: the workload sees the new directory", Area: framework.AreaHostPath, Profile: framework.ProfileConformance,
			Pod: hostPathPod("/srv/new", corev1.HostPathDirectoryOrCreate),
		},
		{
			Name: "hostPath File behind a symlink: the workload sees the file", Area: framework.AreaHostPath, Profile: framework.ProfileConformance,
			Pod: hostPathPod("/etc/link", corev1.HostPathFile),
			Host: []framework.HostObject{
				{Path: "/etc/app.conf", Kind: framework.KindFile, Mode: 0600},
				{Path: "/etc/link", Kind: framework.KindSymlink, Target: "/etc/app.conf"},
			},
		},
		{
			Name: "hostPath CharDevice of the wrong type fails set-up", Area: framework.AreaHostPath, Profile: framework.ProfileConformance,
			Pod:  hostPathPod("/dev/thing", corev1.HostPathCharDev),
			Host: []framework.HostObject{{Path: "/dev/thing", Kind: framework.KindBlockDev}},
		},
		{
			Name: "emptyDir mode rejected by the apiserver", Area: framework.AreaEmptyDir, Profile: framework.ProfileAlpha,
			Gates: alpha, Pod: emptyDirPod(ptr.To[int32](02000), nil),
		},
	}
}

// needEngine builds a target of mode arg, and its node half, or skips (fails where the target
// is required) when this machine cannot run it.
func needEngine(t *testing.T, arg string) (framework.Target, *node) {
	t.Helper()
	n, err := newNode(framework.TargetOptions{Arg: arg, WorkDir: caseroottest.TempDir(t)})
	if err != nil {
		t.Fatal(err)
	}
	tg := framework.NewTargetPair(Name, refnode.APIServer{}, n)
	t.Cleanup(func() {
		if err := tg.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	if ok, why := tg.Supports(storyCases()[0]); !ok {
		if hostfeature.Required(hostfeature.ContainerEngine) {
			t.Fatalf("container target required here but unsupported: %s", why)
		}
		t.Skipf("container target unsupported here: %s", why)
	}
	return tg, n
}

func TestStoriesMatchReference(t *testing.T) {
	ctr, _ := needEngine(t, "")
	ref, err := reference.New(framework.TargetOptions{WorkDir: caseroottest.TempDir(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	ctx := context.Background()
	cases := storyCases()
	if err := ctr.(framework.Batcher).Prepare(ctx, cases); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			want, err := ref.Observe(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ctr.Observe(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			if d := framework.Diff(want, got); len(d) > 0 {
				t.Errorf("container differs from reference:\n%s\ncontainer observed:\n%s", strings.Join(d, "\n"), got.JSON())
			}
		})
	}
	// The stories' own facts, so that a reference and container wrong together still fail.
	sticky, err := ctr.Observe(ctx, cases[0])
	if err != nil {
		t.Fatal(err)
	}
	wantProbes := map[string]string{"1001 creates": "", "1002 cannot delete": "EPERM", "1002 cannot rename": "EPERM", "1002 creates its own": "", "1001 renames": "", "1001 deletes": ""}
	for _, p := range sticky.Probes {
		if p.Errno != wantProbes[p.Name] {
			t.Errorf("sticky %q: errno %q, want %q", p.Name, p.Errno, wantProbes[p.Name])
		}
	}
	if root := sticky.Volumes[0].Paths[0]; root.Mode != "1777" {
		t.Errorf("sticky root mode %s, want 1777", root.Mode)
	}
}

func TestReadOnlyMountsRefuseWrites(t *testing.T) {
	ctr, n := needEngine(t, ArgPerCase)
	pod := emptyDirPod(nil, nil)
	pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app"}}}})
	pod.Spec.Containers = []corev1.Container{{Name: "app", Image: framework.ProbeImage, VolumeMounts: []corev1.VolumeMount{
		{Name: "data", MountPath: "/data", ReadOnly: true},
		{Name: "cfg", MountPath: "/etc/app"},
	}}}
	c := &framework.Case{
		Name: "read-only mounts", Area: framework.AreaEmptyDir, Profile: framework.ProfileConformance, Pod: pod,
		Sources: map[string]map[string]string{"configmap/app": {"key": "value"}},
		Probes: []framework.Probe{
			{Name: "root cannot create in readOnly: true", Volume: "data", As: framework.User{}, Op: framework.OpCreate, Path: "x"},
			{Name: "root cannot mkdir in readOnly: true", Volume: "data", As: framework.User{}, Op: framework.OpMkdir, Path: "d"},
			{Name: "root reads the configMap", Volume: "cfg", As: framework.User{}, Op: framework.OpRead, Path: "key"},
			{Name: "configMap is always read-only", Volume: "cfg", As: framework.User{}, Op: framework.OpWrite, Path: "key"},
		},
	}
	if ok, why := ctr.Supports(c); !ok {
		t.Errorf("Supports = %v, %q; want supported: docs/spec.md [probes.read-only] models read-only mounts", ok, why)
	}
	c.Complete()
	a, err := refnode.APIServer{}.Admit(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	r := n.ObserveNode(context.Background(), c, a)
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	obs := &framework.Observation{Volumes: r.Volumes, Probes: r.Probes}
	want := []string{"EROFS", "EROFS", "", "EROFS"}
	for i, p := range obs.Probes {
		if p.Errno != want[i] || p.Allowed != (want[i] == "") {
			t.Errorf("%s: allowed=%v errno %q, want errno %q", p.Name, p.Allowed, p.Errno, want[i])
		}
	}
	if len(obs.Volumes) != 2 || len(obs.Volumes[1].Paths) < 4 {
		t.Errorf("configMap volume not observed through the read-only mount:\n%s", obs.JSON())
	}
	// The oracle says the same (docs/spec.md [probes.read-only]).
	exp := oracle.Expect(c)
	for i, p := range exp.Probes {
		if p.Errno != want[i] {
			t.Errorf("oracle: %s: errno %q, want %q", p.Name, p.Errno, want[i])
		}
	}
}

func TestUnsupportedSaysWhy(t *testing.T) {
	ctr, _ := needEngine(t, "")
	tests := []struct {
		name string
		c    *framework.Case
		want string
	}{
		{"hostPath with nothing there", &framework.Case{Name: "absent", Pod: hostPathPod("/nothing/here", corev1.HostPathUnset)}, "nothing exists at /nothing/here"},
		{"subPath", &framework.Case{Name: "subpath", Pod: func() *corev1.Pod {
			p := emptyDirPod(nil, nil)
			p.Spec.Containers = []corev1.Container{{Name: "a", Image: "x", VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/d", SubPath: "s"}}}}
			return p
		}()}, "subPath"},
		{"chmod through a read-only mount", &framework.Case{Name: "ro-chmod", Pod: func() *corev1.Pod {
			p := &corev1.Pod{}
			p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s"}}}}
			return p
		}(), After: []framework.Step{{Chmod: &framework.Chmod{Volume: "data", Path: ".", Mode: 0700}}}}, "after[0].chmod"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, why := ctr.Supports(tt.c)
			if ok || !strings.Contains(why, tt.want) {
				t.Errorf("Supports = %v, %q; want false with %q", ok, why, tt.want)
			}
			if _, err := ctr.Observe(context.Background(), tt.c); err == nil {
				t.Error("Observe of an unsupported case succeeded")
			}
		})
	}
}

func TestNoEngineNamesTheSocket(t *testing.T) {
	hostfeature.Need(t, hostfeature.Root) // the engine is only reached for node-side cases, which need root first
	tests := []struct {
		name, ci, require string
		wantRequired      bool
	}{
		{"a dev machine", "", "", false},
		{"CI", "true", "", true},
		{"VOLPERM_REQUIRE", "", "kind,container", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
			t.Setenv("CI", tt.ci)
			t.Setenv(hostfeature.EnvRequire, tt.require)
			tg, err := New(framework.TargetOptions{WorkDir: caseroottest.TempDir(t)})
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close()
			ok, why := tg.Supports(storyCases()[0])
			if ok || !strings.Contains(why, "/nonexistent/docker.sock") || !strings.Contains(why, "hack/docker-up.sh") {
				t.Errorf("Supports = %v, %q; want false naming the socket and hack/docker-up.sh", ok, why)
			}
			// The suites fail a case whose missing feature is required (framework.Ask's Missing).
			if got := hostfeature.Required(hostfeature.ContainerEngine); got != tt.wantRequired {
				t.Errorf("the engine is required: %v, want %v", got, tt.wantRequired)
			}
			if strings.Contains(why, "required here") && !tt.wantRequired {
				t.Errorf("reason %q says required on a machine that does not require an engine", why)
			}
			cases := storyCases()
			if ok, _ := tg.Supports(cases[len(cases)-1]); !ok {
				t.Error("an admission-only case needs no engine")
			}
		})
	}
}

// modeSweep is cases enough to measure batching: emptyDir modes, each probed by two users.
func modeSweep() []*framework.Case {
	var out []*framework.Case
	for _, m := range []int32{0700, 0750, 0755, 0770, 0777, 01777, 02770, 03777} {
		out = append(out, &framework.Case{
			Name: fmt.Sprintf("emptyDir mode %04o", m), Area: framework.AreaEmptyDir, Profile: framework.ProfileAlpha,
			Gates: alpha, Pod: emptyDirPod(ptr.To(m), ptr.To[int64](2000)),
			Probes: []framework.Probe{
				pr("1001 creates", user1001, framework.OpCreate, "a", ""),
				pr("member lists", framework.User{UID: 1002, GID: 1002, Groups: []int64{2000}}, framework.OpList, ".", ""),
				pr("member deletes", framework.User{UID: 1002, GID: 1002, Groups: []int64{2000}}, framework.OpDelete, "a", ""),
				pr("stranger creates", stranger, framework.OpCreate, "s", ""),
			},
		})
	}
	return out
}

// TestBatchedVsPerCase runs the same cases both ways, checks they observe the same and logs
// container starts and wall time (the figures to compare: volperm bench batched-vs-per-case,
// docs/bench.md). Three modes of the sweep (plain, sticky, setgid) and the stories: a container
// per case costs seconds each, and the eight modes took 95 s of make test (issue 34).
func TestBatchedVsPerCase(t *testing.T) {
	e2etest.Gate(t)
	var cases []*framework.Case
	for _, c := range modeSweep() {
		if strings.HasSuffix(c.Name, " 0700") || strings.HasSuffix(c.Name, " 1777") || strings.HasSuffix(c.Name, " 2770") {
			cases = append(cases, c)
		}
	}
	cases = append(cases, storyCases()...)
	if len(cases) != 3+len(storyCases()) {
		t.Fatalf("%d cases: the sweep's names changed", len(cases))
	}
	ctx := context.Background()
	results := map[string]map[string]*framework.Observation{}
	for _, mode := range []string{"", ArgPerCase} {
		ctr, n := needEngine(t, mode)
		// The image is imported (once) before timing starts.
		if _, err := n.engine(ctx); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if b, ok := ctr.(framework.Batcher); ok != (mode == "") {
			t.Fatalf("mode %q: Batcher %v", mode, ok)
		} else if ok {
			if err := b.Prepare(ctx, cases); err != nil {
				t.Fatal(err)
			}
		}
		prepared := time.Since(start)
		results[mode] = map[string]*framework.Observation{}
		for _, c := range cases {
			obs, err := ctr.Observe(ctx, c)
			if err != nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
			results[mode][c.Name] = obs
		}
		name := mode
		if name == "" {
			name = "batched"
		}
		st := n.Stats()
		t.Logf("%-8s %d cases: %2d container starts, %2d execs, %v (Prepare %v)", name, len(cases), st.ContainerStarts, st.Execs, time.Since(start).Round(time.Millisecond), prepared.Round(time.Millisecond))
	}
	for _, c := range cases {
		if d := framework.Diff(results[ArgPerCase][c.Name], results[""][c.Name]); len(d) > 0 {
			t.Errorf("%s: batched differs from per-case:\n%s", c.Name, strings.Join(d, "\n"))
		}
	}
}

// TestCancelLeavesNothing cancels runs at different moments: every container of the run, every
// case root and every mount are gone once the target is closed.
func TestCancelLeavesNothing(t *testing.T) {
	e2etest.Gate(t)
	for _, after := range []time.Duration{50 * time.Millisecond, 300 * time.Millisecond, 900 * time.Millisecond} {
		t.Run(after.String(), func(t *testing.T) {
			dir := caseroottest.TempDir(t)
			n, err := newNode(framework.TargetOptions{WorkDir: dir})
			if err != nil {
				t.Fatal(err)
			}
			ctr := framework.NewTargetPair(Name, refnode.APIServer{}, n)
			if ok, why := ctr.Supports(storyCases()[0]); !ok {
				if hostfeature.Required(hostfeature.ContainerEngine) {
					t.Fatal(why)
				}
				t.Skip(why)
			}
			ctx, cancel := context.WithTimeout(context.Background(), after)
			defer cancel()
			err = ctr.(framework.Batcher).Prepare(ctx, append(modeSweep(), storyCases()...))
			t.Logf("Prepare cancelled after %v: %v", after, err)
			if err := ctr.Close(); err != nil {
				t.Fatalf("close: %v", err)
			}
			cli, err := client.New(client.FromEnv)
			if err != nil {
				t.Fatal(err)
			}
			defer cli.Close()
			list, err := cli.ContainerList(context.Background(), client.ContainerListOptions{All: true, Filters: make(client.Filters).Add("label", LabelRun+"="+n.runID)})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range list.Items {
				t.Errorf("container %.12s left behind", c.ID)
			}
			if mounts, err := mountinfo.AtOrBelow(dir); err != nil || len(mounts) > 0 {
				t.Errorf("mounts left below %s: %v %v", dir, mounts, err)
			}
			if left, _ := os.ReadDir(dir); len(left) > 0 {
				t.Errorf("%d entries left in %s", len(left), dir)
			}
		})
	}
}

// TestNothingLeftBehind runs after the others (go test runs tests in source order).
func TestNothingLeftBehind(t *testing.T) {
	needEngine(t, "")
	cli, err := client.New(client.FromEnv)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	// This test binary's own containers only: another package's tests (cmd/volperm kills and
	// interrupts container runs) may have theirs on the engine at the same time.
	self := strconv.Itoa(owner.Self().PID)
	list, err := cli.ContainerList(context.Background(), client.ContainerListOptions{All: true,
		Filters: make(client.Filters).Add("label", LabelTarget+"=container").Add("label", owner.LabelPID+"="+self)})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range list.Items {
		t.Errorf("container %.12s (%s) left behind", c.ID, c.Image)
	}
}

// The probe image's older tags (one per change of the probe program) are removed when the
// current one is ensured; the current one stays.
func TestOlderProbeImagesPruned(t *testing.T) {
	_, n := needEngine(t, "")
	ctx := context.Background()
	e, err := n.engine(ctx)
	if err != nil {
		t.Fatal(err)
	}
	repo, _, _ := strings.Cut(e.image, ":")
	older := repo + ":older-" + strconv.Itoa(os.Getpid())
	if _, err := e.cli.ImageTag(ctx, client.ImageTagOptions{Source: e.image, Target: older}); err != nil {
		t.Fatal(err)
	}
	if err := e.ensureImage(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := e.cli.ImageInspect(ctx, older); err == nil {
		e.cli.ImageRemove(ctx, older, client.ImageRemoveOptions{})
		t.Errorf("%s is still there after the probe image %s was ensured", older, e.image)
	}
	if _, err := e.cli.ImageInspect(ctx, e.image); err != nil {
		t.Errorf("the current probe image %s: %v", e.image, err)
	}
}
