package upstream

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/volperm/volperm/hostfeature"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/k8srelease"
	"github.com/volperm/volperm/framework/knowndiff"
	"github.com/volperm/volperm/framework/probe"
)

func TestMain(m *testing.M) {
	probe.MaybeRunChild() // probes re-exec this binary as other uids
	os.Exit(m.Run())
}

func ptr[T any](v T) *T { return &v }

func podWith(fsGroup *int64, vols ...corev1.Volume) *corev1.Pod {
	p := &corev1.Pod{Spec: corev1.PodSpec{Volumes: vols}}
	if fsGroup != nil {
		p.Spec.SecurityContext = &corev1.PodSecurityContext{FSGroup: fsGroup}
	}
	return p
}

// tokenPod has a projected serviceAccountToken with defaultMode 0444, and the serviceAccountName
// that v1.37 ValidatePodCreate requires beside a token projection.
func tokenPod(fsGroup *int64) *corev1.Pod {
	p := podWith(fsGroup, corev1.Volume{Name: "kube-api-access", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		DefaultMode: ptr[int32](0444), Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}}},
	}}})
	p.Spec.ServiceAccountName = "default"
	return p
}

func emptyDir(mode *int32, medium corev1.StorageMedium) corev1.Volume {
	return corev1.Volume{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Mode: mode, Medium: medium}}}
}

var gateOn = map[string]bool{framework.GateEmptyDirVolumeMode: true}

// pathOf returns the observation of path "." of volume name, or fails.
func pathOf(t *testing.T, obs *framework.Observation, name, path string) framework.PathObservation {
	t.Helper()
	for _, v := range obs.Volumes {
		if v.Name != name {
			continue
		}
		if v.SetUp != framework.SetUpOK {
			t.Fatalf("volume %q set-up failed: %s", name, v.SetUp)
		}
		for _, p := range v.Paths {
			if p.Path == path {
				return p
			}
		}
		t.Fatalf("volume %q has no path %q: %+v", name, path, v.Paths)
	}
	t.Fatalf("no volume %q in %s", name, obs.JSON())
	return framework.PathObservation{}
}

