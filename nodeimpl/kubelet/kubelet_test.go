package kubelet

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/volperm/volperm/hostfeature"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/volperm/volperm/nodeimpl/flexvolume"
	"github.com/volperm/volperm/nodeimpl/gates"
)

// The reference kubelet runs at umask 022 (docs/spec.md "Node: volume set-up").
func TestMain(m *testing.M) {
	syscall.Umask(022)
	os.Exit(m.Run())
}

func requireRoot(t *testing.T) {
	t.Helper()
	hostfeature.Need(t, hostfeature.Root)
}

// requireHugetlbfs: the tests mount hugetlbfs with 2Mi pages.
func requireHugetlbfs(t *testing.T) {
	t.Helper()
	hostfeature.Need(t, hostfeature.HugePages(resource.MustParse("2Mi")))
}

func int32p(v int32) *int32 { return &v }
func int64p(v int64) *int64 { return &v }

// newKubelet makes a kubelet under a fresh temp root; the pod registered with torn is torn
// down when the test ends, and no mount may be left under the root.
func newKubelet(t *testing.T, g gates.Set) (*Kubelet, string) {
	t.Helper()
	root := t.TempDir()
	k, err := New(Config{RootDir: filepath.Join(root, "kubelet"), HostRoot: filepath.Join(root, "host"), Gates: g})
	if err != nil {
		t.Fatal(err)
	}
	return k, root
}

func tornDown(t *testing.T, k *Kubelet, p *Pod) {
	t.Cleanup(func() {
		if err := k.TearDown(p); err != nil {
			t.Errorf("TearDown: %v", err)
		}
		if m := mountsUnder(t, k.rootDir); len(m) > 0 {
			t.Errorf("mounts left after TearDown: %v", m)
		}
	})
}

func mountsUnder(t *testing.T, dir string) []string {
	t.Helper()
	m, err := mountsBelow(dir)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func pod(fsGroup *int64, vols ...corev1.Volume) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "uid-1"},
		Spec: corev1.PodSpec{
			SecurityContext: &corev1.PodSecurityContext{FSGroup: fsGroup},
			Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{"hugepages-2Mi": resource.MustParse("2Mi")},
			}}},
			Volumes: vols,
		},
	}
}

func emptyDirVol(name string, medium corev1.StorageMedium, mode *int32) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: medium, Mode: mode}}}
}

func secretVol(name, secret string, defaultMode int32) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret, DefaultMode: int32p(defaultMode)}}}
}

// stat returns the 4-digit mode and gid of path (following symlinks when follow).
func stat(t *testing.T, path string, follow bool) (mode, gid uint32) {
	t.Helper()
	var st syscall.Stat_t
	f := syscall.Lstat
	if follow {
		f = syscall.Stat
	}
	if err := f(path, &st); err != nil {
		t.Fatalf("stat %s: %v", path, err)
	}
	return st.Mode & 07777, st.Gid
}

