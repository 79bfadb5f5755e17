package scratch

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/volperm/volperm/hostfeature"
)

// Usable takes /dev/shm only as it takes any dir: a tmpfs, with room, reachable; for any
// target's roots also not nodev or noexec. Checked on mounts made for the test, with usableAt.
func TestUsableRefusesNodevNoexecAndOtherFilesystems(t *testing.T) {
	hostfeature.Need(t, hostfeature.Root) // mounting tmpfs needs root
	for _, tc := range []struct {
		name           string
		flags          uintptr
		data           string
		want, wantExec bool
	}{
		{"a tmpfs with room", 0, "size=2g", true, true},
		{"nodev", syscall.MS_NODEV, "size=2g", true, false},
		{"noexec", syscall.MS_NOEXEC, "size=2g", true, false},
		{"too small", 0, "size=16m", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "shm")
			if err := os.Mkdir(dir, 0o1777); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mount("tmpfs", dir, "tmpfs", tc.flags, tc.data); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = syscall.Unmount(dir, 0) })
			// The mount, t.TempDir and its parent (0700): opened so that Searchable passes.
			for _, d := range []string{dir, filepath.Dir(dir), filepath.Dir(filepath.Dir(dir))} {
				if err := os.Chmod(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if got := usableAt(dir, false) == dir; got != tc.want {
				t.Errorf("usable for the reference %v, want %v", got, tc.want)
			}
			if got := usableAt(dir, true) == dir; got != tc.wantExec {
				t.Errorf("usable for any target %v, want %v", got, tc.wantExec)
			}
		})
	}
	if d := t.TempDir(); usableAt(d, false) != "" && !isTmpfs(d) {
		t.Error("a dir that is not a tmpfs was taken")
	}
}

func isTmpfs(dir string) bool {
	var st syscall.Statfs_t
	return syscall.Statfs(dir, &st) == nil && st.Type == tmpfsMagic
}
