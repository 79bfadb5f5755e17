package oracle

import (
	"path"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/rule"
)

// runProbes runs the probes in order on the model; each may change it (docs/spec.md "Probes").
func (k *kubelet) runProbes(probes []framework.Probe) []framework.ProbeResult {
	var out []framework.ProbeResult
	for _, p := range probes {
		r := framework.ProbeResult{Name: p.Name, Allowed: true}
		var before []rule.Cond
		if k.tr != nil {
			before = k.probeConds(p)
		}
		errno := k.probe(p)
		if errno != "" {
			r.Allowed, r.Errno = false, errno
			k.traceProtected(p)
		}
		k.traceProbe(p, before, errno)
		k.traceReadOnly(p)
		out = append(out, r)
	}
	return out
}

// probe is one syscall as p.As on the volume's model; it returns the errno name or "".
func (k *kubelet) probe(p framework.Probe) string {
	v := k.volume(p.Volume)
	if v == nil || v.root == nil {
		// Nothing set up there: the path does not exist.
		return eNOENT
	}
	u := k.prober(p.As)
	ro := roMounts{top: framework.ReadOnlyMount(k.pod, *v.spec)}
	if m, ok := framework.ProbeMount(k.pod, p.Volume); ok {
		// docs/spec.md [mounts.recursive-read-only]: recursive makes the mounts below read-only.
		ro.sub, _ = framework.RecursiveReadOnly(m, k.rro)
	}
	// framework/probe within: paths are relative to the volume and never leave it.
	rel := path.Clean(p.Path)
	if path.IsAbs(p.Path) || rel == ".." || strings.HasPrefix(rel, "../") {
		return eINVAL
	}
	switch p.Op {
	case framework.OpCreate:
		// open(O_CREAT|O_EXCL, 0644). Owner: the prober; group: setgid rule.
		return createProbe(v, rel, u, typeFile, 0644, ro)
	case framework.OpMkdir:
		// mkdir(0755): a setgid parent passes setgid on.
		return createProbe(v, rel, u, typeDir, 0755, ro)
	case framework.OpFill:
		// open(O_CREAT|O_EXCL, 0644) as create, then write(2) of Size bytes.
		if errno := createProbe(v, rel, u, typeFile, 0644, ro); errno != "" {
			return errno
		}
		return k.fillProbe(v, rel, p.Size)
	case framework.OpRead, framework.OpWrite, framework.OpList:
		return openProbe(v, rel, p.Op, u, ro)
	case framework.OpExec:
		return execProbe(v, rel, u, noexecMount(k.pod, p.Volume))
	case framework.OpDelete:
		return unlinkProbe(v, rel, u, ro)
	case framework.OpRename:
		to := path.Clean(p.To)
		if path.IsAbs(p.To) || to == ".." || strings.HasPrefix(to, "../") {
			return eINVAL
		}
		return renameProbe(v, rel, to, u, ro)
	case framework.OpChmod:
		if p.Mode == nil {
			return eINVAL
		}
		return chmodProbe(v, rel, *p.Mode, u, ro)
	case framework.OpChown:
		if p.Owner == nil {
			return eINVAL
		}
		return chownProbe(v, rel, *p.Owner, u, ro)
	}
	return eINVAL
}

// roMounts are the mounts of a volume a probe may meet and whether each is read-only: top, the
// volume's own mount in the container (framework.ReadOnlyMount); sub, a filesystem mounted
// below it (a storage entry with mount), which a plain read-only bind leaves read-write (runc
// remounts the top only).
type roMounts struct{ top, sub bool }

// at says whether the mount n lives on is read-only.
func (r roMounts) at(n *node) bool {
	if mountOf(n) != nil {
		return r.sub
	}
	return r.top
}

// mountOf is the submount n lives on (n itself when it is one), nil for the volume's own.
func mountOf(n *node) *node {
	for ; n != nil; n = n.parent {
		if n.mount {
			return n
		}
	}
	return nil
}