func TestRegistered(t *testing.T) {
	tgt, err := framework.NewTarget(Name, framework.TargetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer tgt.Close()
	if info := tgt.Info(); info.Name != Name || info.Version != k8srelease.DefaultRelease {
		t.Fatalf("Info() = %+v", info)
	}
}

func TestObserve(t *testing.T) {
	hostfeature.Need(t, hostfeature.Root) // needs root: mounts tmpfs, chowns, runs probes as other uids
	cases := []struct {
		name  string
		c     framework.Case
		check func(t *testing.T, obs *framework.Observation)
		// known names the KnownDifference expected to explain this case, "" if none.
		known string
	}{{
		name: "emptyDir 0750 default medium, gate on",
		c:    framework.Case{Gates: framework.Gates{APIServer: gateOn, Kubelet: gateOn}, Pod: podWith(nil, emptyDir(ptr[int32](0750), ""))},
		check: func(t *testing.T, obs *framework.Observation) {
			if p := pathOf(t, obs, "scratch", "."); p.Mode != "0750" || p.Type != "dir" {
				t.Errorf("root = %+v, want dir 0750", p)
			}
		},
	}, {
		name: "emptyDir 0750 on Memory: tmpfs root",
		c:    framework.Case{Gates: framework.Gates{APIServer: gateOn, Kubelet: gateOn}, Pod: podWith(nil, emptyDir(ptr[int32](0750), corev1.StorageMediumMemory))},
		check: func(t *testing.T, obs *framework.Observation) {
			if p := pathOf(t, obs, "scratch", "."); p.Mode != "1777" {
				t.Errorf("root mode = %s, want 1777 (upstream mounts tmpfs after the chmod)", p.Mode)
			}
		},
		known: "Memory",
	}, {
		name: "emptyDir 0750, kubelet gate off: mode ignored",
		c:    framework.Case{Gates: framework.Gates{APIServer: gateOn}, Pod: podWith(nil, emptyDir(ptr[int32](0750), ""))},
		check: func(t *testing.T, obs *framework.Observation) {
			if p := pathOf(t, obs, "scratch", "."); p.Mode != "0777" {
				t.Errorf("root mode = %s, want 0777", p.Mode)
			}
		},
	}, {
		name: "emptyDir 0750 + fsGroup 2000",
		c:    framework.Case{Gates: framework.Gates{APIServer: gateOn, Kubelet: gateOn}, Pod: podWith(ptr[int64](2000), emptyDir(ptr[int32](0750), ""))},
		check: func(t *testing.T, obs *framework.Observation) {
			if p := pathOf(t, obs, "scratch", "."); p.Mode != "2770" || p.GID != 2000 {
				t.Errorf("root = %+v, want 2770 gid 2000", p)
			}
		},
	}, {
		name: "hostPath Socket on nothing",
		c: framework.Case{
			Pod: podWith(nil, corev1.Volume{Name: "sock", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{
				Path: "/var/run/app.sock", Type: ptr(corev1.HostPathSocket)}}}),
			Host: []framework.HostObject{{Path: "/var/run/app.sock", Kind: framework.KindNothing}},
		},
		check: func(t *testing.T, obs *framework.Observation) {
			want := `hostPath type check failed, /var/run/app.sock is not a socket file, unable to determine its type: path "/var/run/app.sock" does not exist`
			if len(obs.Volumes) != 1 || obs.Volumes[0].SetUp != want || obs.Volumes[0].Paths != nil {
				t.Errorf("volumes = %+v, want set-up %q and no paths", obs.Volumes, want)
			}
		},
	}, {
		name: "secret defaultMode 0400 + fsGroup",
		c: framework.Case{
			Pod: podWith(ptr[int64](3000), corev1.Volume{Name: "creds", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
				SecretName: "creds", DefaultMode: ptr[int32](0400)}}}),
			Sources: map[string]map[string]string{"secret/creds": {"token": "s3cr3t"}},
			Probes: []framework.Probe{
				{Name: "group reads", Volume: "creds", As: framework.User{UID: 1000, GID: 1000, Groups: []int64{3000}}, Op: framework.OpRead, Path: "token"},
				{Name: "other cannot", Volume: "creds", As: framework.User{UID: 1000, GID: 1000}, Op: framework.OpRead, Path: "token"},
			},
		},
		check: func(t *testing.T, obs *framework.Observation) {
			if p := pathOf(t, obs, "creds", "..TIMESTAMP/token"); p.Mode != "0440" || p.GID != 3000 {
				t.Errorf("token = %+v, want 0440 gid 3000", p)
			}
			if p := pathOf(t, obs, "creds", "token"); p.Type != "symlink" || p.Link != "..data/token" {
				t.Errorf("token link = %+v", p)
			}
			want := []framework.ProbeResult{{Name: "group reads", Allowed: true}, {Name: "other cannot", Errno: "EACCES"}}
			if len(obs.Probes) != 2 || obs.Probes[0] != want[0] || obs.Probes[1] != want[1] {
				t.Errorf("probes = %+v, want %+v", obs.Probes, want)
			}
		},
	}, {
		// v1.37 projected.go collectData with the harness's fake token: defaultMode without
		// fsGroup, 0600 with it, which the read-only walk makes 0640 (kubernetes issue 82573).
		name: "projected serviceAccountToken with fsGroup",
		c: framework.Case{
			Pod: tokenPod(ptr[int64](3000)),
		},
		check: func(t *testing.T, obs *framework.Observation) {
			if p := pathOf(t, obs, "kube-api-access", "..TIMESTAMP/token"); p.Mode != "0640" || p.GID != 3000 {
				t.Errorf("token with fsGroup = %+v, want 0640 gid 3000", p)
			}
		},
	}, {
		name: "projected serviceAccountToken without fsGroup",
		c: framework.Case{
			Pod: tokenPod(nil),
		},
		check: func(t *testing.T, obs *framework.Observation) {
			if p := pathOf(t, obs, "kube-api-access", "..TIMESTAMP/token"); p.Mode != "0444" || p.GID != 0 {
				t.Errorf("token without fsGroup = %+v, want defaultMode 0444 gid 0", p)
			}
		},
	}, {
		name: "emptyDir mode 1024 rejected",
		c:    framework.Case{Gates: framework.Gates{APIServer: gateOn, Kubelet: gateOn}, Pod: podWith(nil, emptyDir(ptr[int32](1024), ""))},
		check: func(t *testing.T, obs *framework.Observation) {
			// The invalid volume is not among the valid ones, so the default container's mount of
			// it is "Not found" too (v1.37 ValidateVolumes, then validateContainers).
			want := []string{
				`spec.containers[0].volumeMounts[0].name: Not found: "scratch"`,
				"spec.volumes[0].emptyDir.mode: Invalid value: 1024: must be a number between 0 and 01777 (octal), both inclusive",
			}
			if obs.Admission.Allowed || strings.Join(obs.Admission.Errors, "\n") != strings.Join(want, "\n") || obs.Volumes != nil {
				t.Errorf("admission = %+v volumes = %+v, want rejected with %q", obs.Admission, obs.Volumes, want)
			}
		},
	}, {
		name: "apiserver gate off drops mode 1024, then admits",
		c:    framework.Case{Pod: podWith(nil, emptyDir(ptr[int32](1024), ""))},
		check: func(t *testing.T, obs *framework.Observation) {
			if !obs.Admission.Allowed || len(obs.Admission.Dropped) != 1 || obs.Admission.Dropped[0] != "spec.volumes[0].emptyDir.mode" {
				t.Errorf("admission = %+v, want allowed with spec.volumes[0].emptyDir.mode dropped", obs.Admission)
			}
			if p := pathOf(t, obs, "scratch", "."); p.Mode != "0777" {
				t.Errorf("root mode = %s, want 0777", p.Mode)
			}
		},
	}, {
		name: "flexVolume fixture: kubelet restart re-applies the walk",
		c: framework.Case{
			Pod: podWith(ptr[int64](2000), corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{FlexVolume: &corev1.FlexVolumeSource{Driver: "volperm/fixture"}}}),
			Storage: map[string][]framework.File{"data": {
				{Path: "sub/f", Mode: 0600, UID: 1000, GID: 1000},
				{Path: "l", Symlink: "sub/f", UID: 1000, GID: 1000},
			}},
			After: []framework.Step{{Chmod: &framework.Chmod{Volume: "data", Path: "sub/f", Mode: 0600}}, {RestartKubelet: true}},
		},
		check: func(t *testing.T, obs *framework.Observation) {
			if p := pathOf(t, obs, "data", "."); p.Mode != "2770" || p.GID != 2000 {
				t.Errorf("root = %+v, want 2770 gid 2000 (0750 | 0110 + setgid | 0660)", p)
			}
			if p := pathOf(t, obs, "data", "sub"); p.Mode != "2775" || p.GID != 2000 {
				t.Errorf("sub = %+v, want 2775 gid 2000", p)
			}
			if p := pathOf(t, obs, "data", "sub/f"); p.Mode != "0660" || p.UID != 1000 || p.GID != 2000 {
				t.Errorf("sub/f = %+v, want 0660 1000:2000 (the restart ORs the mask back)", p)
			}
			if p := pathOf(t, obs, "data", "l"); p.Type != "symlink" || p.Link != "sub/f" || p.GID != 2000 {
				t.Errorf("l = %+v, want symlink -> sub/f gid 2000", p)
			}
		},
	}, {
		name: "flexVolume driver not on the node",
		c:    framework.Case{Pod: podWith(nil, corev1.Volume{Name: "nfs", VolumeSource: corev1.VolumeSource{FlexVolume: &corev1.FlexVolumeSource{Driver: "example/nfs"}}})},
		check: func(t *testing.T, obs *framework.Observation) {
			if len(obs.Volumes) != 1 || obs.Volumes[0].SetUp != "no volume plugin matched" {
				t.Errorf("volumes = %+v, want set-up %q", obs.Volumes, "no volume plugin matched")
			}
		},
		known: "no volume plugin matched",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			work := t.TempDir()
			// Probes run as other uids: they must reach the case root through the work dir.
			for _, d := range []string{work, filepath.Dir(work)} {
				if err := os.Chmod(d, 0755); err != nil {
					t.Fatal(err)
				}
			}
			tgt, err := New(framework.TargetOptions{WorkDir: work})
			if err != nil {
				t.Fatal(err)
			}
			c := tc.c
			c.Name = tc.name
			if ok, why := tgt.Supports(&c); !ok {
				t.Fatalf("Supports: %s", why)
			}
			obs, err := tgt.Observe(context.Background(), &c)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, obs)
			if err := tgt.Close(); err != nil {
				t.Fatal(err)
			}
			var known []string
			for _, k := range knowndiff.KnownDifferences {
				if k.Match(&c) {
					known = append(known, k.Why)
				}
			}
			if (tc.known == "") != (len(known) == 0) || (tc.known != "" && !strings.Contains(strings.Join(known, "\n"), tc.known)) {
				t.Errorf("known differences = %q, want one naming %q", known, tc.known)
			}
			assertNothingLeft(t, work)
		})
	}
}

