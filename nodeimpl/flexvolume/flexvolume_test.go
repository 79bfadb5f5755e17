package flexvolume

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/volperm/volperm/hostfeature"

	corev1 "k8s.io/api/core/v1"
)

// The reference kubelet runs at umask 022 (docs/spec.md "Node: volume set-up").
func TestMain(m *testing.M) {
	syscall.Umask(022)
	os.Exit(m.Run())
}

func requireRoot(t *testing.T) {
	t.Helper()
	hostfeature.Need(t, hostfeature.Root) // needs root: the fixture driver chowns
}

func ptr(v int64) *int64 { return &v }

func policy(p corev1.PodFSGroupChangePolicy) *corev1.PodFSGroupChangePolicy { return &p }

var fixture = &corev1.FlexVolumeSource{Driver: FixtureDriver}

// volumeDir is where the kubelet would put the volume: .../volumes/volperm~fixture/NAME.
func volumeDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "volumes", "volperm~fixture", "data")
	t.Cleanup(func() {
		if err := TearDown(dir); err != nil {
			t.Errorf("tear down: %v", err)
		}
	})
	return dir
}

// tree lists "path type mode uid:gid [-> link]" for dir and everything below it, lstat.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		st := info.Sys().(*syscall.Stat_t)
		kind := "f"
		switch {
		case info.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			kind = "l->" + target
		case info.IsDir():
			kind = "d"
		}
		out = append(out, fmt.Sprintf("%s %s %04o %d:%d", rel, kind, st.Mode&07777, st.Uid, st.Gid))
		return nil
	})
	if err != nil {
		t.Fatalf("list %s: %v", dir, err)
	}
	sort.Strings(out)
	return out
}

func check(t *testing.T, what string, want, got []string) {
	t.Helper()
	if !reflect.DeepEqual(want, got) {
		t.Errorf("%s:\nwant %s\ngot  %s", what, strings.Join(want, "\n     "), strings.Join(got, "\n     "))
	}
}

// seed 003: the blog's six files, owned by root:2000.
var blogStorage = []StorageFile{
	{Path: "test1", Mode: 0644, GID: 2000},
	{Path: "test2", Mode: 0000, GID: 2000},
	{Path: "test3", Mode: 0410, GID: 2000},
	{Path: "test4", Mode: 0111, GID: 2000},
	{Path: "test5", Mode: 0440, GID: 2000},
	{Path: "test6", Mode: 0660, GID: 2000},
}

var mixedStorage = []StorageFile{
	{Path: "sub/deeper/file", Mode: 0600, UID: 1000, GID: 1000}, // listed before its parents
	{Path: "sub", Dir: true, Mode: 0700, UID: 1000, GID: 1000},
	{Path: "suid", Mode: 04750, UID: 1000, GID: 1000},
	{Path: "link", Symlink: "suid", UID: 1000, GID: 1000},
	{Path: "sticky", Dir: true, Mode: 01777},
}

