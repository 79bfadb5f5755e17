// Package mountinfo reads /proc/self/mountinfo: which mounts exist at or below a directory. It
// sees bind mounts, which v1.37's IsLikelyNotMountPoint (a device comparison) does not. It also
// makes a mount point and unmounts what is below a directory, for those who bind and tear down.
package mountinfo

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Mount is one line of /proc/self/mountinfo.
type Mount struct {
	Point  string // the mount point, unescaped
	FSType string
	// SuperOptions are the per-superblock options (tmpfs size=, hugetlbfs pagesize=, ...).
	SuperOptions string
}

// Read lists every mount of this process's namespace, in mount order (a later entry on the
// same point is on top of an earlier one).
func Read() ([]Mount, error) { return ReadFile("/proc/self/mountinfo") }

// ReadFile is Read of another mountinfo file (/proc/thread-self/mountinfo: the calling thread's
// namespace).
func ReadFile(path string) ([]Mount, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("list mounts: %w", err)
	}
	defer f.Close()
	var out []Mount
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTS"
		fields := strings.Fields(sc.Text())
		sep := -1
		for i, fl := range fields {
			if fl == "-" && i >= 6 {
				sep = i
				break
			}
		}
		if sep < 0 || len(fields) < sep+4 {
			continue
		}
		out = append(out, Mount{Point: unescape(fields[4]), FSType: fields[sep+1], SuperOptions: fields[sep+3]})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return out, nil
}

// At returns the topmost mount whose mount point is dir, or nil. A dir the kernel says is no
// mount's root (statx STATX_ATTR_MOUNT_ROOT, Linux 5.8) has none, and the mount table is not
// read: most volumes are plain directories, and the table of a busy node (a batch's case roots,
// kind nodes, containers) is thousands of lines the kernel formats on every read (in the
// container target 3 in 4 of volperm's CPU went to reading it; issue 34). Where the kernel does
// not say, or dir cannot be stat'ed, the table says. A mount hidden under a later mount on a
// parent is not seen, as the kubelet's IsLikelyNotMountPoint does not see it.
func At(dir string) (*Mount, error) {
	if notMountRoot(dir) {
		return nil, nil
	}
	if kernelAnswers() {
		if m, ok := atKernel(dir); ok {
			return m, nil
		}
	}
	mounts, err := Read()
	if err != nil {
		return nil, err
	}
	var found *Mount
	for i := range mounts {
		if mounts[i].Point == dir {
			found = &mounts[i]
		}
	}
	return found, nil
}

// notMountRoot reports whether the kernel says dir is not the root of a mount.
func notMountRoot(dir string) bool {
	var st unix.Statx_t
	if unix.Statx(unix.AT_FDCWD, dir, unix.AT_SYMLINK_NOFOLLOW|unix.AT_NO_AUTOMOUNT, 0, &st) != nil {
		return false
	}
	return st.Attributes_mask&unix.STATX_ATTR_MOUNT_ROOT != 0 && st.Attributes&unix.STATX_ATTR_MOUNT_ROOT == 0
}

// AtOrBelow lists the mount points at or below dir, deepest first; a point mounted twice is
// listed twice (it needs two unmounts). Where the kernel answers (kernel.go: Linux 6.8), it is
// asked about dir's own mounts only; elsewhere the table is read.
func AtOrBelow(dir string) ([]string, error) {
	if kernelAnswers() {
		if out, err := atOrBelowKernel(dir); err != errFallBack {
			return out, err
		}
	}
	return atOrBelowTable(dir)
}

// atOrBelowTable is AtOrBelow from the whole mount table.
func atOrBelowTable(dir string) ([]string, error) {
	mounts, err := Read()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range mounts {
		if m.Point == dir || strings.HasPrefix(m.Point, dir+"/") {
			out = append(out, m.Point)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out, nil
}

// unescape undoes mountinfo's octal escapes (\040 for a space, ...).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// UnmountBelow unmounts every mount strictly below dir, deepest first; dir itself, mounted or
// not, stays (a volume whose storage or runtime bind has mounts inside it: RemoveAll and an
// unmount of dir stop at them).
func UnmountBelow(dir string) error {
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	dir = filepath.Clean(dir)
	return inRounds(dir, func(points []string) error {
		for _, p := range points {
			if p == dir {
				continue
			}
			if err := Unmount(p, unix.UMOUNT_NOFOLLOW); err != nil {
				return fmt.Errorf("unmount %s: %w", p, err)
			}
		}
		return nil
	}, func(points []string) bool { return len(points) == 0 || len(points) == 1 && points[0] == dir })
}

// UnmountAtOrBelow unmounts every mount at or below dir, deepest first, with flags; errors
// are joined, and what could not be unmounted stays.
func UnmountAtOrBelow(dir string, flags int) error {
	return inRounds(dir, func(points []string) error {
		var errs []error
		for _, p := range points {
			if err := Unmount(p, flags); err != nil {
				errs = append(errs, fmt.Errorf("unmount %s: %w", p, err))
			}
		}
		return errors.Join(errs...)
	}, func(points []string) bool { return len(points) == 0 })
}

// inRounds lists the mounts at or below dir and unmounts them (round) until done says nothing
// is left: a mount that an unmount reveals (one hidden under a mount on a plain directory of
// dir's own mount, which the kernel's answer does not see: kernel.go) is taken in the next
// round. A round that unmounts nothing new ends it.
func inRounds(dir string, round func([]string) error, done func([]string) bool) error {
	var last []string
	for {
		points, err := AtOrBelow(dir)
		if err != nil {
			return err
		}
		if done(points) || slices.Equal(points, last) {
			return nil
		}
		if err := round(points); err != nil {
			return err
		}
		last = points
	}
}

// busyFor is how long Unmount tries again while the kernel says a mount is busy.
const busyFor = time.Second

// Unmount is umount2(point, flags), tried again for up to a second while the kernel says the
// mount is busy. A file this process opened through the mount, closed already, keeps it busy for
// a moment when another goroutine starts a child then: the child holds a copy of the file table
// until it execs, longer for a child of a new user namespace (a probe helper, an idmapped
// mount's namespace), which Go forks without CLONE_VFORK and which waits for its uid map (GOROOT
// src/syscall/exec_linux.go forkAndExecInChild1). Measured 2026-11-27 on this machine, two
// goroutines starting children beside a loop of mount, write a file, unmount: 17 EBUSY in 20451
// unmounts, 39 in 13149 with user namespaces, none with no file opened. A kubelet's reconciler
// tries again on its next loop (100 ms) the same way; still busy after a second is an error.
func Unmount(point string, flags int) error {
	var err error
	for deadline := time.Now().Add(busyFor); ; time.Sleep(20 * time.Millisecond) {
		if err = unix.Unmount(point, flags); !errors.Is(err, unix.EBUSY) || time.Now().After(deadline) {
			return err
		}
	}
}

// MakePoint makes dst a mount point for src, as a runtime makes one in a container: its parents
// 0755, then a directory (0755) or, for anything else, an empty file (0644).
func MakePoint(src, dst string) error {
	fi, err := os.Stat(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if fi.IsDir() {
		return os.Mkdir(dst, 0o755)
	}
	return os.WriteFile(dst, nil, 0o644)
}