// chmodProbe is chmod(2) following symlinks, in the kernel's order (docs/spec.md
// [probes.attributes]): the lookup; notify_change's EOVERFLOW for an entry whose owner or group
// has no mapping through a pod's idmapped mount; setattr_prepare's inode_owner_or_capable (the
// owner, or root overriding the entry: EPERM); a setgid bit asked by a process neither in the
// entry's group nor root over it is dropped (in_group_or_capable). On a read-only mount
// chmod_common's mnt_want_write answers EROFS after the lookup, before the rest
// ([probes.read-only]).
func chmodProbe(v *volume, rel string, mode uint32, u *prober, ro roMounts) string {
	n, errno := target(v, rel, u)
	switch {
	case errno != "":
		return errno
	case ro.at(n):
		return eROFS
	case unmappedVictim(n, u):
		return eOVERFLOW
	case u.UID != n.uid && !u.overrides(n):
		return ePERM
	}
	if mode&modeSetgid != 0 && !inGroup(u, n.gid) && !u.overrides(n) {
		mode &^= modeSetgid
	}
	n.mode = mode
	return ""
}

// chownProbe is chown(2) following symlinks, in the kernel's order (docs/spec.md
// [probes.attributes]): the lookup; chown_common's EINVAL for an id the process's user
// namespace cannot name (a pod's: 0..65535); setattr_prepare's chown_ok and chgrp_ok (root over
// the entry; else the owner, keeping its uid, to its own gid or one of its groups: EPERM).
// A file loses setuid, and setgid with group execute (should_remove_suid). On a read-only
// mount do_fchownat's mnt_want_write answers EROFS after the lookup, before chown_common.
func chownProbe(v *volume, rel string, to framework.Owner, u *prober, ro roMounts) string {
	n, errno := target(v, rel, u)
	switch {
	case errno != "":
		return errno
	case ro.at(n):
		return eROFS
	case u.userns && !(mapped(to.UID) && mapped(to.GID)):
		return eINVAL
	}
	ownerKeeps := u.UID == n.uid && to.UID == n.uid && (to.GID == n.gid || inGroup(u, to.GID))
	if !u.overrides(n) && !ownerKeeps {
		return ePERM
	}
	n.uid, n.gid = to.UID, to.GID
	if n.typ != typeDir {
		n.mode &^= modeSetuid
		if n.mode&0010 != 0 {
			n.mode &^= modeSetgid
		}
	}
	return ""
}

// target is the entry rel names, every symlink followed (chmod and chown), as u looks it up.
func target(v *volume, rel string, u *prober) (*node, string) {
	f, errno := lookup(v.top, v.root, rel, true, u)
	if errno != "" {
		return nil, errno
	}
	if f.n == nil {
		return nil, eNOENT
	}
	return f.n, ""
}

// openProbe is open(2) (then getdents for list) following symlinks: Linux may_open order —
// a directory opened for writing is EISDIR, then the permission check, then a socket is ENXIO;
// list on a non-directory fails in getdents with ENOTDIR. A regular file opened for writing
// through a read-only mount is EROFS after the permission check (do_dentry_open's
// file_get_write_access); special files take no write access there.
func openProbe(v *volume, rel string, op framework.ProbeOp, u *prober, ro roMounts) string {
	f, errno := lookup(v.top, v.root, rel, true, u)
	if errno != "" {
		return errno
	}
	n := f.n
	if n == nil {
		return eNOENT
	}
	want := permRead
	if op == framework.OpWrite {
		want = permWrite
		if n.typ == typeDir {
			return eISDIR
		}
	}
	if !may(n, u, want) {
		return eACCES
	}
	if ro.at(n) && op == framework.OpWrite && n.typ == typeFile {
		return eROFS
	}
	if n.typ == typeSocket {
		return eNXIO
	}
	if op == framework.OpList && n.typ != typeDir {
		return eNOTDIR
	}
	return ""
}

// execProbe is execve(2) (fs/exec.c do_open_execat): the lookup (search on every directory),
// then a non-regular file is EACCES, then MAY_EXEC (root: at least one x bit, generic_permission),
// then a noexec mount (path_noexec) is EACCES ([mounts.bind-mount-options]); the format is not
// the probe's (ENOEXEC counts as allowed).
func execProbe(v *volume, rel string, u *prober, noexec bool) string {
	f, errno := lookup(v.top, v.root, rel, true, u)
	if errno != "" {
		return errno
	}
	n := f.n
	switch {
	case n == nil:
		return eNOENT
	case n.typ != typeFile:
		return eACCES
	case u.overrides(n) && n.mode&0111 == 0, !u.overrides(n) && !may(n, u, permExec):
		return eACCES
	case noexec:
		return eACCES
	}
	return ""
}

