// Package ownership is the reference node's fsGroup ownership walk: it gives every entry of a
// volume the pod's fsGroup and ORs the group permission mask into its mode, exactly like
// kubelet's VolumeOwnership (v1.37 pkg/volume/volume_linux.go; seed 003, the kubelet blog).
package ownership

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/nodeimpl/mutant"
)

// The masks of v1.37 pkg/volume/volume_linux.go (rwMask, roMask, execMask).
const (
	rwMask   = os.FileMode(0660)
	roMask   = os.FileMode(0440)
	execMask = os.FileMode(0110)
)

// Apply runs the walk on dir when fsGroup != nil (v1.37 VolumeOwnership.ChangePermissions).
// readOnly selects the 0440 mask instead of 0660 (the mounter's ReadOnly attribute). With
// policy OnRootMismatch the walk is skipped when the root already looks done; nil or Always
// walks everything. Failed lchown/chmod calls do not stop the walk and are not reported
// (upstream only logs them); failing to list a directory or lstat an entry stops it.
func Apply(dir string, fsGroup *int64, readOnly bool, policy *corev1.PodFSGroupChangePolicy) error {
	// v1.37 ChangePermissions: nothing to do without fsGroup.
	if fsGroup == nil {
		return nil
	}
	// v1.37 skipPermissionChange: only OnRootMismatch may skip.
	onRootMismatch := policy != nil && *policy == corev1.FSGroupChangeOnRootMismatch
	if policy != nil && *policy == corev1.FSGroupChangeAlways && mutant.On(mutant.PolicyAlwaysSkips) {
		onRootMismatch = true
	}
	if onRootMismatch && !mutant.On(mutant.PolicyIgnored) && !requiresPermissionChange(dir, *fsGroup, readOnly) {
		return nil
	}
	gid := int(*fsGroup)
	rootOnly := mutant.On(mutant.WalkRootOnly) || (onRootMismatch && mutant.On(mutant.PolicyChecksChildren))
	err := walkDeep(dir, func(path string, info os.FileInfo) {
		switch {
		case path == dir && mutant.On(mutant.WalkSkipsRoot):
		case path != dir && rootOnly:
		case path != dir && filepath.Dir(path) != dir && mutant.On(mutant.WalkTopLevelOnly):
		default:
			changeFilePermission(dir, path, gid, readOnly, info)
		}
	})
	if err != nil {
		return fmt.Errorf("fsGroup %d ownership walk of %s: %w", gid, dir, err)
	}
	return nil
}

// changeFilePermission is v1.37 changeFilePermission for one entry; its errors are dropped
// because upstream only logs them and carries on.
func changeFilePermission(root, path string, gid int, readOnly bool, info os.FileInfo) {
	if info.Mode()&os.ModeSymlink != 0 && mutant.On(mutant.BlindWalkSkipsSymlinks) {
		return
	}
	if st, ok := info.Sys().(*syscall.Stat_t); ok && int(st.Gid) == gid && mutant.On(mutant.BlindWalkSkipsWhenGIDMatches) {
		return
	}
	// v1.37 changeFilePermission: Lchown(path, -1, fsGroup), the owner is kept, symlinks included.
	switch {
	case mutant.On(mutant.WalkNoChown):
	case mutant.On(mutant.WalkChownsUID):
		_ = os.Lchown(path, gid, gid)
	default:
		_ = os.Lchown(path, -1, gid)
	}

	// v1.37 changeFilePermission: symlinks are never chmod'ed (chmod would follow them).
	if info.Mode()&os.ModeSymlink != 0 && !(mutant.On(mutant.WalkChmodsSymlinks) && insideRoot(root, path)) {
		return
	}
	mask := rwMask
	if mutant.On(mutant.WalkRWMask0640) {
		mask = 0640
	}
	if readOnly {
		mask = roMask
		if mutant.On(mutant.WalkROMask0444) {
			mask = 0444
		}
	}
	// v1.37 changeFilePermission: directories also get setgid and the exec bits.
	if info.IsDir() {
		if !mutant.On(mutant.WalkDirNoSetgid) && !(path != root && mutant.On(mutant.BlindWalkSetgidRootOnly)) {
			mask |= os.ModeSetgid
		}
		if !mutant.On(mutant.WalkDirNoExec) {
			mask |= execMask
		}
	} else if mutant.On(mutant.WalkFileExec) {
		mask |= execMask
	}
	mode := info.Mode()
	if !info.IsDir() && mutant.On(mutant.WalkReplaceNotOr) {
		mode &^= os.ModePerm
	}
	if mutant.On(mutant.WalkDropsSpecial) {
		mode &^= os.ModeSetuid | os.ModeSetgid | os.ModeSticky
	}
	// v1.37 changeFilePermission: the mode read before the lchown, ORed with the mask, so
	// setuid/setgid bits a chown cleared on a file come back and bits are only ever added.
	_ = os.Chmod(path, mode|mask)
}

// requiresPermissionChange is v1.37 requiresPermissionChange: the root (stat, following a
// symlink) needs the walk unless it is a directory with gid == fsGroup, all of mask|0110 and
// setgid. A root that cannot be stat'ed needs the walk.
func requiresPermissionChange(root string, fsGroup int64, readOnly bool) bool {
	fi, err := os.Stat(root)
	if err != nil {
		return true
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || st == nil {
		return true
	}
	rootGID := int64(st.Gid)
	if mutant.On(mutant.BlindPolicyChecksUID) {
		rootGID = int64(st.Uid)
	}
	if rootGID != fsGroup && !mutant.On(mutant.PolicyNoGIDCheck) {
		return true
	}
	if !fi.IsDir() {
		return true
	}
	perms := rwMask
	if readOnly {
		perms = roMask
	}
	if !mutant.On(mutant.PolicyNoExecCheck) {
		perms |= execMask
	}
	return fi.Mode().Perm()&perms != perms || (fi.Mode()&os.ModeSetgid == 0 && !mutant.On(mutant.PolicyNoSetgidCheck))
}

// walkDeep is v1.37 walkDeep: like filepath.Walk but unsorted, never following symlinks, and
// calling fn on a directory after its children (children first, root last).
func walkDeep(root string, fn func(path string, info os.FileInfo)) error {
	info, err := os.Lstat(root)
	if err != nil {
		return err
	}
	return walk(root, info, fn)
}

func walk(path string, info os.FileInfo, fn func(path string, info os.FileInfo)) error {
	if !info.IsDir() {
		fn(path, info)
		return nil
	}
	names, err := readDirNames(path)
	if err != nil {
		return err
	}
	for _, name := range names {
		if strings.HasPrefix(name, ".") && mutant.On(mutant.BlindWalkSkipsDotNames) {
			continue
		}
		child := filepath.Join(path, name)
		ci, err := os.Lstat(child)
		if err != nil {
			// v1.37 walk: an lstat error reaches the walk func, which returns it: the walk stops.
			return err
		}
		if err := walk(child, ci, fn); err != nil {
			return err
		}
	}
	fn(path, info)
	return nil
}

// readDirNames is v1.37 readDirNames: the names of a directory, unsorted.
func readDirNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	names, err := f.Readdirnames(-1)
	f.Close()
	return names, err
}

// insideRoot reports whether the symlink at path resolves to a path below root: the one mutant
// that follows symlinks (walk-chmods-symlinks) must never change anything outside the volume.
func insideRoot(root, path string) bool {
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return false
	}
	realRoot, err := filepath.EvalSymlinks(root)
	return err == nil && strings.HasPrefix(target, realRoot+string(filepath.Separator))
}
