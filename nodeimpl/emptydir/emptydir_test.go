package emptydir

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/volperm/volperm/hostfeature"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

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

// podWith returns a pod whose one container requests the given hugepage sizes.
func podWith(fsGroup *int64, hugePageSizes ...string) *corev1.Pod {
	req := corev1.ResourceList{}
	for _, s := range hugePageSizes {
		req[corev1.ResourceName("hugepages-"+s)] = resource.MustParse("2Mi")
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{UID: "pod-uid"},
		Spec: corev1.PodSpec{
			SecurityContext: &corev1.PodSecurityContext{FSGroup: fsGroup},
			Containers:      []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: req}}},
		},
	}
}

// newVolume returns a Volume under a fresh temp dir, torn down when the test ends.
func newVolume(t *testing.T, medium corev1.StorageMedium, mode *int32, gate bool, pod *corev1.Pod) Volume {
	t.Helper()
	root := t.TempDir()
	v := Volume{
		Dir:      filepath.Join(root, "volumes", "kubernetes.io~empty-dir", "vol"),
		ReadyDir: filepath.Join(root, "plugins", "kubernetes.io~empty-dir", "vol"),
		Source:   corev1.EmptyDirVolumeSource{Medium: medium, Mode: mode},
		Pod:      pod,
		ModeGate: gate,
	}
	t.Cleanup(func() {
		if err := TearDown(v.Dir, v.ReadyDir); err != nil {
			t.Errorf("teardown: %v", err)
		}
	})
	return v
}

// stat returns the 4-digit mode and gid of path.
func stat(t *testing.T, path string) (mode, gid uint32) {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		t.Fatalf("lstat %s: %v", path, err)
	}
	return st.Mode & 07777, st.Gid
}

// mountedType returns the fs type mounted exactly at dir, "" if none.
func mountedType(t *testing.T, dir string) string {
	t.Helper()
	m, err := mountAt(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m == nil {
		return ""
	}
	return m.fsType
}

var media = []struct {
	medium    corev1.StorageMedium
	fsType    string // "" = no mount
	rootMode  uint32 // the root without a mode (docs/spec.md "emptyDir": GA behaviour)
	hugePages bool
}{
	{corev1.StorageMediumDefault, "", 0777, false},
	{corev1.StorageMediumMemory, "tmpfs", 01777, false},
	{corev1.StorageMediumHugePages, "hugetlbfs", 0755, true},
	{corev1.StorageMediumHugePagesPrefix + "2Mi", "hugetlbfs", 0755, true},
}

func TestSetUpModeEveryMedium(t *testing.T) {
	requireRoot(t)
	modes := []*int32{nil, int32p(0750), int32p(01777), int32p(0)}
	for _, m := range media {
		for _, mode := range modes {
			for _, gate := range []bool{true, false} {
				name := fmt.Sprintf("%s/mode=%s/gate=%v", mediumName(m.medium), modeName(mode), gate)
				t.Run(name, func(t *testing.T) {
					if m.hugePages {
						requireHugetlbfs(t)
					}
					v := newVolume(t, m.medium, mode, gate, podWith(nil, "2Mi"))
					if err := SetUp(v); err != nil {
						t.Fatalf("SetUp: %v", err)
					}
					want := m.rootMode
					if gate && mode != nil {
						want = uint32(*mode) // the pod sees exactly the mode on every medium
					}
					if got, _ := stat(t, v.Dir); got != want {
						t.Errorf("root mode %04o, want %04o", got, want)
					}
					if got := mountedType(t, v.Dir); got != m.fsType {
						t.Errorf("mounted %q, want %q", got, m.fsType)
					}
					if !ready(v.ReadyDir) {
						t.Errorf("no ready marker in %s", v.ReadyDir)
					}
				})
			}
		}
	}
}

func mediumName(m corev1.StorageMedium) string {
	if m == "" {
		return "default"
	}
	return string(m)
}

func modeName(m *int32) string {
	if m == nil {
		return "nil"
	}
	return fmt.Sprintf("%04o", *m)
}

// The umask must not strip bits (KEP-5502 "Implementation": MkdirAll, then chmod).
func TestSetUpIgnoresUmask(t *testing.T) {
	requireRoot(t)
	old := syscall.Umask(077)
	defer syscall.Umask(old)
	for _, tc := range []struct {
		mode *int32
		want uint32
	}{
		{nil, 0777},
		{int32p(0750), 0750},
		{int32p(01777), 01777},
	} {
		t.Run(modeName(tc.mode), func(t *testing.T) {
			v := newVolume(t, corev1.StorageMediumDefault, tc.mode, true, podWith(nil))
			if err := SetUp(v); err != nil {
				t.Fatal(err)
			}
			if got, _ := stat(t, v.Dir); got != tc.want {
				t.Errorf("root mode %04o, want %04o", got, tc.want)
			}
		})
	}
}

// A second SetUp of a ready volume does nothing (docs/spec.md "emptyDir"): a container's chmod
// stays, and neither the mode nor the walk comes back.
func TestSecondSetUpIsNoOp(t *testing.T) {
	requireRoot(t)
	for _, m := range media {
		t.Run(mediumName(m.medium), func(t *testing.T) {
			if m.hugePages {
				requireHugetlbfs(t)
			}
			v := newVolume(t, m.medium, int32p(0750), true, podWith(int64p(2000), "2Mi"))
			if err := SetUp(v); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(v.Dir, 0700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(v.Dir, 0, 0); err != nil {
				t.Fatal(err)
			}
			if err := SetUp(v); err != nil {
				t.Fatalf("second SetUp: %v", err)
			}
			if mode, gid := stat(t, v.Dir); mode != 0700 || gid != 0 {
				t.Errorf("after second SetUp: %04o gid %d, want 0700 gid 0", mode, gid)
			}
			if n := mountCount(t, v.Dir); m.fsType != "" && n != 1 {
				t.Errorf("%d mounts at %s, want 1", n, v.Dir)
			}
		})
	}
}

func mountCount(t *testing.T, dir string) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 4 && f[4] == dir {
			n++
		}
	}
	return n
}

