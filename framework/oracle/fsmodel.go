package oracle

import (
	"sort"
	"strings"

	"github.com/volperm/volperm/framework"
)

// Entry types, spelled as framework.PathObservation.Type.
const (
	typeDir      = "dir"
	typeFile     = "file"
	typeSymlink  = "symlink"
	typeSocket   = "socket"
	typeCharDev  = "chardev"
	typeBlockDev = "blockdev"
)

// Mode bits the model cares about.
const (
	modeSetuid uint32 = 04000
	modeSetgid uint32 = 02000
	modeSticky uint32 = 01000
	umask      uint32 = 022 // docs/spec.md "Node": the kubelet and the pod's processes run with umask 022
)

// Errno names a probe can report (docs/spec.md "Probes"), plus the few more the kernel gives
// for the same calls.
const (
	eACCES    = "EACCES"
	ePERM     = "EPERM"
	eNOENT    = "ENOENT"
	eEXIST    = "EEXIST"
	eNOTDIR   = "ENOTDIR"
	eISDIR    = "EISDIR"
	eLOOP     = "ELOOP"
	eNXIO     = "ENXIO"
	eBUSY     = "EBUSY"
	eINVAL    = "EINVAL"
	eNOSPC    = "ENOSPC"
	eOVERFLOW = "EOVERFLOW"
	eNOTEMPT  = "ENOTEMPTY"
	eROFS     = "EROFS"
	eXDEV     = "EXDEV"
)

// errnoText is strerror() for the errnos the model produces, as Go's syscall.Errno prints them.
var errnoText = map[string]string{
	eACCES:  "permission denied",
	eNOENT:  "no such file or directory",
	eEXIST:  "file exists",
	eNOTDIR: "not a directory",
	eISDIR:  "is a directory",
	eLOOP:   "too many levels of symbolic links",
}

// maxSymlinks is Linux's MAXSYMLINKS: more links in one lookup is ELOOP.
const maxSymlinks = 40

// node is one inode of the in-memory filesystem model.
type node struct {
	typ      string
	mode     uint32 // permission bits with setuid/setgid/sticky
	uid, gid int64
	link     string // symlink target, as written
	size     int64  // a file's bytes, as fill probes wrote them
	parent   *node
	kids     map[string]*node
	// mount: a directory with a filesystem of its own mounted on it (a storage entry with
	// mount: a tmpfs), whose mount a probe meets separately ([probes.read-only]).
	mount bool
}

// owner is the identity that makes a new entry.
type owner struct{ uid, gid int64 }

// kubeletOwner: entries the kubelet (and the flexVolume driver) makes are root's.
var kubeletOwner = owner{0, 0}

func newDir(mode uint32, uid, gid int64) *node {
	return &node{typ: typeDir, mode: mode, uid: uid, gid: gid, kids: map[string]*node{}}
}

// add makes entry name in directory d as o. Linux: in a setgid directory the new entry takes
// the directory's group and a new directory inherits setgid; otherwise the group is o's.
func (d *node) add(name, typ string, mode uint32, o owner) *node {
	n := &node{typ: typ, mode: mode, uid: o.uid, gid: o.gid, parent: d}
	if typ == typeDir {
		n.kids = map[string]*node{}
	}
	if d.mode&modeSetgid != 0 {
		n.gid = d.gid
		if typ == typeDir {
			n.mode |= modeSetgid
		}
	}
	d.kids[name] = n
	return n
}

