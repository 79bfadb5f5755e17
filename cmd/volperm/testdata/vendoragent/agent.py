#!/usr/bin/env python3
"""A node agent of volperm's exec protocol, as a vendor writes one: from docs/exec-protocol.md
(the calls, the messages, the long-lived mode) and the rules it points to (docs/spec.md "Node:
volume set-up", docs/texts.md for the texts), in Python 3's standard library only.

It sets up emptyDir, hostPath, secret, configMap, downwardAPI, projected and flexVolume
(driver volperm/fixture) volumes and leaves image volumes to the runtime. Its hello lists
imageVolumes alone: no user namespaces, no supplementalGroupsPolicy, no bind mount options, no
SELinux mount decisions, so it claims none of those (docs/certify.md "Features and claims").

  agent.py hello | setup | teardown   one call: a request on stdin, the answer on stdout (v1)
  agent.py serve                      the whole run: one message per line (v2)
"""

import ctypes
import errno
import json
import os
import random
import stat
import sys
import time

V1 = "volperm.dev/exec/v1"
V2 = "volperm.dev/exec/v2"
FEATURES = ["imageVolumes"]

libc = ctypes.CDLL(None, use_errno=True)


class VolumeError(Exception):
    """A volume that could not be set up: its text is the kubelet's (docs/texts.md)."""


# --- mounts ---------------------------------------------------------------------------------

def mount(source, target, fstype, options):
    if libc.mount(source.encode(), target.encode(), fstype.encode(), 0, options.encode() if options else None) != 0:
        e = ctypes.get_errno()
        raise OSError(e, "mount %s on %s: %s" % (fstype, target, os.strerror(e)))


def unmount_all(path):
    """Unmounts every mount at or below path, the deepest first (stacked ones too)."""
    while True:
        points = mounts_at_or_below(path)
        if not points:
            return
        for p in points:
            if libc.umount2(p.encode(), 0) != 0:
                e = ctypes.get_errno()
                raise OSError(e, "unmount %s: %s" % (p, os.strerror(e)))


def mounts_at_or_below(path):
    path = os.path.realpath(path)
    out = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            # proc(5): field 5 is the mount point, octal escapes for blanks.
            point = line.split()[4].encode().decode("unicode_escape")
            if point == path or point.startswith(path + "/"):
                out.append(point)
    return sorted(out, key=len, reverse=True)


# --- the ownership walk (docs/spec.md [walk.tree], [walk.mask], [walk.policy]) ----------------

def walk(root, gid, mask):
    """lchown(-1, gid) of every entry below root, children first, root last; files |= mask,
    dirs |= mask | 0110 and setgid; symlinks are never followed nor chmodded."""
    entries = []
    for dirpath, dirnames, filenames in os.walk(root, topdown=False):
        for n in filenames + dirnames:
            entries.append(os.path.join(dirpath, n))
    entries.append(root)
    for p in entries:
        try:
            st = os.lstat(p)
            os.lchown(p, -1, gid)
            if stat.S_ISLNK(st.st_mode):
                continue
            mode = stat.S_IMODE(st.st_mode) | mask
            if stat.S_ISDIR(st.st_mode):
                mode |= 0o110 | stat.S_ISGID
            os.chmod(p, mode)
        except OSError:
            pass  # upstream ignores the walk's errors (emptyDir: `_ = ChangePermissions()`)


def fs_group(pod):
    sc = pod["spec"].get("securityContext") or {}
    return sc.get("fsGroup")


# --- emptyDir (docs/spec.md "emptyDir") ------------------------------------------------------

def huge_page_size(medium, pod):
    """upstream getPageSizeMountOption: the page size of the pod's hugepages-<size> requests."""
    spec = pod["spec"]
    found = None
    want = None if medium == "HugePages" else medium[len("HugePages-"):]
    for c in spec.get("containers", []) + spec.get("initContainers", []):
        for name in ((c.get("resources") or {}).get("requests") or {}):
            if not name.startswith("hugepages-"):
                continue
            size = name[len("hugepages-"):]
            if want is None:
                if found is not None and found != size:
                    raise VolumeError("medium: %s can't be used if container requests multiple huge page sizes" % medium)
                found = size
            elif size == want:
                found = size
    if found is None:
        raise VolumeError("medium %s: hugePages storage requested, but there is no resource request for huge pages" % medium)
    return found