func errText(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

// Every volume type in one pod, in pod order; one failure does not stop the others; TearDown
// leaves no mount and no directory, and a second TearDown is no error.
func TestSetUpEveryType(t *testing.T) {
	requireRoot(t)
	requireHugetlbfs(t)
	k, root := newKubelet(t, nil)
	hostPathType := corev1.HostPathDirectoryOrCreate
	p := &Pod{
		Pod: pod(nil,
			emptyDirVol("ed-default", "", nil),
			emptyDirVol("ed-memory", corev1.StorageMediumMemory, nil),
			emptyDirVol("ed-huge", "HugePages-2Mi", nil),
			corev1.Volume{Name: "hp", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var/data", Type: &hostPathType}}},
			corev1.Volume{Name: "hp-missing", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/dev/nope", Type: ptr(corev1.HostPathCharDev)}}},
			secretVol("sec", "s", 0644),
			corev1.Volume{Name: "cm", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "c"}, DefaultMode: int32p(0644)}}},
			corev1.Volume{Name: "dapi", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{DefaultMode: int32p(0644), Items: []corev1.DownwardAPIVolumeFile{{Path: "name", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}}}}},
			corev1.Volume{Name: "proj", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{DefaultMode: int32p(0644), Sources: []corev1.VolumeProjection{{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "s"}}}}}}},
			corev1.Volume{Name: "flex", VolumeSource: corev1.VolumeSource{FlexVolume: &corev1.FlexVolumeSource{Driver: flexvolume.FixtureDriver}}},
			corev1.Volume{Name: "flex-other", VolumeSource: corev1.VolumeSource{FlexVolume: &corev1.FlexVolumeSource{Driver: "example/nfs"}}},
			corev1.Volume{Name: "nfs", VolumeSource: corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{Server: "s", Path: "/"}}},
		),
		Sources: map[string]map[string]string{"secret/s": {"k": "v"}, "configmap/c": {"a": "b"}},
		Storage: map[string][]flexvolume.StorageFile{"flex": {{Path: "f", Mode: 0600}}},
	}
	tornDown(t, k, p)

	vols := filepath.Join(root, "kubelet", "pods", "uid-1", "volumes")
	want := []struct {
		name, typ, medium, path, err string
		mode                         uint32 // root mode (lstat) on success
	}{
		{"ed-default", TypeEmptyDir, "", vols + "/kubernetes.io~empty-dir/ed-default", "ok", 0777},
		{"ed-memory", TypeEmptyDir, "Memory", vols + "/kubernetes.io~empty-dir/ed-memory", "ok", 01777},
		{"ed-huge", TypeEmptyDir, "HugePages-2Mi", vols + "/kubernetes.io~empty-dir/ed-huge", "ok", 0755},
		{"hp", TypeHostPath, "", root + "/host/var/data", "ok", 0755},
		{"hp-missing", TypeHostPath, "", root + "/host/dev/nope", `hostPath type check failed, /dev/nope is not a character device, unable to determine its type: path "/dev/nope" does not exist`, 0},
		{"sec", TypeSecret, "", vols + "/kubernetes.io~secret/sec", "ok", 01777},
		{"cm", TypeConfigMap, "", vols + "/kubernetes.io~configmap/cm", "ok", 0777},
		{"dapi", TypeDownwardAPI, "", vols + "/kubernetes.io~downward-api/dapi", "ok", 01777},
		{"proj", TypeProjected, "", vols + "/kubernetes.io~projected/proj", "ok", 01777},
		{"flex", TypeFlexVolume, "", vols + "/volperm~fixture/flex", "ok", 0750},
		{"flex-other", TypeFlexVolume, "", vols + "/example~nfs/flex-other", `flexVolume driver "example/nfs" is not installed on this node`, 0},
		{"nfs", "nfs", "", "", "volume type nfs is not supported by the reference node", 0},
	}
	for round := 1; round <= 2; round++ { // the second round is a kubelet restart
		got := k.SetUp(p)
		if len(got) != len(want) {
			t.Fatalf("round %d: %d results, want %d", round, len(got), len(want))
		}
		for i, w := range want {
			g := got[i]
			if g.Name != w.name || g.Type != w.typ || g.Medium != w.medium || g.Path != w.path || errText(g.Err) != w.err {
				t.Errorf("round %d: result %d = {%s %s %q %s %q}, want {%s %s %q %s %q}", round, i, g.Name, g.Type, g.Medium, g.Path, errText(g.Err), w.name, w.typ, w.medium, w.path, w.err)
				continue
			}
			if g.Err == nil {
				if mode, _ := stat(t, g.Path, false); mode != w.mode {
					t.Errorf("round %d: %s root %04o, want %04o", round, w.name, mode, w.mode)
				}
			}
		}
	}
	for _, f := range []string{"kubernetes.io~secret/sec/k", "kubernetes.io~configmap/cm/a", "kubernetes.io~downward-api/dapi/name", "kubernetes.io~projected/proj/k"} {
		if mode, _ := stat(t, filepath.Join(vols, f), true); mode != 0644 {
			t.Errorf("%s: %04o, want 0644", f, mode)
		}
	}

	for i := 0; i < 2; i++ {
		if err := k.TearDown(p); err != nil {
			t.Fatalf("TearDown #%d: %v", i+1, err)
		}
	}
	if m := mountsUnder(t, root); len(m) > 0 {
		t.Errorf("mounts left: %v", m)
	}
	if _, err := os.Lstat(filepath.Join(root, "kubelet", "pods", "uid-1")); !os.IsNotExist(err) {
		t.Errorf("pod dir left behind (lstat: %v)", err)
	}
	// hostPath objects belong to the host: TearDown leaves them.
	if _, err := os.Stat(filepath.Join(root, "host", "var", "data")); err != nil {
		t.Errorf("hostPath dir removed: %v", err)
	}
}