func TestSetUpFirst(t *testing.T) {
	requireRoot(t)
	tests := []struct {
		name    string
		src     *corev1.FlexVolumeSource
		storage []StorageFile
		fsGroup *int64
		want    []string
	}{
		{
			name:    "no fsGroup: storage exactly, parents first, unlisted parent 0755",
			src:     fixture,
			storage: mixedStorage,
			want: []string{
				". d 0750 0:0",
				"link l->suid 0777 1000:1000",
				"sticky d 1777 0:0",
				"sub d 0700 1000:1000",
				"sub/deeper d 0755 0:0",
				"sub/deeper/file f 0600 1000:1000",
				"suid f 4750 1000:1000",
			},
		},
		{
			name:    "fsGroup: populated then walked with the rw mask",
			src:     fixture,
			storage: mixedStorage,
			fsGroup: ptr(2000),
			want: []string{
				". d 2770 0:2000",
				"link l->suid 0777 1000:2000",
				"sticky d 3777 0:2000",
				"sub d 2770 1000:2000",
				"sub/deeper d 2775 0:2000",
				"sub/deeper/file f 0660 1000:2000",
				"suid f 4770 1000:2000",
			},
		},
		{
			name:    "readOnly: no walk",
			src:     &corev1.FlexVolumeSource{Driver: FixtureDriver, ReadOnly: true},
			storage: mixedStorage,
			fsGroup: ptr(2000),
			want: []string{
				". d 0750 0:0",
				"link l->suid 0777 1000:1000",
				"sticky d 1777 0:0",
				"sub d 0700 1000:1000",
				"sub/deeper d 0755 0:0",
				"sub/deeper/file f 0600 1000:1000",
				"suid f 4750 1000:1000",
			},
		},
		{
			name:    "blog: first SetUp ORs the mask",
			src:     fixture,
			storage: blogStorage,
			fsGroup: ptr(2000),
			want: []string{
				". d 2770 0:2000",
				"test1 f 0664 0:2000",
				"test2 f 0660 0:2000",
				"test3 f 0670 0:2000",
				"test4 f 0771 0:2000",
				"test5 f 0660 0:2000",
				"test6 f 0660 0:2000",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := volumeDir(t)
			if err := SetUp(dir, tc.src, tc.storage, tc.fsGroup, nil); err != nil {
				t.Fatal(err)
			}
			check(t, "volume", tc.want, tree(t, dir))
			if _, err := os.Stat(dir + MarkerSuffix); err != nil {
				t.Errorf("marker beside the volume: %v", err)
			}
		})
	}
}

// seed 003: a container makes files read-only; the next SetUp (kubelet restart) walks again
// and makes them group-writable, without re-populating the storage. OnRootMismatch skips that
// walk when the root still looks done; readOnly never walks.
func TestSetUpAgain(t *testing.T) {
	requireRoot(t)
	blogBefore := map[string]os.FileMode{"test1": 0644, "test2": 0000, "test3": 0410, "test4": 0111, "test5": 0440, "test6": 0660}
	tests := []struct {
		name   string
		src    *corev1.FlexVolumeSource
		policy *corev1.PodFSGroupChangePolicy
		chmods map[string]os.FileMode
		want   []string
	}{
		{
			name:   "blog restart: Always",
			src:    fixture,
			policy: policy(corev1.FSGroupChangeAlways),
			chmods: blogBefore,
			want: []string{
				". d 2770 0:2000",
				"test1 f 0664 0:2000",
				"test2 f 0660 0:2000",
				"test3 f 0670 0:2000",
				"test4 f 0771 0:2000",
				"test5 f 0660 0:2000",
				"test6 f 0660 0:2000",
			},
		},
		{
			name:   "restart with OnRootMismatch: root still done, no walk",
			src:    fixture,
			policy: policy(corev1.FSGroupChangeOnRootMismatch),
			chmods: map[string]os.FileMode{"test1": 0400},
			want: []string{
				". d 2770 0:2000",
				"test1 f 0400 0:2000",
				"test2 f 0660 0:2000",
				"test3 f 0670 0:2000",
				"test4 f 0771 0:2000",
				"test5 f 0660 0:2000",
				"test6 f 0660 0:2000",
			},
		},
		{
			name:   "restart with OnRootMismatch: root changed, walk",
			src:    fixture,
			policy: policy(corev1.FSGroupChangeOnRootMismatch),
			chmods: map[string]os.FileMode{"test1": 0400, ".": 0750},
			want: []string{
				". d 2770 0:2000",
				"test1 f 0660 0:2000",
				"test2 f 0660 0:2000",
				"test3 f 0670 0:2000",
				"test4 f 0771 0:2000",
				"test5 f 0660 0:2000",
				"test6 f 0660 0:2000",
			},
		},
		{
			name:   "readOnly: never walked",
			src:    &corev1.FlexVolumeSource{Driver: FixtureDriver, ReadOnly: true},
			chmods: map[string]os.FileMode{"test6": 0400},
			want: []string{
				". d 0750 0:0",
				"test1 f 0644 0:2000",
				"test2 f 0000 0:2000",
				"test3 f 0410 0:2000",
				"test4 f 0111 0:2000",
				"test5 f 0440 0:2000",
				"test6 f 0400 0:2000",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := volumeDir(t)
			if err := SetUp(dir, tc.src, blogStorage, ptr(2000), tc.policy); err != nil {
				t.Fatal(err)
			}
			for p, m := range tc.chmods {
				if err := os.Chmod(filepath.Join(dir, p), m); err != nil {
					t.Fatal(err)
				}
			}
			// A file the storage listed is gone: the second SetUp must not re-populate.
			if err := os.Remove(filepath.Join(dir, "test5")); err != nil {
				t.Fatal(err)
			}
			if err := SetUp(dir, tc.src, blogStorage, ptr(2000), tc.policy); err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, w := range tc.want {
				if !strings.HasPrefix(w, "test5 ") {
					want = append(want, w)
				}
			}
			check(t, "after the second SetUp", want, tree(t, dir))
		})
	}
}