// A ready marker whose directory was removed is stale: the volume is made again (v1.37
// SetUpAt).
func TestStaleReadyMarker(t *testing.T) {
	requireRoot(t)
	v := newVolume(t, corev1.StorageMediumDefault, int32p(0750), true, podWith(nil))
	if err := SetUp(v); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(v.Dir); err != nil {
		t.Fatal(err)
	}
	if err := SetUp(v); err != nil {
		t.Fatal(err)
	}
	if got, _ := stat(t, v.Dir); got != 0750 {
		t.Errorf("root mode %04o, want 0750", got)
	}
}

// fsGroup: the walk runs after the mode (docs/spec.md "emptyDir"): 0750 + 2000 -> 2770 gid 2000.
func TestFSGroupAfterMode(t *testing.T) {
	requireRoot(t)
	for _, m := range media {
		for _, tc := range []struct {
			mode *int32
			gate bool
			want uint32
		}{
			{int32p(0750), true, 02770},
			{int32p(01777), true, 03777},
			{int32p(0), true, 02770},
			{int32p(0750), false, m.rootMode | 02770},
			{nil, true, m.rootMode | 02770},
		} {
			t.Run(fmt.Sprintf("%s/%s/gate=%v", mediumName(m.medium), modeName(tc.mode), tc.gate), func(t *testing.T) {
				if m.hugePages {
					requireHugetlbfs(t)
				}
				v := newVolume(t, m.medium, tc.mode, tc.gate, podWith(int64p(2000), "2Mi"))
				if err := SetUp(v); err != nil {
					t.Fatal(err)
				}
				if mode, gid := stat(t, v.Dir); mode != tc.want || gid != 2000 {
					t.Errorf("root %04o gid %d, want %04o gid 2000", mode, gid, tc.want)
				}
			})
		}
	}
}