// names returns d's entry names, sorted.
func (d *node) names() []string {
	out := make([]string, 0, len(d.kids))
	for name := range d.kids {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// ancestorOf reports whether d is n or one of n's ancestors.
func (d *node) ancestorOf(n *node) bool {
	for ; n != nil; n = n.parent {
		if n == d {
			return true
		}
	}
	return false
}

// Permission bits asked of an inode.
const (
	permRead  uint32 = 4
	permWrite uint32 = 2
	permExec  uint32 = 1
)

// may is the Linux DAC check (docs/spec.md "Probes"): uid 0 passes; otherwise the owner
// class, else the group class (primary or supplementary gid), else other. u nil is the
// kubelet (root).
func may(n *node, u *prober, want uint32) bool {
	if u != nil && u.userns && want&permWrite != 0 && !(mapped(n.uid) && mapped(n.gid)) {
		// fs/namei.c inode_permission: no write to an inode whose owner or group has no
		// mapping, whoever asks (docs/spec.md [userns.root]).
		return false
	}
	if u == nil || u.overrides(n) {
		return true
	}
	var bits uint32
	switch {
	case u.UID == n.uid:
		bits = n.mode >> 6
	case inGroup(u, n.gid):
		bits = n.mode >> 3
	default:
		bits = n.mode
	}
	return bits&7&want == want
}

// prober is who makes a probe: its user, and whether it is a process of the pod's user
// namespace (hostUsers: false, docs/spec.md "User namespaces").
type prober struct {
	framework.User
	userns bool
}

// overrides says whether u's capabilities override n's permission bits (CAP_DAC_OVERRIDE):
// uid 0, and in a user namespace only on an entry whose owner and group have a mapping there
// (kernel capable_wrt_inode_uidgid; docs/spec.md [userns.root]).
func (u *prober) overrides(n *node) bool {
	if u.UID != 0 {
		return false
	}
	return !u.userns || (mapped(n.uid) && mapped(n.gid))
}

// mapped says whether disk id x has a mapping in a pod's user namespace through its idmapped
// mounts (ids 0..userNSLength-1 are themselves there).
func mapped(x int64) bool { return x >= 0 && x < userNSLength }

// userNSLength is the ids of a pod's user namespace (v1.37 DefaultKubeletUserNamespacesIDsPerPod).
const userNSLength = 65536

func inGroup(u *prober, gid int64) bool {
	if u.GID == gid {
		return true
	}
	for _, g := range u.Groups {
		if g == gid {
			return true
		}
	}
	return false
}

// found is the result of a path lookup.
type found struct {
	// dir is the directory holding the last element and name that element; both are empty
	// when the path names the start itself (".").
	dir  *node
	name string
	// n is the entry, nil when the last element does not exist.
	n *node
	// protected: the lookup failed (EACCES) at a symlink it may not follow
	// ([probes.protected-symlinks]).
	protected bool
}

// mayFollow is fs/namei.c may_follow_link with fs.protected_symlinks=1 (docs/spec.md
// [probes.protected-symlinks]): a symlink in a sticky, world-writable directory is followed only
// by its owner, or when the directory's owner owns it too; root is no exception.
func mayFollow(dir, link *node, uid int64) bool {
	return link.uid == uid || dir.mode&(modeSticky|0002) != modeSticky|0002 || dir.uid == link.uid
}

// lookup resolves p (slash-separated, relative to start) like the kernel's path walk: search
// permission on every directory it looks in, symlinks followed except the last element unless
// followLast, absolute symlink targets resolved from top, ".." never above top. u nil is root.
// It returns an errno name on failure.
func lookup(top, start *node, p string, followLast bool, u *prober) (found, string) {
	comps := splitPath(p)
	if len(comps) == 0 {
		return found{n: start}, ""
	}
	cur := start
	links := 0
	for len(comps) > 0 {
		c := comps[0]
		comps = comps[1:]
		last := len(comps) == 0
		if cur.typ != typeDir {
			return found{}, eNOTDIR
		}
		if !may(cur, u, permExec) {
			return found{}, eACCES
		}
		if c == ".." {
			if cur != top && cur.parent != nil {
				cur = cur.parent
			}
			if last {
				return found{n: cur}, ""
			}
			continue
		}
		child := cur.kids[c]
		if child == nil {
			if last {
				return found{dir: cur, name: c}, ""
			}
			return found{}, eNOENT
		}
		if child.typ == typeSymlink && (!last || followLast) {
			if links++; links > maxSymlinks {
				return found{}, eLOOP
			}
			if !mayFollow(cur, child, uidOf(u)) {
				return found{protected: true}, eACCES
			}
			target := splitPath(child.link)
			if strings.HasPrefix(child.link, "/") {
				cur = top
			}
			comps = append(target, comps...)
			if len(comps) == 0 {
				return found{n: cur}, ""
			}
			continue
		}
		if last {
			return found{dir: cur, name: c, n: child}, ""
		}
		cur = child
	}
	return found{n: cur}, ""
}

// uidOf is u's uid; nil is root (the kubelet).
func uidOf(u *prober) int64 {
	if u == nil {
		return 0
	}
	return u.UID
}

// splitPath splits a slash path into its elements, dropping empty and "." elements (".."
// stays: it depends on the symlinks walked so far).
func splitPath(p string) []string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}

// stat resolves p from top following every symlink, as root.
func stat(top *node, p string) (*node, string) {
	f, errno := lookup(top, top, p, true, nil)
	if errno != "" {
		return nil, errno
	}
	if f.n == nil {
		return nil, eNOENT
	}
	return f.n, ""
}
