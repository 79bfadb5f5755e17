package oracle

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework/rule"
)

// setUpHostPath is v1.37 pkg/volume/hostpath/host_path.go hostPathMounter.SetUp on the host
// model: "" checks nothing, the others run checkType (seed 001). The paths in error texts are
// the pod's, never a host root. hostPath never gets an ownership change (seed 003).
func (k *kubelet) setUpHostPath(v *volume) string {
	hp := v.spec.HostPath
	v.top = k.host
	var check string
	if k.tr != nil {
		check = hostCheck(k.host, hp.Path, *hp.Type)
		k.tr.hit(rule.HostPathCheck, cond(rule.HostCheck, check))
		k.tr.hit(rule.HostPathSymlink, cond(rule.Path, hostPathRoute(k.host, hp.Path)))
		k.tr.hit(rule.HostPathNoOwner, k.fsGroupCond(), setUpValue(k.setups))
	}
	res := checkHostPathType(k.host, hp.Path, *hp.Type)
	if strings.HasSuffix(check, "/created") {
		k.tr.hit(rule.HostPathCreate, cond(rule.HostType, string(*hp.Type)), cond(rule.Outcome, setOr(res == ok, "ok", "error")))
	}
	if k.setups > 0 {
		k.tr.hit(rule.HostPathRecheck, cond(rule.Outcome, setOr(res == ok, "ok", "error")))
	}
	// The container sees what is at the path, symlinks followed (docs/spec.md "Snapshot").
	v.root, _ = stat(k.host, hp.Path)
	return res
}

// checkHostPathType is host_path.go checkTypeInternal.
func checkHostPathType(host *node, p string, t corev1.HostPathType) string {
	exists := func() bool { n, _ := stat(host, p); return n != nil }
	switch t {
	case corev1.HostPathUnset:
		return ok
	case corev1.HostPathDirectoryOrCreate:
		if !exists() {
			return makeDir(host, p)
		}
		return typeMatchedOrError(host, p, typeDir, "directory")
	case corev1.HostPathDirectory:
		return typeMatchedOrError(host, p, typeDir, "directory")
	case corev1.HostPathFileOrCreate:
		if !exists() {
			return makeFile(host, p)
		}
		return typeMatchedOrError(host, p, typeFile, "file")
	case corev1.HostPathFile:
		return typeMatchedOrError(host, p, typeFile, "file")
	case corev1.HostPathSocket:
		return typeMatchedOrError(host, p, typeSocket, "socket file")
	case corev1.HostPathCharDev:
		return typeMatchedOrError(host, p, typeCharDev, "character device")
	case corev1.HostPathBlockDev:
		return typeMatchedOrError(host, p, typeBlockDev, "block device")
	}
	// checkTypeInternal default (admission rejects unknown types first).
	return fmt.Sprintf("%s is an invalid volume type", t)
}

// hostFileType names entry types as v1.37 pkg/volume/util/hostutil getFileType does.
var hostFileType = map[string]string{
	typeDir:      "Directory",
	typeFile:     "File",
	typeSocket:   "Socket",
	typeCharDev:  "CharDevice",
	typeBlockDev: "BlockDevice",
}

// typeMatchedOrError is host_path.go typeMatchedOrError with hostutil getFileType's texts
// (os.Stat, symlinks followed; nothing there: `path "<p>" does not exist`).
func typeMatchedOrError(host *node, p, want, word string) string {
	n, errno := stat(host, p)
	if n != nil && n.typ == want {
		return ok
	}
	if n == nil {
		cause := fmt.Sprintf("path %q does not exist", p)
		if errno != eNOENT {
			cause = fmt.Sprintf("stat %s: %s", p, errnoText[errno])
		}
		return fmt.Sprintf("hostPath type check failed, %s is not a %s, unable to determine its type: %s", p, word, cause)
	}
	return fmt.Sprintf("hostPath type check failed: %s is not a %s, it's a %s", p, word, hostFileType[n.typ])
}

// makeDir is host_path.go makeDir: os.MkdirAll(p, 0755), an "exists" error ignored.
func makeDir(host *node, p string) string {
	if errno, at := mkdirAll(host, p); errno != "" && errno != eEXIST {
		return fmt.Sprintf("mkdir %s: %s", at, errnoText[errno])
	}
	return ok
}

// mkdirAll is Go's os.MkdirAll(p, 0755) run by the kubelet (umask 022: 0755, root's, group
// from a setgid parent). It returns the errno and the path it failed on.
func mkdirAll(host *node, p string) (string, string) {
	if n, _ := stat(host, p); n != nil {
		if n.typ == typeDir {
			return "", ""
		}
		return eNOTDIR, p
	}
	i := len(p) - 1
	for i >= 0 && p[i] == '/' {
		i--
	}
	for i >= 0 && p[i] != '/' {
		i--
	}
	if i < 0 {
		i = 0
	}
	if parent := p[:i]; parent != "" {
		if errno, at := mkdirAll(host, parent); errno != "" {
			return errno, at
		}
	}
	f, errno := lookup(host, host, p, false, nil)
	switch {
	case errno != "":
	case f.n != nil || f.dir == nil:
		errno = eEXIST
	default:
		f.dir.add(f.name, typeDir, 0755&^umask, kubeletOwner)
		return "", ""
	}
	// os.MkdirAll: an existing directory (e.g. "foo/.") is success.
	if l, e := lookup(host, host, p, false, nil); e == "" && l.n != nil && l.n.typ == typeDir {
		return "", ""
	}
	return errno, p
}

// makeFile is host_path.go makeFile: os.OpenFile(p, O_CREATE, 0644) as root, following a
// dangling symlink to create its target.
func makeFile(host *node, p string) string {
	f, errno := lookup(host, host, p, true, nil)
	if errno == "" && f.n == nil && f.dir == nil {
		errno = eNOENT
	}
	if errno != "" {
		return fmt.Sprintf("open %s: %s", p, errnoText[errno])
	}
	if f.n == nil {
		f.dir.add(f.name, typeFile, 0644&^umask, kubeletOwner)
	}
	return ok
}
