// Package emptydir sets up and tears down emptyDir volumes on the reference node: a directory on
// the default medium, a tmpfs (Memory) or a hugetlbfs (HugePages) mount, with KEP-5502's `mode`
// and the fsGroup ownership walk (v1.37 pkg/volume/emptydir, seed 000).
package emptydir

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/nodeimpl/mountinfo"
	"github.com/volperm/volperm/nodeimpl/mutant"
	"github.com/volperm/volperm/nodeimpl/ownership"
)

// perm is v1.37 emptydir's perm: the mode of a directory when no mode applies.
const perm os.FileMode = 0777

// maxStacked bounds how many mounts TearDown takes off one directory.
const maxStacked = 16

// readyFile is v1.37 pkg/volume/util's readyFileName, inside the volume's ready dir.
const readyFile = "ready"

// Volume is one emptyDir to set up.
type Volume struct {
	// Dir is where the volume lives (upstream GetPath).
	Dir string
	// ReadyDir holds the ready marker (upstream getMetaDir).
	ReadyDir string
	// Source is the pod's emptyDir (medium, sizeLimit, mode).
	Source corev1.EmptyDirVolumeSource
	// Pod gives the fsGroup (securityContext) and the hugepage sizes (resources).
	Pod *corev1.Pod
	// ModeGate is the kubelet's EmptyDirVolumeMode gate; off, Source.Mode is ignored.
	ModeGate bool
}

// unixModeToFileMode is v1.37 emptydir unixModeToFileMode: permission bits plus the sticky bit.
func unixModeToFileMode(mode int32) os.FileMode {
	fm := os.FileMode(mode & 0777)
	if mutant.On(mutant.EmptyDirModeOtherWriteOnly) {
		fm &^= 0002
	}
	if mode&01000 != 0 && !mutant.On(mutant.EmptyDirModeDropsSticky) && !(mutant.On(mutant.BlindEmptyDirStickyNeedsOtherWrite) && mode&0002 == 0) {
		fm |= os.ModeSticky
		if mutant.On(mutant.EmptyDirModeStickyAsSetgid) {
			fm ^= os.ModeSticky | os.ModeSetgid
		}
	}
	return fm
}

// SetUp makes the volume ready (v1.37 emptyDir.SetUpAt). A volume whose ready marker is present
// and whose directory (and, for Memory / HugePages, mount) is still there is left as it is: no
// chmod, no walk (docs/spec.md "emptyDir": a second SetUp does nothing). v1.37 short-cuts only
// Memory and the default medium; on HugePages it runs setupDir (chmod of the mounted root) and
// the walk again on every SetUp: a known difference.
func SetUp(v Volume) error {
	mode := v.mode()
	mounted, err := mountAt(v.Dir)
	if err != nil {
		return err
	}
	if ready(v.ReadyDir) && !mutant.On(mutant.EmptyDirRestartNotReady) {
		if fsGroup := podFSGroup(v.Pod); mutant.On(mutant.EmptyDirRestartRewalk) {
			_ = ownership.Apply(v.Dir, fsGroup, false, nil)
		}
		if mutant.On(mutant.EmptyDirRestartRechmod) && mode != nil {
			_ = os.Chmod(v.Dir, *mode)
		}
		switch {
		case mounted != nil && (v.Source.Medium == corev1.StorageMediumMemory || (IsHugePageMedium(v.Source.Medium) && !mutant.On(mutant.BlindEmptyDirRestartHugePagesSetUp))):
			return nil
		case v.Source.Medium == corev1.StorageMediumDefault:
			if _, err := os.Stat(v.Dir); err == nil {
				return nil
			}
		}
		// v1.37 SetUpAt: a ready marker without its volume is removed and the volume made again.
		if err := os.RemoveAll(v.ReadyDir); err != nil {
			return fmt.Errorf("remove stale ready dir %s: %w", v.ReadyDir, err)
		}
	}

	fsGroup := podFSGroup(v.Pod)
	if fsGroup != nil && *fsGroup == 0 && mutant.On(mutant.BlindEmptyDirFSGroupZeroNoWalk) {
		fsGroup = nil
	}
	walkFirst := mutant.On(mutant.EmptyDirWalkBeforeMode)
	if walkFirst {
		_ = ownership.Apply(v.Dir, fsGroup, false, nil)
	}
	switch {
	case v.Source.Medium == corev1.StorageMediumDefault:
		err = setupDir(v.Dir, mode)
	case v.Source.Medium == corev1.StorageMediumMemory:
		err = setupTmpfs(v, mode, mounted)
	case IsHugePageMedium(v.Source.Medium) && !(v.Source.Medium != corev1.StorageMediumHugePages && mutant.On(mutant.BlindEmptyDirSizedHugePagesUnknown)):
		err = setupHugepages(v, mode, mounted)
	default:
		err = fmt.Errorf("unknown storage medium %q", v.Source.Medium)
	}

	// v1.37 SetUpAt: the walk runs after the mode, rw mask, no policy, and its error is dropped
	// (`_ = ownershipChanger.ChangePermissions()`), also when the set-up failed.
	switch {
	case walkFirst, mutant.On(mutant.EmptyDirNoWalk):
	case mode != nil && mutant.On(mutant.BlindEmptyDirNoWalkWithMode):
	case v.Source.Medium != corev1.StorageMediumDefault && mutant.On(mutant.EmptyDirWalkDefaultOnly):
	default:
		_ = ownership.Apply(v.Dir, fsGroup, false, nil)
	}

	if err != nil {
		return err
	}
	if mode == nil && mutant.On(mutant.BlindEmptyDirReadyOnlyWithMode) {
		return nil
	}
	return setReady(v.ReadyDir)
}