def quantity_bytes(q):
    """A resource.Quantity of bytes: 1Mi, 64Ki, 1G, 100."""
    q = str(q)
    for suffix, n in (("Ki", 1 << 10), ("Mi", 1 << 20), ("Gi", 1 << 30), ("Ti", 1 << 40),
                      ("k", 10 ** 3), ("M", 10 ** 6), ("G", 10 ** 9), ("T", 10 ** 12)):
        if q.endswith(suffix):
            return int(float(q[:-len(suffix)]) * n)
    return int(float(q))


def set_up_empty_dir(req, vol, d):
    src = vol["emptyDir"]
    pod = req["pod"]
    marker = os.path.join(req["stateDir"], "ready-" + vol["name"])
    if os.path.exists(marker):
        return  # [emptydir.ready]: a ready volume is left as it is
    medium = src.get("medium") or ""
    mode = src.get("mode") if req.get("kubeletGates", {}).get("EmptyDirVolumeMode") else None
    os.makedirs(d, exist_ok=True)
    if medium == "":
        os.chmod(d, 0o777 if mode is None else mode)
    elif medium == "Memory":
        opts = ""
        size = src.get("sizeLimit")
        if size is not None and quantity_bytes(size) > 0:
            opts = "size=%d" % quantity_bytes(size)
        mount("tmpfs", d, "tmpfs", opts)
        if mode is not None:
            os.chmod(d, mode)
    elif medium.startswith("HugePages"):
        page = huge_page_size(medium, pod)
        mount("nodev", d, "hugetlbfs", "pagesize=" + page)
        if mode is not None:
            os.chmod(d, mode)
    else:
        raise VolumeError("unknown storage medium %r" % medium)
    gid = fs_group(pod)
    if gid is not None:
        walk(d, gid, 0o660)
    open(marker, "w").close()


# --- hostPath (docs/spec.md "hostPath") ------------------------------------------------------

KINDS = [(stat.S_ISDIR, "Directory"), (stat.S_ISREG, "File"), (stat.S_ISSOCK, "Socket"),
         (stat.S_ISCHR, "CharDevice"), (stat.S_ISBLK, "BlockDevice")]
WORDS = {"Directory": "directory", "DirectoryOrCreate": "directory", "File": "file",
         "FileOrCreate": "file", "Socket": "socket file", "CharDevice": "character device",
         "BlockDevice": "block device"}
WANT = {"DirectoryOrCreate": "Directory", "FileOrCreate": "File"}


def mkdir_all(path, mode):
    """Go's os.MkdirAll, whose errors docs/spec.md [hostpath.create] words: a path that is
    there and no directory is ENOTDIR; a name that is there when mkdir makes it (a dangling
    symlink, the path's or an ancestor's) is EEXIST."""
    try:
        if stat.S_ISDIR(os.stat(path).st_mode):
            return
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), path)
    except FileNotFoundError:
        pass
    parent = os.path.dirname(path.rstrip("/"))
    if parent and parent != path:
        mkdir_all(parent, mode)
    try:
        os.mkdir(path, mode)
    except FileExistsError:
        if not os.path.isdir(path):
            raise


def set_up_host_path(req, vol):
    src = vol["hostPath"]
    path = src["path"]
    typ = src.get("type") or ""
    on_host = req["hostRoot"] + path
    if typ == "":
        return
    try:
        st = os.stat(on_host)
    except FileNotFoundError:
        if typ == "DirectoryOrCreate":
            try:
                mkdir_all(on_host, 0o755)
            except FileExistsError:
                pass  # a dangling symlink on the way: the runtime's to decide ([hostpath.create])
            return
        if typ == "FileOrCreate":
            try:
                os.close(os.open(on_host, os.O_RDONLY | os.O_CREAT, 0o644))
            except OSError as e:
                raise VolumeError("open %s: %s" % (path, os.strerror(e.errno).lower()))
            return
        raise VolumeError('hostPath type check failed, %s is not a %s, unable to determine its type: path "%s" does not exist' % (path, WORDS[typ], path))
    except OSError as e:
        raise VolumeError("hostPath type check failed, %s is not a %s, unable to determine its type: stat %s: %s" % (path, WORDS[typ], path, os.strerror(e.errno).lower()))
    kind = next((k for test, k in KINDS if test(st.st_mode)), "Unknown")
    if kind != WANT.get(typ, typ):
        raise VolumeError("hostPath type check failed: %s is not a %s, it's a %s" % (path, WORDS[typ], kind))


