package mountinfo

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Asking the kernel about the mounts at and below one directory, never the whole table (issue
// 52): a node has hundreds to thousands of mounts (kind nodes, containers, other volumes), and
// /proc/self/mountinfo is formatted in full by the kernel on every read, so a teardown that read
// it per case cost 5-18x more on such a host. The mounts at and below a directory are found
// from the directory itself:
//   - statx(STATX_MNT_ID_UNIQUE) says which mount a path is on (Linux 6.8);
//   - the directory's tree is walked only within its own mount: an entry on another mount is
//     the root of a mount below it (the top of a stack there);
//   - statmount (Linux 6.8) names each such mount's parent, so that the mounts under the top of
//     a stack, on the same point, are found too;
//   - listmount (Linux 6.8) lists each found mount's children, and theirs, whatever hides them.
//
// Where the kernel lacks these calls (or answers them otherwise), the table is read as before.

// statmount(2)'s request bits and struct statmount's layout (include/uapi/linux/mount.h).
const (
	statmountSBBasic  = 0x01
	statmountMntBasic = 0x02
	statmountMntPoint = 0x10
	statmountFSType   = 0x20
	statmountMntOpts  = 0x80
	statmountSupport  = 0x1000 // STATMOUNT_SUPPORTED_MASK (Linux 6.15)

	smHeader        = 512 // sizeof(struct statmount): the strings start after it
	smOffMntOpts    = 4
	smOffMask       = 8
	smOffSBFlags    = 32
	smOffFSType     = 36
	smOffMntID      = 40
	smOffMntParent  = 48
	smOffMntPoint   = 108
	smOffSupported  = 144
	mntIDReqSizeV0  = 24 // MNT_ID_REQ_SIZE_VER0
	sbRdonly        = 1  // SB_RDONLY
	listChunk       = 256
	statmountBufLen = 4096
)

// mntIDReq is struct mnt_id_req, version 0.
type mntIDReq struct {
	Size  uint32
	Spare uint32
	MntID uint64
	Param uint64
}

// kernelMount is what statmount says of one mount.
type kernelMount struct {
	id, parent uint64
	point      string
	fsType     string
	// opts are the superblock's options as /proc/self/mountinfo shows them ("rw,size=...").
	opts    string
	hasOpts bool
}

// statmountRaw is statmount(2) of the mount with unique id `id` for the fields of mask: the
// answer's struct statmount and its strings, and the fields it holds (its mask).
func statmountRaw(id uint64, mask uint64) (buf []byte, got uint64, err error) {
	req := mntIDReq{Size: mntIDReqSizeV0, MntID: id, Param: mask}
	buf = make([]byte, statmountBufLen)
	for {
		_, _, errno := unix.Syscall6(unix.SYS_STATMOUNT, uintptr(unsafe.Pointer(&req)), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0, 0, 0)
		if errno == unix.EOVERFLOW && len(buf) < 1<<20 {
			buf = make([]byte, 4*len(buf))
			continue
		}
		if errno != 0 {
			return nil, 0, errno
		}
		return buf, binary.NativeEndian.Uint64(buf[smOffMask:]), nil
	}
}

// statmount asks for the mount with unique id `id`, the fields of mask.
func statmount(id uint64, mask uint64) (*kernelMount, error) {
	buf, got, err := statmountRaw(id, mask)
	if err != nil {
		return nil, err
	}
	le := binary.NativeEndian
	str := func(off int) string {
		o := int(le.Uint32(buf[off:]))
		s := buf[smHeader+o:]
		if i := bytes.IndexByte(s, 0); i >= 0 {
			s = s[:i]
		}
		return string(s)
	}
	m := &kernelMount{id: le.Uint64(buf[smOffMntID:]), parent: le.Uint64(buf[smOffMntParent:])}
	if got&statmountMntPoint != 0 {
		m.point = str(smOffMntPoint)
	}
	if got&statmountFSType != 0 {
		m.fsType = str(smOffFSType)
	}
	if got&statmountSBBasic != 0 {
		m.opts = "rw"
		if le.Uint32(buf[smOffSBFlags:])&sbRdonly != 0 {
			m.opts = "ro"
		}
		m.hasOpts = emptyOpts
		if got&statmountMntOpts != 0 {
			m.hasOpts = true
			if o := str(smOffMntOpts); o != "" {
				m.opts += "," + o
			}
		}
	}
	if mask&statmountMntBasic != 0 && got&statmountMntBasic == 0 {
		return nil, unix.ENOSYS
	}
	return m, nil
}

// supported is the kernel's STATMOUNT_SUPPORTED_MASK (0 before Linux 6.15).
func supported() uint64 {
	id, _, err := mountID("/")
	if err != nil {
		return 0
	}
	buf, got, err := statmountRaw(id, statmountSupport)
	if err != nil || got&statmountSupport == 0 {
		return 0
	}
	return binary.NativeEndian.Uint64(buf[smOffSupported:])
}

// listmount lists the children of the mount with unique id `id`.
func listmount(id uint64) ([]uint64, error) {
	var out []uint64
	ids := make([]uint64, listChunk)
	req := mntIDReq{Size: mntIDReqSizeV0, MntID: id}
	for {
		n, _, errno := unix.Syscall6(unix.SYS_LISTMOUNT, uintptr(unsafe.Pointer(&req)), uintptr(unsafe.Pointer(&ids[0])), uintptr(len(ids)), 0, 0, 0)
		if errno != 0 {
			return nil, errno
		}
		out = append(out, ids[:n]...)
		if int(n) < len(ids) {
			return out, nil
		}
		req.Param = ids[n-1] // the next call starts after the last id
	}
}

// mountID is the unique id of the mount path is on (the top of a stack at path), and whether
// path is that mount's root.
func mountID(path string) (id uint64, root bool, err error) {
	var st unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, path, unix.AT_SYMLINK_NOFOLLOW|unix.AT_NO_AUTOMOUNT, unix.STATX_MNT_ID_UNIQUE, &st); err != nil {
		return 0, false, err
	}
	if st.Mask&unix.STATX_MNT_ID_UNIQUE == 0 {
		return 0, false, unix.ENOSYS
	}
	return st.Mnt_id, st.Attributes_mask&unix.STATX_ATTR_MOUNT_ROOT != 0 && st.Attributes&unix.STATX_ATTR_MOUNT_ROOT != 0, nil
}