// unlinkProbe is unlink(2): ENOENT, then w+x on the parent (EACCES), then the sticky rule
// (EPERM), then a directory is EISDIR. On a read-only mount do_unlinkat's mnt_want_write
// answers EROFS once the parent is found, before the name is looked up (a missing name too).
func unlinkProbe(v *volume, rel string, u *prober, ro roMounts) string {
	f, errno := lookup(v.top, v.root, rel, false, u)
	switch {
	case errno != "":
		return errno
	case f.dir == nil:
		return eBUSY // the volume root itself: a mount point
	case ro.at(f.dir):
		return eROFS
	case f.n == nil:
		return eNOENT
	case unmappedVictim(f.n, u):
		return eOVERFLOW
	case !may(f.dir, u, permWrite|permExec):
		return eACCES
	case stickyDenies(f.dir, f.n, u):
		return ePERM
	case f.n.typ == typeDir:
		return eISDIR
	}
	delete(f.dir.kids, f.name)
	return ""
}

// unmappedVictim: fs/namei.c may_delete refuses to remove an entry whose owner or group has no
// mapping through the mount before any permission check ("inode writeback is not safe when
// the uid or gid are invalid": EOVERFLOW), for every process of a pod in a user namespace
// (docs/spec.md [userns.root]).
func unmappedVictim(n *node, u *prober) bool {
	return u != nil && u.userns && !(mapped(n.uid) && mapped(n.gid))
}

// renameProbe is rename(2) in vfs_rename's order: the source must exist; may_delete on the
// source (w+x, sticky); may_create or may_delete on the target; type mismatches; a directory
// moving to another parent needs write on itself; a non-empty target directory is ENOTEMPTY.
// On a read-only mount do_renameat2's mnt_want_write answers EROFS once both parents are
// found, before either name is looked up.
func renameProbe(v *volume, from, to string, u *prober, ro roMounts) string {
	src, errno := lookup(v.top, v.root, from, false, u)
	if errno != "" {
		return errno
	}
	dst, errno := lookup(v.top, v.root, to, false, u)
	if errno != "" {
		return errno
	}
	switch {
	case src.dir == nil || dst.dir == nil:
		return eBUSY
	case mountOf(src.dir) != mountOf(dst.dir):
		return eXDEV // do_renameat2: the two parents on different mounts
	case ro.at(src.dir):
		return eROFS
	case src.n == nil:
		return eNOENT
	case src.n == dst.n:
		return "" // the same inode: rename does nothing
	case unmappedVictim(src.n, u):
		return eOVERFLOW
	case !may(src.dir, u, permWrite|permExec):
		return eACCES
	case stickyDenies(src.dir, src.n, u):
		return ePERM
	}
	isDir := src.n.typ == typeDir
	if dst.n == nil {
		if !may(dst.dir, u, permWrite|permExec) {
			return eACCES
		}
	} else {
		switch {
		case !may(dst.dir, u, permWrite|permExec):
			return eACCES
		case stickyDenies(dst.dir, dst.n, u):
			return ePERM
		case isDir && dst.n.typ != typeDir:
			return eNOTDIR
		case !isDir && dst.n.typ == typeDir:
			return eISDIR
		}
	}
	if isDir && src.dir != dst.dir && !may(src.n, u, permWrite) {
		return eACCES
	}
	if isDir && src.n.ancestorOf(dst.dir) {
		return eINVAL
	}
	if dst.n != nil && dst.n.typ == typeDir && len(dst.n.kids) > 0 {
		return eNOTEMPT
	}
	n := src.n
	delete(src.dir.kids, src.name)
	n.parent = dst.dir
	dst.dir.kids[dst.name] = n
	return ""
}

// stickyDenies is Linux check_sticky: in a sticky directory only the entry's owner, the
// directory's owner or root may remove or rename an entry.
func stickyDenies(dir, n *node, u *prober) bool {
	return dir.mode&modeSticky != 0 && !u.overrides(n) && u.UID != n.uid && u.UID != dir.uid
}