# --- AtomicWriter volumes (docs/spec.md "AtomicWriter volumes", "File owners") ---------------

def fs_user(pod):
    """upstream FsUserFrom: the runAsUser every container shares (a container's over the pod's)."""
    spec = pod["spec"]
    pod_user = (spec.get("securityContext") or {}).get("runAsUser")
    users = set()
    containers = spec.get("initContainers", []) + spec.get("containers", []) + spec.get("ephemeralContainers", [])
    if not containers:
        return None
    for c in containers:
        u = (c.get("securityContext") or {}).get("runAsUser", pod_user)
        if u is None:
            return None
        users.add(u)
    return users.pop() if len(users) == 1 else None


class File:
    def __init__(self, data, mode, owner=None):
        self.data = data.encode() if isinstance(data, str) else data
        self.mode = mode
        self.owner = owner


def source_data(req, kind, name, optional):
    """The data of secret/NAME or configmap/NAME; None (with optional) or the NotFound text."""
    data = (req.get("sources") or {}).get(kind + "/" + name)
    if data is None:
        if optional:
            return {}
        raise VolumeError('%s "%s" not found' % (kind, name))
    return data


def keyed_payload(req, kind, src, default_mode, users, default_user):
    """A secret's or configMap's files: its items, or every key (upstream MakePayload)."""
    optional = bool(src.get("optional"))
    name = src.get("secretName") if kind == "secret" else src.get("name")
    data = source_data(req, kind, name, optional)
    out = {}
    items = src.get("items")
    if not items:
        for k, v in data.items():
            out[k] = File(v, default_mode, default_user if users else None)
        return out
    for it in items:
        if it["key"] not in data:
            if optional:
                continue
            what = "secret" if kind == "secret" else "config"
            raise VolumeError("%sreferences non-existent %s key: %s" % ("configmap " if kind == "configmap" else "", what, it["key"]))
        mode = it.get("mode", default_mode)
        owner = it.get("user", default_user) if users else None
        out[it["path"]] = File(data[it["key"]], mode, owner)
    return out


def downward_payload(req, src, default_mode, users, default_user):
    meta = req["pod"].get("metadata") or {}
    out = {}
    for it in src.get("items") or []:
        ref = it.get("fieldRef") or {}
        value = meta.get(ref.get("fieldPath", "").replace("metadata.", ""), "")
        mode = it.get("mode", default_mode)
        out[it["path"]] = File(json.dumps(value) if not isinstance(value, str) else value, mode,
                               it.get("user", default_user) if users else None)
    return out


def payload(req, vol):
    """The files of an AtomicWriter volume, path -> File, or the VolumeError of its sources."""
    pod = req["pod"]
    users = bool(req.get("kubeletGates", {}).get("AtomicWriteVolumeUserFields"))
    for kind in ("secret", "configMap", "downwardAPI"):
        src = vol.get(kind)
        if src is None:
            continue
        dm = src.get("defaultMode", 0o644)
        du = src.get("defaultUser")
        if kind == "downwardAPI":
            return downward_payload(req, src, dm, users, du)
        return keyed_payload(req, kind.lower(), src, dm, users, du)
    src = vol["projected"]
    dm = src.get("defaultMode", 0o644)
    du = src.get("defaultUser") if users else None
    out, errors = {}, []
    owner_base = fs_user(pod)
    if du is not None:
        owner_base = du
    for s in src.get("sources") or []:
        try:
            if "secret" in s:
                src_s = dict(s["secret"], secretName=s["secret"].get("name"))
                out.update(keyed_payload(req, "secret", src_s, dm, users, du))
            elif "configMap" in s:
                out.update(keyed_payload(req, "configmap", s["configMap"], dm, users, du))
            elif "downwardAPI" in s:
                out.update(downward_payload(req, s["downwardAPI"], dm, users, du))
            else:
                # serviceAccountToken, clusterTrustBundle, podCertificate ([atomicwriter.token]):
                # owned by the pod's FsUser (or defaultUser, or the source's user), 0600 when it
                # has an owner or fsGroup is set.
                kind = next(iter(s))
                t = s[kind]
                owner = t.get("user", owner_base) if users else fs_user(pod)
                mode = 0o600 if owner is not None or fs_group(pod) is not None else dm
                paths = [t.get("path")] if kind != "podCertificate" else \
                    [t.get(k) for k in ("credentialBundlePath", "keyPath", "certificateChainPath")]
                for p in paths:
                    if p:
                        out[p] = File("fake " + kind, mode, owner)
        except VolumeError as e:
            errors.append(str(e))
    if errors:
        raise VolumeError(errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]")
    return out