func TestTmpfsSizeLimit(t *testing.T) {
	requireRoot(t)
	for _, tc := range []struct {
		limit    *resource.Quantity
		wantOpts string // in mountinfo's super options
		notOpts  string
	}{
		{ptr(resource.MustParse("1Mi")), "size=1024k", ""},
		{nil, "", "size=1024k"},
	} {
		t.Run(fmt.Sprint(tc.limit), func(t *testing.T) {
			v := newVolume(t, corev1.StorageMediumMemory, nil, true, podWith(nil))
			v.Source.SizeLimit = tc.limit
			if err := SetUp(v); err != nil {
				t.Fatal(err)
			}
			opts := superOptions(t, v.Dir)
			if !strings.Contains(opts, tc.wantOpts) || (tc.notOpts != "" && strings.Contains(opts, tc.notOpts)) {
				t.Errorf("tmpfs options %q: want %q, not %q", opts, tc.wantOpts, tc.notOpts)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func superOptions(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && f[4] == dir {
			return f[len(f)-1]
		}
	}
	t.Fatalf("no mount at %s", dir)
	return ""
}

// getPageSizeMountOption's outcomes and texts (v1.37 emptydir).
func TestHugePagesPageSize(t *testing.T) {
	requireRoot(t)
	hostfeature.Need(t, hostfeature.Hugetlbfs)
	for _, tc := range []struct {
		medium   corev1.StorageMedium
		requests []string
		wantOpt  string
		wantErr  string
	}{
		{"HugePages", []string{"2Mi"}, "pagesize=2M", ""},
		{"HugePages-2Mi", []string{"2Mi", "1Gi"}, "pagesize=2M", ""},
		{"HugePages-1Gi", []string{"1Gi"}, "pagesize=1024M", ""},
		{"HugePages", nil, "", "medium HugePages: hugePages storage requested, but there is no resource request for huge pages"},
		{"HugePages", []string{"2Mi", "1Gi"}, "", "medium: HugePages can't be used if container requests multiple huge page sizes"},
		{"HugePages-1Gi", []string{"2Mi"}, "", "medium HugePages-1Gi: hugePages storage requested, but there is no resource request for huge pages"},
		{"Foo", nil, "", `unknown storage medium "Foo"`},
	} {
		t.Run(fmt.Sprintf("%s/%v", tc.medium, tc.requests), func(t *testing.T) {
			v := newVolume(t, tc.medium, nil, true, podWith(nil, tc.requests...))
			if size, err := PageSize(tc.medium, v.Pod); err == nil {
				// Only a size the kernel offers can be mounted (pagesize=1G on a 2M-only host: EINVAL).
				hostfeature.Need(t, hostfeature.HugePages(size))
			}
			err := SetUp(v)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("SetUp error %v, want %q", err, tc.wantErr)
				}
				if ready(v.ReadyDir) {
					t.Errorf("failed SetUp left a ready marker")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if opts := superOptions(t, v.Dir); !strings.Contains(opts, tc.wantOpt) {
				t.Errorf("hugetlbfs options %q, want %q", opts, tc.wantOpt)
			}
		})
	}
}

// Pod-level hugepage requests count too (v1.37 getPageSizeMountOption, PodLevelResources on).
func TestHugePagesPodLevelRequest(t *testing.T) {
	requireRoot(t)
	requireHugetlbfs(t)
	pod := podWith(nil)
	pod.Spec.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{"hugepages-2Mi": resource.MustParse("2Mi")}}
	v := newVolume(t, "HugePages", nil, true, pod)
	if err := SetUp(v); err != nil {
		t.Fatal(err)
	}
	if got := mountedType(t, v.Dir); got != "hugetlbfs" {
		t.Errorf("mounted %q, want hugetlbfs", got)
	}
}

// A hugetlbfs already mounted (no ready marker) must have the medium's page size (v1.37
// setupHugepages).
func TestHugePagesMountedSizeDiffers(t *testing.T) {
	requireRoot(t)
	requireHugetlbfs(t)
	v := newVolume(t, "HugePages-2Mi", nil, true, podWith(nil, "2Mi", "1Gi"))
	if err := SetUp(v); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(v.ReadyDir); err != nil {
		t.Fatal(err)
	}
	v.Source.Medium = "HugePages-1Gi"
	want := fmt.Sprintf("pod pod-uid: mounted dir %s pagesize '2Mi' and requested medium size '1Gi' differ", v.Dir)
	if err := SetUp(v); err == nil || err.Error() != want {
		t.Fatalf("SetUp error %v, want %q", err, want)
	}
}

// TearDown unmounts and removes everything; a second TearDown is no error.
func TestTearDown(t *testing.T) {
	requireRoot(t)
	for _, m := range media {
		t.Run(mediumName(m.medium), func(t *testing.T) {
			if m.hugePages {
				requireHugetlbfs(t)
			}
			v := newVolume(t, m.medium, int32p(0750), true, podWith(nil, "2Mi"))
			if err := SetUp(v); err != nil {
				t.Fatal(err)
			}
			// hugetlbfs takes no write(2): an empty file and a dir are enough.
			f, err := os.Create(filepath.Join(v.Dir, "f"))
			if err != nil {
				t.Fatal(err)
			}
			f.Close()
			if err := os.Mkdir(filepath.Join(v.Dir, "d"), 0755); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 2; i++ {
				if err := TearDown(v.Dir, v.ReadyDir); err != nil {
					t.Fatalf("TearDown #%d: %v", i+1, err)
				}
			}
			if n := mountCount(t, v.Dir); n != 0 {
				t.Errorf("%d mounts left at %s", n, v.Dir)
			}
			for _, p := range []string{v.Dir, v.ReadyDir} {
				if _, err := os.Lstat(p); !os.IsNotExist(err) {
					t.Errorf("%s left behind (lstat: %v)", p, err)
				}
			}
		})
	}
}