var (
	kernelOnce sync.Once
	kernelOK   bool
	// emptyOpts: an absent options string means the mount has none. statmount leaves
	// STATMOUNT_MNT_OPTS out of its answer for a mount without options (a tmpfs mounted with
	// none), so its absence says something only where the kernel says it supports the field
	// (STATMOUNT_SUPPORTED_MASK); elsewhere At reads the table for such a mount.
	emptyOpts bool
)

// EnvMountinfo set to "table" makes every lookup read the whole table, as before issue 52 (the
// benchmark's comparison of the two ways: volperm bench --compare mounts-kernel-vs-table).
const EnvMountinfo = "VOLPERM_MOUNTINFO"

// kernelAnswers reports whether this kernel has statx's unique mount ids, statmount and
// listmount (Linux 6.8), asked once of "/".
func kernelAnswers() bool {
	if os.Getenv(EnvMountinfo) == "table" {
		return false
	}
	kernelOnce.Do(func() {
		id, _, err := mountID("/")
		if err != nil {
			return
		}
		if _, err := statmount(id, statmountMntBasic|statmountMntPoint); err != nil {
			return
		}
		if _, err := listmount(id); err != nil {
			return
		}
		kernelOK = true
		emptyOpts = supported()&statmountMntOpts != 0
	})
	return kernelOK
}