def nested_mount_points(pod, name):
    """upstream MakeNestedMountpoints: the mount points of a container below where it mounts
    the volume (not those below another such one), relative to the volume."""
    out = []
    spec = pod["spec"]
    for c in spec.get("initContainers", []) + spec.get("containers", []) + spec.get("ephemeralContainers", []):
        every = sorted(os.path.normpath(m["mountPath"]) for m in c.get("volumeMounts") or [])
        mine = [os.path.normpath(m["mountPath"]) for m in c.get("volumeMounts") or [] if m["name"] == name]
        for p in mine:
            if p.startswith("../"):
                raise VolumeError("invalid container mount point %s" % p)
            prefix, prev = p + "/", None
            for m in every:
                if not m.startswith(prefix) or (prev and m.startswith(prev)):
                    continue
                prev = m + "/"
                out.append(m[len(prefix):])
    return out


def current(d):
    """The payload the volume shows now: path -> bytes, below ..data."""
    data = os.path.join(d, "..data")
    if not os.path.islink(data):
        return None
    ts = os.path.join(d, os.readlink(data))
    out = {}
    for dirpath, _, filenames in os.walk(ts):
        for n in filenames:
            p = os.path.join(dirpath, n)
            with open(p, "rb") as f:
                out[os.path.relpath(p, ts)] = f.read()
    return out


def timestamp_dir(d):
    while True:
        name = time.strftime("..%Y_%m_%d_%H_%M_%S.", time.gmtime()) + str(random.randint(0, 10 ** 9))
        try:
            os.mkdir(os.path.join(d, name), 0o700)
        except FileExistsError:
            continue
        # Exactly 0755 ([atomicwriter.layout]): no setgid from a root the walk made setgid.
        os.chmod(os.path.join(d, name), 0o755)
        return name


def set_up_atomic(req, vol, d):
    pod = req["pod"]
    name = vol["name"]
    gid = fs_group(pod)
    if not os.path.isdir(d):
        # The wrapped emptyDir ([atomicwriter.root]): a configMap's on the default medium, the
        # others' on Memory, set up as any emptyDir, its fsGroup walk included ([emptydir.fsgroup]).
        os.mkdir(d)
        if "configMap" in vol:
            os.chmod(d, 0o777)
        else:
            mount("tmpfs", d, "tmpfs", "")
        if gid is not None:
            walk(d, gid, 0o660)
    files = payload(req, vol)
    for p in nested_mount_points(pod, name):
        os.makedirs(os.path.join(d, p), 0o755, exist_ok=True)
    now = current(d)
    if now is not None and now == {k: f.data for k, f in files.items()}:
        return  # [atomicwriter.unchanged]
    old = os.readlink(os.path.join(d, "..data")) if now is not None else None
    ts = timestamp_dir(d)
    for p, f in sorted(files.items()):
        full = os.path.join(d, ts, p)
        os.makedirs(os.path.dirname(full), 0o755, exist_ok=True)
        with open(full, "wb") as out:
            out.write(f.data)
        os.chmod(full, f.mode)
        if f.owner is not None:
            os.lchown(full, f.owner, -1)
    preserve = name in (req.get("preservePermissions") or []) and req.get("kubeletGates", {}).get("PreservePermissions")
    if gid is not None and not preserve:
        walk(d, gid, 0o440)
    tmp = os.path.join(d, "..data_tmp")
    os.symlink(ts, tmp)
    os.rename(tmp, os.path.join(d, "..data"))
    tops = {}
    for p, f in sorted(files.items()):
        tops.setdefault(p.split("/")[0], f)
    for top, f in tops.items():
        link = os.path.join(d, top)
        if os.path.lexists(link):
            continue
        os.symlink(os.path.join("..data", top), link)
        if f.owner is not None:
            os.lchown(link, f.owner, -1)
    for entry in os.listdir(d):
        if entry.startswith("..") or entry in tops or not os.path.islink(os.path.join(d, entry)):
            continue
        os.remove(os.path.join(d, entry))
    if old is not None:
        rmtree(os.path.join(d, old))