func ptr[T any](v T) *T { return &v }

// Version skew on the kubelet side (seed 000 "Version Skew Strategy", docs/spec.md step 5): the
// gate in force at the first SetUp decides; a later flip plus restart changes nothing.
func TestEmptyDirModeGate(t *testing.T) {
	requireRoot(t)
	for _, tc := range []struct {
		medium          corev1.StorageMedium
		first, restart  bool
		want            uint32
		wantAfterRemove uint32 // after the volume is removed and set up again under the new gate
	}{
		{"", false, true, 0777, 0750},
		{"", true, false, 0750, 0777},
		{"", true, true, 0750, 0750},
		{corev1.StorageMediumMemory, false, true, 01777, 0750},
		{corev1.StorageMediumMemory, true, false, 0750, 01777},
	} {
		t.Run(fmt.Sprintf("%q/first=%v/restart=%v", tc.medium, tc.first, tc.restart), func(t *testing.T) {
			k, _ := newKubelet(t, gates.Set{gates.EmptyDirVolumeMode: tc.first})
			p := &Pod{Pod: pod(nil, emptyDirVol("v", tc.medium, int32p(0750)))}
			tornDown(t, k, p)
			r := k.SetUp(p)[0]
			if r.Err != nil {
				t.Fatal(r.Err)
			}
			if mode, _ := stat(t, r.Path, false); mode != tc.want {
				t.Errorf("first SetUp: %04o, want %04o", mode, tc.want)
			}
			k.SetGates(gates.Set{gates.EmptyDirVolumeMode: tc.restart})
			if r := k.SetUp(p)[0]; r.Err != nil {
				t.Fatal(r.Err)
			}
			if mode, _ := stat(t, r.Path, false); mode != tc.want {
				t.Errorf("after restart: %04o, want %04o (a running pod is not changed)", mode, tc.want)
			}
			if err := k.TearDown(p); err != nil {
				t.Fatal(err)
			}
			if r := k.SetUp(p)[0]; r.Err != nil {
				t.Fatal(r.Err)
			}
			if mode, _ := stat(t, r.Path, false); mode != tc.wantAfterRemove {
				t.Errorf("re-created pod: %04o, want %04o", mode, tc.wantAfterRemove)
			}
		})
	}
}

// fsGroup 2000 + mode 0750 -> 2770 gid 2000 (docs/spec.md "emptyDir"); a restart after a
// container's chmod changes nothing (ready marker: no chmod, no walk).
func TestEmptyDirFSGroupAndRestart(t *testing.T) {
	requireRoot(t)
	for _, medium := range []corev1.StorageMedium{"", corev1.StorageMediumMemory, corev1.StorageMediumHugePages} {
		t.Run(string(medium), func(t *testing.T) {
			if medium == corev1.StorageMediumHugePages {
				requireHugetlbfs(t)
			}
			k, _ := newKubelet(t, gates.Set{gates.EmptyDirVolumeMode: true})
			p := &Pod{Pod: pod(int64p(2000), emptyDirVol("v", medium, int32p(0750)))}
			tornDown(t, k, p)
			r := k.SetUp(p)[0]
			if r.Err != nil {
				t.Fatal(r.Err)
			}
			if mode, gid := stat(t, r.Path, false); mode != 02770 || gid != 2000 {
				t.Errorf("root %04o gid %d, want 2770 gid 2000", mode, gid)
			}
			if err := os.Chmod(r.Path, 0700); err != nil {
				t.Fatal(err)
			}
			if r := k.SetUp(p)[0]; r.Err != nil {
				t.Fatal(r.Err)
			}
			if mode, _ := stat(t, r.Path, false); mode != 0700 {
				t.Errorf("after restart %04o, want 0700", mode)
			}
		})
	}
}

