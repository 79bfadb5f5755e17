// Package flexvolume is the reference kubelet's flexVolume SetUp with the harness's one fixture
// driver, "volperm/fixture": a driver whose storage is a list of files that it copies into the
// volume dir on first mount (seed 003's flexVolume, v1.37 pkg/volume/flexvolume mounter.go).
package flexvolume

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/nodeimpl/mountinfo"
	"github.com/volperm/volperm/nodeimpl/mutant"
	"github.com/volperm/volperm/nodeimpl/ownership"
)

// FixtureDriver is the only flexVolume driver installed on the reference node.
const FixtureDriver = "volperm/fixture"

// MarkerSuffix names the fixture driver's "storage is mounted" marker: the file dir+MarkerSuffix,
// a sibling of the volume dir (never inside the volume, so no container or snapshot sees it).
// Volume names are DNS-1123 labels without dots, so the marker never collides with another
// volume's dir.
const MarkerSuffix = ".volperm-populated"

// StorageFile is one entry the fixture driver's storage holds, relative to the volume root.
// Dir makes it a directory, Symlink a symlink to Symlink; otherwise it is an empty file. Mode
// is the exact Unix mode (setuid, setgid and sticky included), UID/GID the owner.
type StorageFile struct {
	Path    string
	Dir     bool
	Symlink string
	// Mount makes it a directory with a tmpfs mounted on it (Mode and owner the tmpfs root's).
	Mount bool
	Mode  uint32
	UID   int64
	GID   int64
}

// SetUp is kubelet's flexVolume SetUpAt (v1.37 flexVolumeMounter.SetUpAt) with the fixture
// driver: dir is created 0750, the driver populates it from storage on the first SetUp only,
// and every SetUp runs the fsGroup walk (read-write mask, policy honoured) unless the volume
// is readOnly. Walk errors are ignored like upstream. The fixture never mounts over dir, so
// prepareForMount never reports "already mounted" and every SetUp reaches the walk: the
// kubelet-restart effect of seed 003 (the marker only stops re-population).
func SetUp(dir string, src *corev1.FlexVolumeSource, storage []StorageFile, fsGroup *int64, policy *corev1.PodFSGroupChangePolicy) error {
	// Upstream finds no plugin for an unknown driver, before any directory is made.
	if src.Driver != FixtureDriver {
		return fmt.Errorf("flexVolume driver %q is not installed on this node", src.Driver)
	}
	if err := prepareForMount(dir); err != nil {
		return fmt.Errorf("flexVolume %s: %w", FixtureDriver, err)
	}

	// Without storage there is nothing to mount: the storage is empty, or already in place
	// because a harness played the driver (Populate) for a kubelet that is not in-process.
	// restarted: a SetUp after the first (the storage was already in place).
	var restarted bool
	if len(storage) > 0 {
		var err error
		if restarted, err = populateOnce(dir, storage); err != nil {
			return err
		}
	}
	if restarted && mutant.On(mutant.FlexRestartRepopulates) {
		for _, f := range storage {
			if rel, err := relPath(f.Path); err == nil && f.Symlink == "" {
				_ = os.Chmod(filepath.Join(dir, rel), unixMode(f.Mode))
			}
		}
	}

	// v1.37 flexVolumeMounter.SetUpAt: `if !f.readOnly` the ownership walk (the driver has the
	// default FSGroup capability), with the pod's fsGroupChangePolicy, error discarded.
	if restarted && mutant.On(mutant.BlindPolicyIgnoredOnRestart) {
		policy = nil
	}
	switch {
	case restarted && mutant.On(mutant.FlexNoWalkOnRestart):
	case !src.ReadOnly || mutant.On(mutant.FlexReadOnlyWalks):
		_ = ownership.Apply(dir, fsGroup, false, policy)
	}
	return nil
}

// populateOnce is the driver's mount: storage is created on the first SetUp only (a marker
// beside dir remembers it), so files a container changed stay changed (seed 003).
func populateOnce(dir string, storage []StorageFile) (already bool, err error) {
	marker := dir + MarkerSuffix
	if _, err := os.Lstat(marker); err == nil {
		return true, nil
	} else if !os.IsNotExist(err) {
		return false, fmt.Errorf("flexVolume %s: mount marker: %w", FixtureDriver, err)
	}
	if err := populate(dir, storage); err != nil {
		// v1.37 SetUpAt removes dir when the driver's mount fails.
		return false, errors.Join(fmt.Errorf("flexVolume %s: mount: %w", FixtureDriver, err), os.RemoveAll(dir))
	}
	if err := os.WriteFile(marker, nil, 0644); err != nil {
		return false, fmt.Errorf("flexVolume %s: write mount marker: %w", FixtureDriver, err)
	}
	return false, nil
}

// TearDown unmounts the storage's submounts (Unmount), then removes the volume dir and the
// fixture driver's marker.
func TearDown(dir string) error {
	if err := Unmount(dir); err != nil {
		return err
	}
	return errors.Join(os.RemoveAll(dir), os.RemoveAll(dir+MarkerSuffix))
}

// Unmount unmounts every mount below dir, deepest first: the tmpfs the storage's mount entries
// made (a driver's unmount). dir itself is left, mounted or not.
func Unmount(dir string) error {
	if err := mountinfo.UnmountBelow(dir); err != nil {
		return fmt.Errorf("flexVolume %s: %w", FixtureDriver, err)
	}
	return nil
}

