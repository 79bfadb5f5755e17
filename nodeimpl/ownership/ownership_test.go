package ownership

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/volperm/volperm/hostfeature"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
)

const fsGroup = int64(2000)

func requireRoot(t *testing.T) {
	t.Helper()
	hostfeature.Need(t, hostfeature.Root) // needs root: the walk chowns
}

// unixMode turns 4-digit Unix permission bits into an os.FileMode.
func unixMode(m uint32) os.FileMode {
	fm := os.FileMode(m & 0777)
	if m&04000 != 0 {
		fm |= os.ModeSetuid
	}
	if m&02000 != 0 {
		fm |= os.ModeSetgid
	}
	if m&01000 != 0 {
		fm |= os.ModeSticky
	}
	return fm
}

// lstat returns the 4-digit mode, uid and gid of path without following a symlink.
func lstat(t *testing.T, path string) (mode uint32, uid, gid uint32) {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		t.Fatalf("lstat %s: %v", path, err)
	}
	return st.Mode & 07777, st.Uid, st.Gid
}

func mkfile(t *testing.T, path string, mode uint32, uid int) {
	t.Helper()
	if err := os.WriteFile(path, nil, 0600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path, uid, 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, unixMode(mode)); err != nil {
		t.Fatal(err)
	}
}

func mkdir(t *testing.T, path string, mode uint32) {
	t.Helper()
	if err := os.Mkdir(path, 0700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, unixMode(mode)); err != nil {
		t.Fatal(err)
	}
}

func policy(p corev1.PodFSGroupChangePolicy) *corev1.PodFSGroupChangePolicy { return &p }

func ptr(v int64) *int64 { return &v }

// The blog's table (seed 003) for files, plus the read-only mask, directories and special bits.
func TestApplyModes(t *testing.T) {
	requireRoot(t)
	tests := []struct {
		name     string
		dir      bool
		mode     uint32
		readOnly bool
		want     uint32
	}{
		{"blog test1 0644", false, 0644, false, 0664},
		{"blog test2 0000", false, 0000, false, 0660},
		{"blog test3 0410", false, 0410, false, 0670},
		{"blog test4 0111", false, 0111, false, 0771},
		{"blog test5 0440", false, 0440, false, 0660},
		{"blog test6 0660", false, 0660, false, 0660},
		{"ro 0644", false, 0644, true, 0644},
		{"ro 0000", false, 0000, true, 0440},
		{"ro 0410", false, 0410, true, 0450},
		{"ro 0111", false, 0111, true, 0551},
		{"ro 0440", false, 0440, true, 0440},
		{"ro 0660", false, 0660, true, 0660},
		{"setuid file keeps setuid across the chown", false, 04755, false, 04775},
		{"sticky file", false, 01600, false, 01660},
		{"dir 0700", true, 0700, false, 02770},
		{"dir 0000", true, 0000, false, 02770},
		{"dir 0755", true, 0755, false, 02775},
		{"dir 1777 keeps sticky", true, 01777, false, 03777},
		{"ro dir 0700", true, 0700, true, 02750},
		{"ro dir 0000", true, 0000, true, 02550},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			p := filepath.Join(root, "entry")
			if tc.dir {
				mkdir(t, p, tc.mode)
			} else {
				mkfile(t, p, tc.mode, 1234)
			}
			if err := Apply(root, ptr(fsGroup), tc.readOnly, nil); err != nil {
				t.Fatal(err)
			}
			mode, uid, gid := lstat(t, p)
			if mode != tc.want || gid != uint32(fsGroup) {
				t.Errorf("got %04o gid %d, want %04o gid %d", mode, gid, tc.want, fsGroup)
			}
			// v1.37 changeFilePermission: Lchown(-1, fsGroup) keeps the owner.
			if wantUID := map[bool]uint32{true: 0, false: 1234}[tc.dir]; uid != wantUID {
				t.Errorf("uid %d, want %d", uid, wantUID)
			}
		})
	}
}

// The root itself is walked (last) and gets setgid, gid and the dir mask.
func TestApplyRoot(t *testing.T) {
	requireRoot(t)
	for _, tc := range []struct {
		readOnly bool
		mode     uint32
		want     uint32
	}{
		{false, 0750, 02770},
		{true, 0750, 02750},
		{false, 0777, 02777},
	} {
		root := t.TempDir()
		if err := os.Chmod(root, unixMode(tc.mode)); err != nil {
			t.Fatal(err)
		}
		if err := Apply(root, ptr(fsGroup), tc.readOnly, nil); err != nil {
			t.Fatal(err)
		}
		if mode, _, gid := lstat(t, root); mode != tc.want || gid != uint32(fsGroup) {
			t.Errorf("root %04o readOnly=%v: got %04o gid %d, want %04o gid %d", tc.mode, tc.readOnly, mode, gid, tc.want, fsGroup)
		}
	}
}