// preservePermissions (seed 002): with the field and the kubelet gate the walk of setPerms is
// skipped and files keep defaultMode; otherwise the read-only walk ORs 0440 and sets the gid.
func TestPreservePermissions(t *testing.T) {
	requireRoot(t)
	for _, tc := range []struct {
		name     string
		field    bool
		gate     bool
		fileMode uint32
		fileGID  uint32
	}{
		{"field and gate", true, true, 0400, 0},
		{"field, gate off", true, false, 0440, 2000},
		{"gate, no field", false, true, 0440, 2000},
		{"neither", false, false, 0440, 2000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, _ := newKubelet(t, gates.Set{gates.PreservePermissions: tc.gate})
			p := &Pod{
				Pod:     pod(int64p(2000), secretVol("sec", "s", 0400)),
				Sources: map[string]map[string]string{"secret/s": {"key": "v"}},
			}
			if tc.field {
				p.PreservePermissions = []string{"sec"}
			}
			tornDown(t, k, p)
			for round := 1; round <= 2; round++ {
				r := k.SetUp(p)[0]
				if r.Err != nil {
					t.Fatal(r.Err)
				}
				if mode, gid := stat(t, filepath.Join(r.Path, "key"), true); mode != tc.fileMode || gid != tc.fileGID {
					t.Errorf("round %d: key %04o gid %d, want %04o gid %d", round, mode, gid, tc.fileMode, tc.fileGID)
				}
				// The wrapper emptyDir walks its empty root like upstream (rw mask, setgid).
				if mode, gid := stat(t, r.Path, false); mode != 03777 || gid != 2000 {
					t.Errorf("round %d: root %04o gid %d, want 3777 gid 2000", round, mode, gid)
				}
			}
		})
	}
}

// A payload error leaves nothing behind: no volume dir, no mount, no ready marker (v1.37
// secret SetUpAt computes the payload before the wrapper).
func TestAtomicWriterPayloadError(t *testing.T) {
	requireRoot(t)
	k, root := newKubelet(t, nil)
	v := secretVol("sec", "s", 0644)
	v.Secret.Items = []corev1.KeyToPath{{Key: "missing", Path: "p"}}
	p := &Pod{Pod: pod(nil, v), Sources: map[string]map[string]string{"secret/s": {"key": "v"}}}
	tornDown(t, k, p)
	r := k.SetUp(p)[0]
	if errText(r.Err) != "references non-existent secret key: missing" {
		t.Fatalf("error %q", errText(r.Err))
	}
	for _, path := range []string{r.Path, filepath.Join(root, "kubelet/pods/uid-1/plugins/kubernetes.io~empty-dir/wrapped_sec")} {
		if _, err := os.Lstat(path); !os.IsNotExist(err) {
			t.Errorf("%s exists after a failed set-up (lstat: %v)", path, err)
		}
	}
	if m := mountsUnder(t, root); len(m) > 0 {
		t.Errorf("mounts after a failed set-up: %v", m)
	}
}

// The kubelet's own directories are 0755 whatever the umask, so probes as other uids reach the
// volumes.
func TestDirectoriesReachable(t *testing.T) {
	requireRoot(t)
	old := syscall.Umask(077)
	defer syscall.Umask(old)
	k, root := newKubelet(t, nil)
	p := &Pod{Pod: pod(nil, emptyDirVol("v", "", nil))}
	tornDown(t, k, p)
	r := k.SetUp(p)[0]
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	for d := filepath.Dir(r.Path); d != root; d = filepath.Dir(d) {
		if mode, _ := stat(t, d, false); mode != 0755 {
			t.Errorf("%s is %04o, want 0755", d, mode)
		}
	}
	if mode, _ := stat(t, r.Path, false); mode != 0777 {
		t.Errorf("volume %04o, want 0777", mode)
	}
}