// probeConds are the conditions of probe p before it runs: the op, the permission class of its
// user on the entry whose bits decide it (the parent for create, mkdir, delete and rename, the
// entry itself otherwise), whether that parent is sticky or setgid.
func (k *kubelet) probeConds(p framework.Probe) []rule.Cond {
	conds := []rule.Cond{cond(rule.Op, string(p.Op))}
	v := k.volume(p.Volume)
	if v == nil || v.root == nil {
		return conds
	}
	f, errno := lookup(v.top, v.root, path.Clean(p.Path), followsLast(p.Op), nil)
	if errno != "" {
		return conds
	}
	decides := f.n
	switch p.Op {
	case framework.OpCreate, framework.OpMkdir, framework.OpFill, framework.OpDelete, framework.OpRename:
		decides = f.dir
	}
	if decides == nil {
		return conds
	}
	if c := probeClass(decides, k.prober(p.As)); c != "" {
		conds = append(conds, cond(rule.Class, c))
	}
	if k.userns && p.As.UID == 0 {
		conds = append(conds, cond(rule.Mapped, setOr(mapped(decides.uid) && mapped(decides.gid), "yes", "no")))
	}
	if decides.mode&modeSticky != 0 && p.As.UID != 0 && (p.Op == framework.OpDelete || p.Op == framework.OpRename) {
		conds = append(conds, cond(rule.Entry, "sticky"))
	}
	if p.Op == framework.OpCreate || p.Op == framework.OpMkdir || p.Op == framework.OpFill {
		conds = append(conds, cond(rule.Entry, setOr(decides.mode&modeSetgid != 0, "setgid", "dir")))
	}
	return conds
}

// followsLast says whether op follows a symlink its path ends in (open, chmod, chown).
func followsLast(op framework.ProbeOp) bool {
	switch op {
	case framework.OpRead, framework.OpWrite, framework.OpList, framework.OpChmod, framework.OpChown:
		return true
	}
	return false
}

// traceProtected records [probes.protected-symlinks] when p's path walk stopped at a symlink it
// may not follow: the answer then depends on the host's fs.protected_symlinks.
func (k *kubelet) traceProtected(p framework.Probe) {
	v := k.volume(p.Volume)
	if k.tr == nil || v == nil || v.root == nil {
		return
	}
	if f, _ := lookup(v.top, v.root, path.Clean(p.Path), followsLast(p.Op), k.prober(p.As)); f.protected {
		k.tr.hit(rule.ProbeProtectedLinks, cond(rule.Op, string(p.Op)), cond(rule.Class, setOr(p.As.UID == 0, "root", "other")))
	}
}

// traceReadOnly records [probes.read-only] for a probe that changes something through a
// read-only mount, with what made the mount read-only.
func (k *kubelet) traceReadOnly(p framework.Probe) {
	v := k.volume(p.Volume)
	if k.tr == nil || v == nil || v.root == nil || !framework.MakesChange(p.Op) || !framework.ReadOnlyMount(k.pod, *v.spec) {
		return
	}
	from := framework.VolumeType(*v.spec)
	if m, _ := framework.ProbeMount(k.pod, p.Volume); m.ReadOnly {
		from = "volumeMount"
	}
	k.tr.hit(rule.ProbeReadOnly, cond(rule.Op, string(p.Op)), cond(rule.ReadOnlyFrom, from))
}

// traceProbe records the probe rules p met, given its conditions and its errno.
func (k *kubelet) traceProbe(p framework.Probe, conds []rule.Cond, errno string) {
	if k.tr == nil {
		return
	}
	outcome := cond(rule.Outcome, setOr(errno == "", "ok", "error"))
	if p.Op == framework.OpChmod || p.Op == framework.OpChown {
		attr := []rule.Cond{outcome}
		for _, c := range conds {
			if c.Dim == rule.Mapped {
				k.tr.hit(rule.UsernsRoot, c, outcome)
			} else {
				attr = append(attr, c)
			}
		}
		k.tr.hit(rule.ProbeAttributes, attr...)
		return
	}
	var dac []rule.Cond
	for _, c := range conds {
		switch {
		case c == cond(rule.Entry, "sticky"):
			k.tr.hit(rule.ProbeSticky, cond(rule.Op, string(p.Op)), outcome)
		case c.Dim == rule.Entry && errno == "":
			k.tr.hit(rule.ProbeNewEntry, cond(rule.Op, string(p.Op)), c)
		case c.Dim == rule.Mapped:
			k.tr.hit(rule.UsernsRoot, c, outcome)
		case c.Dim != rule.Entry:
			dac = append(dac, c)
		}
	}
	k.tr.hit(rule.ProbeDAC, append(dac, outcome)...)
}