// assertNothingLeft checks that the case removed its root and left no mount below work.
func assertNothingLeft(t *testing.T, work string) {
	t.Helper()
	entries, err := os.ReadDir(work)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("left behind in the work dir: %s", e.Name())
	}
	mountinfo, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(mountinfo), work) {
		t.Errorf("mounts left below %s:\n%s", work, mountinfo)
	}
}

func TestSupports(t *testing.T) {
	tgt, err := New(framework.TargetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer tgt.Close()
	secretVol := corev1.Volume{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s"}}}
	cases := []struct {
		name string
		c    framework.Case
		why  string // "" = supported
	}{
		{"preservePermissions", framework.Case{Pod: podWith(nil, secretVol), PreservePermissions: []string{"s"}}, "no preservePermissions"},
		{"flexVolume allowlist", framework.Case{Pod: podWith(nil, secretVol), FlexVolumePolicy: &framework.FlexVolumePolicy{AllowedDrivers: []string{"a/b"}}, AdmissionOnly: true}, "no flexVolume driver allowlist"},
		{"PreservePermissions gate on", framework.Case{Pod: podWith(nil, secretVol), Gates: framework.Gates{Kubelet: map[string]bool{framework.GatePreservePermissions: true}}}, "no feature gate PreservePermissions"},
		{"PreservePermissions gate off", framework.Case{Pod: podWith(nil, secretVol), AdmissionOnly: true, Gates: framework.Gates{APIServer: map[string]bool{framework.GatePreservePermissions: false}}}, ""},
		{"admission only", framework.Case{Pod: podWith(nil, emptyDir(ptr[int32](0700), "")), AdmissionOnly: true}, ""},
		{"persistentVolume", framework.Case{PersistentVolume: &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: "pv"},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
				AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				PersistentVolumeSource: corev1.PersistentVolumeSource{FlexVolume: &corev1.FlexPersistentVolumeSource{Driver: "a/b"}},
			}}}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.c
			c.Name = tc.name
			ok, why := tgt.Supports(&c)
			if ok != (tc.why == "") || !strings.Contains(why, tc.why) {
				t.Errorf("Supports = %v %q, want reason containing %q", ok, why, tc.why)
			}
		})
	}
}