// Symlinks are lchown'ed but never chmod'ed and never followed: neither the link nor its
// target (outside the volume) changes mode, and the target keeps its gid.
func TestApplySymlinks(t *testing.T) {
	requireRoot(t)
	outside := t.TempDir()
	target := filepath.Join(outside, "target")
	mkfile(t, target, 0600, 0)
	targetDir := filepath.Join(outside, "dir")
	mkdir(t, targetDir, 0700)
	mkfile(t, filepath.Join(targetDir, "inner"), 0600, 0)

	root := t.TempDir()
	for name, to := range map[string]string{"file-link": target, "dir-link": targetDir, "dangling": "/nonexistent/x"} {
		if err := os.Symlink(to, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := Apply(root, ptr(fsGroup), false, nil); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"file-link", "dir-link", "dangling"} {
		if mode, _, gid := lstat(t, filepath.Join(root, name)); mode != 0777 || gid != uint32(fsGroup) {
			t.Errorf("link %s: got %04o gid %d, want 0777 gid %d", name, mode, gid, fsGroup)
		}
	}
	for path, want := range map[string]uint32{target: 0600, targetDir: 0700, filepath.Join(targetDir, "inner"): 0600} {
		if mode, _, gid := lstat(t, path); mode != want || gid != 0 {
			t.Errorf("outside %s: got %04o gid %d, want %04o gid 0 (untouched)", path, mode, gid, want)
		}
	}
}

func TestApplyNilFSGroup(t *testing.T) {
	requireRoot(t)
	root := t.TempDir()
	mkfile(t, filepath.Join(root, "f"), 0600, 0)
	if err := Apply(root, nil, false, policy(corev1.FSGroupChangeAlways)); err != nil {
		t.Fatal(err)
	}
	if mode, _, gid := lstat(t, filepath.Join(root, "f")); mode != 0600 || gid != 0 {
		t.Errorf("fsGroup nil changed the file: %04o gid %d", mode, gid)
	}
}

// v1.37 skipPermissionChange / requiresPermissionChange.
func TestApplyOnRootMismatch(t *testing.T) {
	requireRoot(t)
	tests := []struct {
		name     string
		rootMode uint32
		rootGID  int
		readOnly bool
		policy   *corev1.PodFSGroupChangePolicy
		skip     bool
	}{
		{"root done: skip", 02770, 2000, false, policy(corev1.FSGroupChangeOnRootMismatch), true},
		{"root superset: skip", 02775, 2000, false, policy(corev1.FSGroupChangeOnRootMismatch), true},
		{"ro root done: skip", 02550, 2000, true, policy(corev1.FSGroupChangeOnRootMismatch), true},
		{"gid differs: walk", 02770, 0, false, policy(corev1.FSGroupChangeOnRootMismatch), false},
		{"no setgid: walk", 0770, 2000, false, policy(corev1.FSGroupChangeOnRootMismatch), false},
		{"group not writable: walk", 02750, 2000, false, policy(corev1.FSGroupChangeOnRootMismatch), false},
		{"owner lacks exec: walk", 02670, 2000, false, policy(corev1.FSGroupChangeOnRootMismatch), false},
		{"ro root lacks group read: walk", 02510, 2000, true, policy(corev1.FSGroupChangeOnRootMismatch), false},
		{"Always: walk", 02770, 2000, false, policy(corev1.FSGroupChangeAlways), false},
		{"nil policy: walk", 02770, 2000, false, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			child := filepath.Join(root, "child")
			mkfile(t, child, 0600, 0)
			if err := os.Chown(root, 0, tc.rootGID); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(root, unixMode(tc.rootMode)); err != nil {
				t.Fatal(err)
			}
			if err := Apply(root, ptr(fsGroup), tc.readOnly, tc.policy); err != nil {
				t.Fatal(err)
			}
			mode, _, gid := lstat(t, child)
			walked := gid == uint32(fsGroup) && mode != 0600
			if walked == tc.skip {
				t.Errorf("child %04o gid %d: walked=%v, want skip=%v", mode, gid, walked, tc.skip)
			}
		})
	}
}