func TestSetUpErrors(t *testing.T) {
	requireRoot(t)
	tests := []struct {
		name    string
		src     *corev1.FlexVolumeSource
		storage []StorageFile
		want    string
	}{
		{"driver not installed", &corev1.FlexVolumeSource{Driver: "example/nfs"}, nil, `flexVolume driver "example/nfs" is not installed on this node`},
		{"storage escapes", fixture, []StorageFile{{Path: "../x", Mode: 0644}}, `flexVolume volperm/fixture: mount: storage path "../x" must be relative and inside the volume`},
		{"storage absolute", fixture, []StorageFile{{Path: "/etc/x", Mode: 0644}}, `flexVolume volperm/fixture: mount: storage path "/etc/x" must be relative and inside the volume`},
		{"storage through a symlink", fixture, []StorageFile{{Path: "l", Symlink: "/"}, {Path: "l/x", Mode: 0644}}, "is not a directory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := volumeDir(t)
			err := SetUp(dir, tc.src, tc.storage, ptr(2000), nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
			// Nothing is left: no volume dir (upstream removes it), no marker.
			for _, p := range []string{dir, dir + MarkerSuffix} {
				if _, err := os.Lstat(p); !os.IsNotExist(err) {
					t.Errorf("%s left behind (%v)", p, err)
				}
			}
		})
	}
}

func TestTearDown(t *testing.T) {
	requireRoot(t)
	dir := volumeDir(t)
	if err := SetUp(dir, fixture, blogStorage, ptr(2000), nil); err != nil {
		t.Fatal(err)
	}
	if err := TearDown(dir); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir, dir + MarkerSuffix} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s left behind (%v)", p, err)
		}
	}
	// After a teardown the next SetUp is a first one again: the storage is back.
	if err := SetUp(dir, fixture, blogStorage, nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "test1")); err != nil {
		t.Errorf("storage not populated after a teardown: %v", err)
	}
}

// Populate is the first SetUp's driver part alone: no marker, no walk.
func TestPopulate(t *testing.T) {
	requireRoot(t)
	dir := volumeDir(t)
	if err := Populate(dir, mixedStorage); err != nil {
		t.Fatal(err)
	}
	check(t, "volume", []string{
		". d 0750 0:0",
		"link l->suid 0777 1000:1000",
		"sticky d 1777 0:0",
		"sub d 0700 1000:1000",
		"sub/deeper d 0755 0:0",
		"sub/deeper/file f 0600 1000:1000",
		"suid f 4750 1000:1000",
	}, tree(t, dir))
	if _, err := os.Lstat(dir + MarkerSuffix); !os.IsNotExist(err) {
		t.Errorf("Populate wrote the SetUp marker (%v)", err)
	}
}

// The storage entry "." is the volume's own root: not created, given its owner and mode (a
// filesystem whose root already has them, kubernetes issue 69699).
func TestPopulateRoot(t *testing.T) {
	requireRoot(t)
	dir := volumeDir(t)
	if err := Populate(dir, []StorageFile{{Path: ".", Dir: true, Mode: 02770, GID: 2000}, {Path: "file", Mode: 0600}}); err != nil {
		t.Fatal(err)
	}
	check(t, "volume", []string{". d 2770 0:2000", "file f 0600 0:0"}, tree(t, dir))
}