// A HugePages medium of a size this machine lacks is "not run" with the feature named, as on the
// reference target (docs/host-features.md): framework.Ask's Missing classifies it for the
// suites, Supports says it for every other caller. No machine has 3 MiB pages.
func TestHugePageSizeTheHostLacks(t *testing.T) {
	hostfeature.Need(t, hostfeature.Root) // root is the first feature a node-side case needs
	tgt, err := New(framework.TargetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer tgt.Close()
	res := corev1.ResourceList{"hugepages-3Mi": resource.MustParse("6Mi"), corev1.ResourceMemory: resource.MustParse("64Mi")}
	pod := podWith(nil, emptyDir(ptr[int32](0750), "HugePages-3Mi"))
	pod.Spec.Containers = []corev1.Container{{Name: "c", Image: "x", Resources: corev1.ResourceRequirements{Requests: res, Limits: res.DeepCopy()}}}
	c := &framework.Case{Name: "mode on HugePages-3Mi", Pod: pod, Gates: framework.Gates{APIServer: gateOn, Kubelet: gateOn}}
	m := framework.Reasons(tgt, c).Missing
	if m == nil || m.Feature != "hugepages-3Mi" {
		t.Fatalf("Reasons' Missing = %v, want hugepages-3Mi", m)
	}
	if ok, why := tgt.Supports(c); ok || !strings.Contains(why, "this machine lacks hugepages-3Mi") {
		t.Errorf("Supports = %v %q, want false naming hugepages-3Mi", ok, why)
	}
}