func TestNewRejects(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{RootDir: "relative"}, `kubelet root dir "relative": give an absolute path`},
		{Config{RootDir: "/x", Gates: gates.Set{"Nope": true}}, `kubelet gates: unknown feature gate "Nope": known gates are AtomicWriteVolumeUserFields, EmptyDirVolumeMode, PreservePermissions, VolumeBindMountOptions`},
	} {
		if _, err := New(tc.cfg); errText(err) != tc.want {
			t.Errorf("New(%+v) error %q, want %q", tc.cfg, errText(err), tc.want)
		}
	}
}

// owner returns the uid, gid and 4-digit mode of path (lstat: a symlink itself).
func owner(t *testing.T, path string) (uid, gid, mode uint32) {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		t.Fatalf("lstat %s: %v", path, err)
	}
	return st.Uid, st.Gid, st.Mode & 07777
}

// KEP-5936 (docs/spec.md [atomicwriter.owner]): the kubelet's AtomicWriteVolumeUserFields gate
// decides whether defaultUser / user set owners; the walk keeps them; preservePermissions skips
// the walk; a restart with an unchanged payload changes no owner, whatever the gate is then.
func TestAtomicWriteVolumeUserFields(t *testing.T) {
	requireRoot(t)
	for _, tc := range []struct {
		name     string
		gate     bool
		fsGroup  *int64
		preserve bool
		// key (defaultUser 1001) and item (user 1002): uid, gid, mode of the files; the links'
		// uids are the files'.
		keyUID, itemUID, gid, keyMode uint32
	}{
		{"gate on", true, nil, false, 1001, 1002, 0, 0400},
		{"gate off: no owner", false, nil, false, 0, 0, 0, 0400},
		{"gate on, fsGroup: owner kept, group fsGroup, read-only mask", true, int64p(2000), false, 1001, 1002, 2000, 0440},
		{"gate off, fsGroup", false, int64p(2000), false, 0, 0, 2000, 0440},
		{"gate on, fsGroup, preservePermissions: no walk", true, int64p(2000), true, 1001, 1002, 0, 0400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, _ := newKubelet(t, gates.Set{gates.AtomicWriteVolumeUserFields: tc.gate, gates.PreservePermissions: true})
			v := secretVol("sec", "s", 0400)
			v.Secret.DefaultUser = int64p(1001)
			v.Secret.Items = []corev1.KeyToPath{{Key: "key", Path: "key"}, {Key: "item", Path: "item", User: int64p(1002)}}
			p := &Pod{Pod: pod(tc.fsGroup, v), Sources: map[string]map[string]string{"secret/s": {"key": "k", "item": "i"}}}
			if tc.preserve {
				p.PreservePermissions = []string{"sec"}
			}
			tornDown(t, k, p)
			for round := 1; round <= 2; round++ {
				if round == 2 {
					// A restart with the gate flipped: the payload is unchanged, nothing is written.
					k.SetGates(gates.Set{gates.AtomicWriteVolumeUserFields: !tc.gate, gates.PreservePermissions: true})
				}
				r := k.SetUp(p)[0]
				if r.Err != nil {
					t.Fatal(r.Err)
				}
				data, err := os.Readlink(filepath.Join(r.Path, "..data"))
				if err != nil {
					t.Fatal(err)
				}
				for _, f := range []struct {
					name string
					uid  uint32
				}{{"key", tc.keyUID}, {"item", tc.itemUID}} {
					if uid, gid, mode := owner(t, filepath.Join(r.Path, data, f.name)); uid != f.uid || gid != tc.gid || mode != tc.keyMode {
						t.Errorf("round %d: %s uid %d gid %d mode %04o, want uid %d gid %d mode %04o", round, f.name, uid, gid, mode, f.uid, tc.gid, tc.keyMode)
					}
					if uid, _, _ := owner(t, filepath.Join(r.Path, f.name)); uid != f.uid {
						t.Errorf("round %d: link %s uid %d, want %d", round, f.name, uid, f.uid)
					}
				}
				for _, d := range []string{data, "..data"} {
					if uid, _, _ := owner(t, filepath.Join(r.Path, d)); uid != 0 {
						t.Errorf("round %d: %s uid %d, want 0", round, d, uid)
					}
				}
			}
		})
	}
}