// mode is the mode the kubelet applies: nil when the gate is off (v1.37 newMounterInternal).
// podFSGroup is the pod's fsGroup, nil when it has none.
func podFSGroup(pod *corev1.Pod) *int64 {
	if sc := pod.Spec.SecurityContext; sc != nil {
		return sc.FSGroup
	}
	return nil
}

func (v Volume) mode() *os.FileMode {
	if (!v.ModeGate && !mutant.On(mutant.EmptyDirModeIgnoresGate)) || v.Source.Mode == nil {
		return nil
	}
	if *v.Source.Mode == 0 && mutant.On(mutant.EmptyDirModeZeroIsUnset) {
		return nil
	}
	m := unixModeToFileMode(*v.Source.Mode)
	return &m
}

// setupDir is v1.37 emptyDir.setupDir: MkdirAll 0777, then chmod to the mode, or to 0777 when
// the umask stripped bits.
func setupDir(dir string, mode *os.FileMode) error {
	if err := os.MkdirAll(dir, perm); err != nil {
		return err
	}
	if mode != nil && mutant.On(mutant.EmptyDirModeUmask) {
		return os.Chmod(dir, *mode&^0022)
	}
	if mode != nil && mutant.On(mutant.BlindEmptyDirModeChmodOnPermDiff) {
		if fi, err := os.Lstat(dir); err == nil && fi.Mode().Perm() == mode.Perm() {
			return nil
		}
	}
	if mode != nil {
		return os.Chmod(dir, *mode)
	}
	if mutant.On(mutant.EmptyDirDefaultUmask) {
		return os.Chmod(dir, 0755)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if fi.Mode().Perm() != perm.Perm() {
		return os.Chmod(dir, perm)
	}
	return nil
}

// setupTmpfs is v1.37 emptyDir.setupTmpfs, plus a chmod of the mounted root when a mode
// applies: the pod sees exactly the mode on every medium (docs/spec.md "emptyDir", KEP-5502
// test plan; v1.37 only chmods the directory under the mount: known difference).
func setupTmpfs(v Volume, mode *os.FileMode, mounted *mountInfo) error {
	if err := setupDir(v.Dir, mode); err != nil {
		return err
	}
	// v1.37 setupTmpfs: a tmpfs already mounted there is the desired state.
	if mounted == nil || mounted.fsType != "tmpfs" {
		// v1.37 generateTmpfsMountOptions: size= only for a positive limit (docs/spec.md: from
		// sizeLimit; upstream also caps it by node allocatable and the pod's memory limit).
		var opts string
		if l := v.Source.SizeLimit; l != nil && l.Value() > 0 && !mutant.On(mutant.EmptyDirMemoryNoSize) {
			size := l.Value()
			if mutant.On(mutant.EmptyDirMemorySizeOff) {
				size += 64 << 10
			}
			opts = fmt.Sprintf("size=%d", size)
		}
		if err := unix.Mount("tmpfs", v.Dir, "tmpfs", 0, opts); err != nil {
			return fmt.Errorf("mount tmpfs (%s) on %s: %w", opts, v.Dir, err)
		}
		if opts != "" && mutant.On(mutant.BlindEmptyDirMemorySizeLimitNoMode) {
			return nil
		}
	}
	if mutant.On(mutant.EmptyDirModeNotOnMemory) {
		return nil
	}
	if mode == nil && mutant.On(mutant.EmptyDirDefaultMemory0777) {
		return os.Chmod(v.Dir, 0777)
	}
	return chmodRoot(v.Dir, mode)
}

// setupHugepages is v1.37 emptyDir.setupHugepages, plus the chmod of the mounted root (see
// setupTmpfs).
func setupHugepages(v Volume, mode *os.FileMode, mounted *mountInfo) error {
	if err := setupDir(v.Dir, mode); err != nil {
		return err
	}
	medium := v.Source.Medium
	if mounted != nil && mounted.fsType == "hugetlbfs" {
		// v1.37 setupHugepages: a hugetlbfs already mounted there with the medium's page size is
		// the desired state; "HugePages" accepts any page size.
		if medium != corev1.StorageMediumHugePages {
			mediumSize, err := hugePageSizeFromMedium(medium)
			if err != nil {
				return err
			}
			if mounted.pageSize == nil {
				return fmt.Errorf("pod %v: mounted dir %s pagesize is not determined", v.Pod.UID, v.Dir)
			}
			if mediumSize.Cmp(*mounted.pageSize) != 0 {
				return fmt.Errorf("pod %v: mounted dir %s pagesize '%s' and requested medium size '%s' differ", v.Pod.UID, v.Dir, mounted.pageSize.String(), mediumSize.String())
			}
		}
		return chmodRoot(v.Dir, mode)
	}
	opt, err := getPageSizeMountOption(medium, v.Pod)
	if err != nil {
		return err
	}
	if err := unix.Mount("nodev", v.Dir, "hugetlbfs", 0, opt); err != nil {
		return fmt.Errorf("mount hugetlbfs (%s) on %s: %w", opt, v.Dir, err)
	}
	if mutant.On(mutant.EmptyDirModeNotOnHugePages) {
		return nil
	}
	if mode == nil && mutant.On(mutant.EmptyDirDefaultHugePages777) {
		return os.Chmod(v.Dir, 0777)
	}
	return chmodRoot(v.Dir, mode)
}

// chmodRoot gives a mounted root the mode, when one applies; with none it keeps the
// filesystem's own root mode (tmpfs 1777, hugetlbfs 0755: GA behaviour, docs/spec.md).
func chmodRoot(dir string, mode *os.FileMode) error {
	if mode == nil {
		return nil
	}
	if err := os.Chmod(dir, *mode); err != nil {
		return fmt.Errorf("chmod mounted emptyDir root: %w", err)
	}
	return nil
}

// TearDown is v1.37 emptyDir.TearDownAt: remove the ready marker, unmount the tmpfs /
// hugetlbfs if the directory is a mount point, remove the directory. A missing directory is
// no error.
func TearDown(dir, readyDir string) error {
	if err := os.RemoveAll(readyDir); err != nil {
		return fmt.Errorf("failed to remove ready dir [%s]: %v", readyDir, err)
	}
	if _, err := os.Lstat(dir); os.IsNotExist(err) {
		return nil // v1.37 TearDownAt: "Unmount skipped because path does not exist"
	}
	// Mounts stacked on the same point come off one by one; a bound keeps a mount that will
	// not go from looping forever.
	for i := 0; ; i++ {
		m, err := mountAt(dir)
		if err != nil {
			return err
		}
		if m == nil {
			break
		}
		if i == maxStacked {
			return fmt.Errorf("unmount %s: still a %s mount point after %d unmounts", dir, m.fsType, i)
		}
		if err := mountinfo.Unmount(dir, 0); err != nil {
			return fmt.Errorf("unmount %s (%s): %w", dir, m.fsType, err)
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove emptyDir %s: %w", dir, err)
	}
	return nil
}

// ready is v1.37 pkg/volume/util IsReady: the marker is a regular file.
func ready(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, readyFile))
	return err == nil && fi.Mode().IsRegular()
}

// setReady is v1.37 pkg/volume/util SetReady (dir 0750, empty file); upstream only logs its
// errors, the reference node reports them.
func setReady(dir string) error {
	if err := os.MkdirAll(dir, 0750); err != nil {
		return fmt.Errorf("make ready dir: %w", err)
	}
	f, err := os.Create(filepath.Join(dir, readyFile))
	if err != nil {
		return fmt.Errorf("write ready marker: %w", err)
	}
	return f.Close()
}
