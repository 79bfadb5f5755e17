package oracle

// Masks of v1.37 pkg/volume/volume_linux.go (rwMask, roMask, execMask).
const (
	rwMask   uint32 = 0660
	roMask   uint32 = 0440
	execMask uint32 = 0110
)

// changeOwnership is v1.37 volume_linux.go changePermissionsRecursively: every entry from root
// down (walkDeep: lstat, symlinks never followed) gets lchown(-1, fsGroup); symlinks get no
// chmod; everything else mode |= mask, directories also |= 0110 and setgid. Bits are only
// added; the order of the walk (children first) does not change the result.
func changeOwnership(root *node, fsGroup int64, readOnly bool) {
	mask := rwMask
	if readOnly {
		mask = roMask
	}
	var walk func(n *node)
	walk = func(n *node) {
		for _, name := range n.names() {
			walk(n.kids[name])
		}
		n.gid = fsGroup
		switch n.typ {
		case typeSymlink:
			// volume_linux.go changeFilePermission: symlinks are lchown'ed, never chmod'ed.
		case typeDir:
			n.mode |= mask | execMask | modeSetgid
		default:
			n.mode |= mask
		}
	}
	walk(root)
}

// rootMismatch is v1.37 volume_linux.go requiresPermissionChange, used by fsGroupChangePolicy
// OnRootMismatch: the walk is skipped only when the root is a directory with gid fsGroup,
// setgid, and every bit of mask|0110. It names the first check root fails (gid, setgid, bits),
// "" when the root matches.
func rootMismatch(root *node, fsGroup int64, readOnly bool) string {
	if root.gid != fsGroup || root.typ != typeDir {
		return "gid"
	}
	want := rwMask
	if readOnly {
		want = roMask
	}
	want |= execMask
	if root.mode&modeSetgid == 0 {
		return "setgid"
	}
	if root.mode&want != want {
		return "bits"
	}
	return ""
}