// Populate is the fixture driver's mount alone, for targets whose kubelet is not this one: dir
// is created 0750 when missing (v1.37 prepareForMount) and storage is created in it like on a
// first SetUp. No marker is written and no walk runs.
func Populate(dir string, storage []StorageFile) error {
	if err := prepareForMount(dir); err != nil {
		return fmt.Errorf("flexVolume %s: %w", FixtureDriver, err)
	}
	if err := populate(dir, storage); err != nil {
		return fmt.Errorf("flexVolume %s: mount: %w", FixtureDriver, err)
	}
	return nil
}

// prepareForMount is v1.37 flexvolume prepareForMount: MkdirAll(dir, 0750) when dir does not
// exist (the umask applies, as upstream).
func prepareForMount(dir string) error {
	if _, err := os.Stat(dir); os.IsNotExist(err) {
		perm := os.FileMode(0750)
		if mutant.On(mutant.FlexDir0755) {
			perm = 0755
		}
		if err := os.MkdirAll(dir, perm); err != nil {
			return fmt.Errorf("create volume dir: %w", err)
		}
	} else if err != nil {
		return err
	}
	return nil
}

// populate creates storage under dir, parents first (docs/spec.md "flexVolume"): each entry
// is created, lchown'ed, then chmod'ed to its exact mode (after the chown, which would clear
// setuid/setgid). Parents that storage does not list are made 0755 root:root. The entry "."
// is the storage's own root: it is not created, only given its owner and mode (a filesystem
// whose root already has them, as a real driver mounts one).
func populate(dir string, storage []StorageFile) error {
	files := make([]StorageFile, len(storage))
	copy(files, storage)
	for i := range files {
		rel, err := relPath(files[i].Path)
		if err != nil {
			return err
		}
		files[i].Path = rel
	}
	sort.SliceStable(files, func(i, j int) bool { return depth(files[i].Path) < depth(files[j].Path) })

	for _, f := range files {
		if f.Path == "." && mutant.On(mutant.BlindFlexRootEntryIgnored) {
			continue
		}
		p := filepath.Join(dir, f.Path)
		if err := mkParents(dir, filepath.Dir(f.Path)); err != nil {
			return err
		}
		var err error
		switch {
		case f.Path == ".":
		case f.Symlink != "":
			err = os.Symlink(f.Symlink, p)
		case f.Mount:
			if err = os.Mkdir(p, 0700); err == nil {
				err = unix.Mount("tmpfs", p, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0700")
			}
		case f.Dir:
			err = os.Mkdir(p, 0700)
		default:
			var fh *os.File
			if fh, err = os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0600); err == nil {
				err = fh.Close()
			}
		}
		if err != nil {
			return fmt.Errorf("create %s: %w", f.Path, err)
		}
		if f.Symlink == "" && mutant.On(mutant.BlindFlexChmodBeforeChown) {
			if err := os.Chmod(p, unixMode(f.Mode)); err != nil {
				return fmt.Errorf("chmod %s: %w", f.Path, err)
			}
			if err := os.Lchown(p, int(f.UID), int(f.GID)); err != nil {
				return fmt.Errorf("chown %s: %w", f.Path, err)
			}
			continue
		}
		uid, gid := int(f.UID), int(f.GID)
		if mutant.On(mutant.FlexStorageOwnerLost) {
			uid, gid = 0, 0
		}
		if err := os.Lchown(p, uid, gid); err != nil {
			return fmt.Errorf("chown %s: %w", f.Path, err)
		}
		if f.Symlink != "" {
			continue
		}
		if err := os.Chmod(p, unixMode(f.Mode)); err != nil {
			return fmt.Errorf("chmod %s: %w", f.Path, err)
		}
	}
	return nil
}

// mkParents makes every missing directory of rel (relative to dir) 0755, umask ignored;
// an existing parent must be a real directory.
func mkParents(dir, rel string) error {
	if rel == "." {
		return nil
	}
	p := dir
	for _, part := range strings.Split(rel, "/") {
		p = filepath.Join(p, part)
		if fi, err := os.Lstat(p); err == nil {
			// Never create through a symlink: it could lead outside the volume.
			if !fi.IsDir() {
				return fmt.Errorf("parent %s of a storage entry is not a directory", p)
			}
			continue
		}
		if err := os.Mkdir(p, 0755); err != nil {
			return fmt.Errorf("create parent %s: %w", p, err)
		}
		if err := os.Chmod(p, 0755); err != nil {
			return fmt.Errorf("chmod parent %s: %w", p, err)
		}
	}
	return nil
}

// relPath checks that p names an entry strictly inside the volume and returns it cleaned.
func relPath(p string) (string, error) {
	clean := filepath.Clean(p)
	if p == "" || filepath.IsAbs(p) || clean == ".." || strings.HasPrefix(clean, "../") {
		return "", fmt.Errorf("storage path %q must be relative and inside the volume", p)
	}
	return clean, nil
}

func depth(p string) int { return strings.Count(p, "/") }

// unixMode converts Unix permission bits (with 07000) to an os.FileMode.
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