// errFallBack says the kernel's answer cannot be used: the table is read instead.
var errFallBack = errors.New("read the mount table")

// atOrBelowKernel is AtOrBelow from the kernel's calls: the mount points at or below dir,
// deepest first, a point mounted twice listed twice.
func atOrBelowKernel(dir string) ([]string, error) {
	id, root, err := mountID(dir)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
		return nil, nil
	}
	if err != nil {
		return nil, errFallBack
	}
	var tops []uint64 // the tops of the stacks at or below dir
	if root {
		tops = []uint64{id}
	} else if tops, err = mountsInTree(dir, id); err != nil {
		return nil, err
	}
	var out []string
	seen := map[uint64]bool{}
	var below func(id uint64) error
	below = func(id uint64) error {
		kids, err := listmount(id)
		if err != nil {
			return errFallBack
		}
		for _, k := range kids {
			if seen[k] {
				continue
			}
			seen[k] = true
			m, err := statmount(k, statmountMntBasic|statmountMntPoint)
			if errors.Is(err, unix.ENOENT) {
				continue // unmounted meanwhile
			}
			if err != nil {
				return errFallBack
			}
			if !isAtOrBelow(m.point, dir) {
				continue
			}
			out = append(out, m.point)
			if err := below(k); err != nil {
				return err
			}
		}
		return nil
	}
	for _, top := range tops {
		// The top and the mounts under it on the same point (a stack), each with its children.
		for cur := top; !seen[cur]; {
			seen[cur] = true
			// A top statx just named and statmount does not know (unmounted meanwhile, or a
			// thread of another mount namespace asked): the table says.
			m, err := statmount(cur, statmountMntBasic|statmountMntPoint)
			if err != nil {
				return nil, errFallBack
			}
			if !isAtOrBelow(m.point, dir) {
				break
			}
			out = append(out, m.point)
			if err := below(cur); err != nil {
				return nil, err
			}
			if m.parent == cur {
				break // the namespace's root
			}
			p, err := statmount(m.parent, statmountMntBasic|statmountMntPoint)
			if err != nil || p.point != m.point {
				break
			}
			cur = m.parent
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out, nil
}

// mountsInTree walks dir's tree on its own mount (id) and returns the mounts whose roots are
// in it (each the top of the stack at its point); it does not enter them.
func mountsInTree(dir string, id uint64) ([]uint64, error) {
	var tops []uint64
	var walk func(d string) error
	walk = func(d string) error {
		entries, err := os.ReadDir(d)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) || errors.Is(err, unix.ENOTDIR) {
				return nil
			}
			return errFallBack
		}
		for _, e := range entries {
			p := filepath.Join(d, e.Name())
			eid, _, err := mountID(p)
			if errors.Is(err, unix.ENOENT) {
				continue
			}
			if err != nil {
				return errFallBack
			}
			if eid != id {
				tops = append(tops, eid)
				continue
			}
			if e.IsDir() {
				if err := walk(p); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return tops, walk(dir)
}

// isAtOrBelow reports whether point is dir or below it.
func isAtOrBelow(point, dir string) bool {
	return point == dir || strings.HasPrefix(point, strings.TrimSuffix(dir, "/")+"/")
}

// atKernel is At from the kernel's calls: the top mount at dir, which statx says is a mount's
// root. ok is false where the table must say (no mount options from this kernel: Linux 6.11).
func atKernel(dir string) (m *Mount, ok bool) {
	id, root, err := mountID(dir)
	if err != nil {
		return nil, errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR)
	}
	if !root {
		return nil, true
	}
	km, err := statmount(id, statmountMntBasic|statmountMntPoint|statmountFSType|statmountSBBasic|statmountMntOpts)
	if err != nil || !km.hasOpts || km.point != dir {
		return nil, false
	}
	return &Mount{Point: km.point, FSType: km.fsType, SuperOptions: km.opts}, true
}