// createProbe is open(O_CREAT|O_EXCL) or mkdir of rel as u: an existing name (even a symlink)
// is EEXIST before any write check; then w+x on the parent; the new entry gets mode less the
// umask, owned by the prober. On a read-only mount a new name is EROFS before the parent's
// permission (lookup_open's create_error, filename_create's deferred mnt_want_write).
func createProbe(v *volume, rel string, u *prober, typ string, mode uint32, ro roMounts) string {
	f, errno := lookup(v.top, v.root, rel, false, u)
	switch {
	case errno != "":
		return errno
	case f.n != nil || f.dir == nil:
		return eEXIST
	case ro.at(f.dir):
		return eROFS
	case !may(f.dir, u, permWrite|permExec):
		return eACCES
	}
	f.dir.add(f.name, typ, mode&^umask, owner{u.UID, u.GID})
	return ""
}

// page is the page size the model counts a tmpfs in. Cases choose sizes on which 4 KiB and
// 64 KiB pages give the same answer (docs/spec.md [emptydir.size]).
const page = 4096

func pages(bytes int64) int64 { return (bytes + page - 1) / page }

// fillProbe is write(2) of size bytes to the file rel that the probe just made in v
// (docs/spec.md [emptydir.size]): hugetlbfs has no write(2) (EINVAL); a Memory emptyDir with a
// positive sizeLimit is a tmpfs of that many bytes, whole pages, that refuses what does not fit
// (ENOSPC, the file keeps what fitted); everything else takes it all.
func (k *kubelet) fillProbe(v *volume, rel string, size int64) string {
	f, _ := lookup(v.top, v.root, rel, false, nil)
	file := f.n
	var ed *corev1.EmptyDirVolumeSource
	if v.spec != nil {
		ed = v.spec.EmptyDir
	}
	if ed != nil && isHugePageMedium(ed.Medium) {
		return eINVAL
	}
	if limit := tmpfsLimit(ed); limit > 0 {
		if free := pages(limit) - usedPages(v.root); pages(size) > free {
			file.size = max(free, 0) * page
			k.traceSize(ed, "error")
			return eNOSPC
		}
	}
	file.size = size
	k.traceSize(ed, "ok")
	return ""
}

// tmpfsLimit is the size= of an emptyDir's tmpfs in bytes, 0 for none: a positive sizeLimit
// on medium Memory (v1.37 generateTmpfsMountOptions; calculateEmptyDirMemorySize also caps it
// by the node's allocatable memory and the pod's memory limit, which cases stay far below).
func tmpfsLimit(ed *corev1.EmptyDirVolumeSource) int64 {
	if ed == nil || ed.Medium != corev1.StorageMediumMemory || ed.SizeLimit == nil || ed.SizeLimit.Sign() <= 0 {
		return 0
	}
	return ed.SizeLimit.Value()
}

// usedPages is the pages the files below n hold.
func usedPages(n *node) int64 {
	var used int64
	if n.typ == typeFile {
		used += pages(n.size)
	}
	for _, kid := range n.kids {
		used += usedPages(kid)
	}
	return used
}

// traceSize records [emptydir.size] for a fill of an emptyDir.
func (k *kubelet) traceSize(ed *corev1.EmptyDirVolumeSource, outcome string) {
	if k.tr == nil || ed == nil {
		return
	}
	k.tr.hit(rule.EmptyDirSize, cond(rule.Medium, mediumOf(ed.Medium)), cond(rule.Outcome, outcome))
}

// traceRRO records [mounts.recursive-read-only] for each volume mounted readOnly by its probe
// container: its recursiveReadOnly, the runtime's support and the status (or the error).
func (k *kubelet) traceRRO() {
	if k.tr == nil {
		return
	}
	for _, v := range k.pod.Spec.Volumes {
		m, ok := framework.ProbeMount(k.pod, v.Name)
		if !ok || !m.ReadOnly {
			continue
		}
		mode := "unset"
		if m.RecursiveReadOnly != nil {
			mode = string(*m.RecursiveReadOnly)
		}
		status := framework.RecursiveReadOnlyStatus(k.pod, v.Name, k.rro)
		if _, err := framework.RecursiveReadOnly(m, k.rro); err != nil {
			status = "error"
		}
		k.tr.hit(rule.MountRRO, cond(rule.RRO, mode), cond(rule.RuntimeRRO, setOr(k.rro, "supports", "lacks")), cond(rule.Status, status))
	}
}