// A root that is not a directory never counts as done, and the walk of a file changes it.
func TestApplyOnRootMismatchFileRoot(t *testing.T) {
	requireRoot(t)
	f := filepath.Join(t.TempDir(), "f")
	mkfile(t, f, 0600, 0)
	if err := os.Chown(f, 0, int(fsGroup)); err != nil {
		t.Fatal(err)
	}
	if err := Apply(f, ptr(fsGroup), false, policy(corev1.FSGroupChangeOnRootMismatch)); err != nil {
		t.Fatal(err)
	}
	if mode, _, _ := lstat(t, f); mode != 0660 {
		t.Errorf("file root %04o, want 0660", mode)
	}
}

// v1.37 walkDeep: every entry is visited once, children before their directory, root last,
// symlinked directories not entered.
func TestWalkDeepOrder(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"a", "a/b", "a/b/c", "d"} {
		if err := os.Mkdir(filepath.Join(root, d), 0755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"a/f", "a/b/c/g", "h"} {
		if err := os.WriteFile(filepath.Join(root, f), nil, 0644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("a", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	var order []string
	if err := walkDeep(root, func(p string, _ os.FileInfo) { order = append(order, p) }); err != nil {
		t.Fatal(err)
	}
	if len(order) != 9 {
		t.Fatalf("visited %d entries, want 9: %v", len(order), order)
	}
	pos := map[string]int{}
	for i, p := range order {
		if _, dup := pos[p]; dup {
			t.Errorf("visited %s twice", p)
		}
		pos[p] = i
	}
	if order[len(order)-1] != root {
		t.Errorf("root visited at %d, want last: %v", pos[root], order)
	}
	for p, i := range pos {
		if p == root {
			continue
		}
		if parent := filepath.Dir(p); pos[parent] < i {
			t.Errorf("%s visited after its parent %s", p, parent)
		}
		if strings.HasPrefix(p, filepath.Join(root, "link")+"/") {
			t.Errorf("walk followed the symlink into %s", p)
		}
	}
}

// v1.37 changeFilePermission only logs failed lchown/chmod: the walk goes on and succeeds.
// An immutable file (EPERM even for root) stands in for any entry the kubelet cannot change.
func TestApplyContinuesPastFailures(t *testing.T) {
	requireRoot(t)
	root := t.TempDir()
	stuck := filepath.Join(root, "stuck")
	mkfile(t, stuck, 0600, 0)
	mkfile(t, filepath.Join(root, "other"), 0600, 0)
	setImmutable(t, stuck, true)
	t.Cleanup(func() { setImmutable(t, stuck, false) })

	if err := Apply(root, ptr(fsGroup), false, nil); err != nil {
		t.Fatalf("walk stopped on an entry it cannot change: %v", err)
	}
	if mode, _, gid := lstat(t, stuck); mode != 0600 || gid != 0 {
		t.Errorf("immutable file changed: %04o gid %d", mode, gid)
	}
	if mode, _, gid := lstat(t, filepath.Join(root, "other")); mode != 0660 || gid != uint32(fsGroup) {
		t.Errorf("other file %04o gid %d, want 0660 gid %d", mode, gid, fsGroup)
	}
	if mode, _, gid := lstat(t, root); mode&02000 == 0 || gid != uint32(fsGroup) {
		t.Errorf("root %04o gid %d: not walked after the failure", mode, gid)
	}
}

func TestApplyMissingRoot(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	err := Apply(missing, ptr(fsGroup), false, nil)
	if err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("got %v, want an error naming %s", err, missing)
	}
}

// fsImmutableFL is FS_IMMUTABLE_FL of linux/fs.h (x/sys/unix does not export it).
const fsImmutableFL = 0x10

func setImmutable(t *testing.T, path string, on bool) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	flags, err := unix.IoctlGetUint32(int(f.Fd()), unix.FS_IOC_GETFLAGS)
	if err != nil {
		t.Skipf("filesystem has no inode flags: %v", err)
	}
	if on {
		flags |= fsImmutableFL
	} else {
		flags &^= fsImmutableFL
	}
	if err := unix.IoctlSetPointerInt(int(f.Fd()), unix.FS_IOC_SETFLAGS, int(flags)); err != nil {
		if on {
			t.Skipf("cannot set the immutable flag: %v", err)
		}
		t.Errorf("clear immutable flag on %s: %v", path, err)
	}
}