# --- flexVolume, driver volperm/fixture (docs/spec.md "flexVolume") --------------------------

def set_up_flex(req, vol, d):
    src = vol["flexVolume"]
    if src.get("driver") != "volperm/fixture":
        raise VolumeError('flexVolume driver "%s" is not installed on this node' % src.get("driver"))
    gid = fs_group(req["pod"])
    if gid is None or src.get("readOnly"):
        return
    sc = req["pod"]["spec"].get("securityContext") or {}
    if sc.get("fsGroupChangePolicy") == "OnRootMismatch":
        st = os.lstat(d)
        want = 0o660 | 0o110
        if stat.S_ISDIR(st.st_mode) and st.st_gid == gid and st.st_mode & stat.S_ISGID and st.st_mode & want == want:
            return
    walk(d, gid, 0o660)


# --- the calls -------------------------------------------------------------------------------

def rmtree(path):
    for dirpath, dirnames, filenames in os.walk(path, topdown=False):
        for n in filenames:
            os.remove(os.path.join(dirpath, n))
        for n in dirnames:
            p = os.path.join(dirpath, n)
            if os.path.islink(p):
                os.remove(p)
            else:
                os.rmdir(p)
    os.rmdir(path)


def setup(req, version):
    dirs = {v["name"]: v["dir"] for v in req.get("volumes") or []}
    results = []
    for vol in req["pod"]["spec"].get("volumes") or []:
        name = vol["name"]
        try:
            if "hostPath" in vol:
                set_up_host_path(req, vol)
            elif "emptyDir" in vol:
                set_up_empty_dir(req, vol, dirs[name])
            elif any(k in vol for k in ("secret", "configMap", "downwardAPI", "projected")):
                set_up_atomic(req, vol, dirs[name])
            elif "flexVolume" in vol:
                set_up_flex(req, vol, dirs[name])
            elif "image" in vol:
                pass  # the runtime's (docs/exec-protocol.md "Image volumes")
            else:
                raise VolumeError("volume type of %s is not supported by this agent" % name)
            results.append({"name": name, "ok": True})
        except VolumeError as e:
            results.append({"name": name, "ok": False, "error": str(e)})
        except OSError as e:
            results.append({"name": name, "ok": False, "error": "agent error: %s" % e})
    return {"protocolVersion": version, "volumes": results}


def teardown(req, version):
    try:
        for v in req.get("volumes") or []:
            if os.path.lexists(v["dir"]):
                unmount_all(v["dir"])
                rmtree(v["dir"])
    except OSError as e:
        return {"protocolVersion": version, "ok": False, "error": str(e)}
    return {"protocolVersion": version, "ok": True}


def answer(op, req, version):
    if req.get("protocolVersion") != version:
        raise ValueError("request in protocol %r; this agent speaks %r here" % (req.get("protocolVersion"), version))
    if op == "setup":
        return setup(req, version)
    if op == "teardown":
        return teardown(req, version)
    raise ValueError("unknown operation " + op)


def serve():
    for line in sys.stdin:
        m = json.loads(line)
        if m["op"] == "hello":
            out = {"protocolVersion": V2, "op": "hello", "features": FEATURES}
        else:
            out = answer(m["op"], m["request"], V2)
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


def main(argv):
    os.umask(0o022)
    op = argv[1] if len(argv) > 1 else ""
    if op == "serve":
        serve()
        return 0
    if op == "hello":
        json.dump({"protocolVersion": V1, "op": "hello", "features": FEATURES}, sys.stdout)
        return 0
    if op not in ("setup", "teardown"):
        print("unknown operation " + op, file=sys.stderr)
        return 2
    json.dump(answer(op, json.load(sys.stdin), V1), sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
