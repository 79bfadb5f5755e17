// Package hostpath sets up hostPath volumes on the reference node: the `type` check and the
// *OrCreate creation of v1.37 pkg/volume/hostpath, on the pod's paths rooted under a host root.
// Every error names the pod's path, never the host root.
package hostpath

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/nodeimpl/mutant"
)

// Host is the host a pod's hostPath volumes live on: Root is prepended to every pod path ("" or
// "/" = the real root).
type Host struct {
	Root string
}

// RealPath is where the pod's path lives on this machine.
func (h Host) RealPath(podPath string) string {
	return filepath.Join(h.root(), filepath.Clean("/"+podPath))
}

func (h Host) root() string {
	if h.Root == "" {
		return "/"
	}
	return filepath.Clean(h.Root)
}

// podPath maps a path on this machine back to the pod's name for it.
func (h Host) podPath(real string) string {
	root := h.root()
	if root == "/" {
		return real
	}
	if rest, ok := strings.CutPrefix(real, root); ok && (rest == "" || strings.HasPrefix(rest, "/")) {
		return "/" + strings.TrimPrefix(rest, "/")
	}
	return real
}

// podErr rewrites the paths inside err's *fs.PathError / *os.LinkError / *os.SyscallError
// chain to the pod's names.
func (h Host) podErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &fs.PathError{Op: pe.Op, Path: h.podPath(pe.Path), Err: pe.Err}
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return &os.LinkError{Op: le.Op, Old: h.podPath(le.Old), New: h.podPath(le.New), Err: le.Err}
	}
	return err
}

// SetUp checks (and for *OrCreate makes) what exists at the pod's path. A nil type is "" (v1.37
// hostpath newMounterInternal: nil -> HostPathUnset). It never changes ownership (seed 003: no
// SetVolumeOwnership for hostPath) and keeps no state: a second SetUp checks again.
func (h Host) SetUp(path string, pathType *corev1.HostPathType) error {
	// v1.37 hostPathMounter.SetUp: ValidatePathNoBacksteps first, with its text.
	if slices.Contains(strings.Split(filepath.ToSlash(path), "/"), "..") || (strings.Contains(path, "..") && mutant.On(mutant.BlindHostPathKubeletDotDotInName)) {
		return fmt.Errorf("invalid HostPath `%s`: %v", path, errBacksteps)
	}
	t := corev1.HostPathUnset
	if pathType != nil {
		t = *pathType
	}
	// v1.37 hostPathMounter.SetUp: HostPathUnset means no check at all.
	if t == corev1.HostPathUnset {
		if _, err := os.Stat(h.RealPath(path)); err != nil && mutant.On(mutant.HostPathUnsetChecks) {
			return fmt.Errorf("hostPath type check failed: path %q does not exist", path)
		}
		return nil
	}
	return checkTypeInternal(&fileTypeChecker{host: h, path: path}, t)
}

// fileTypeChecker is v1.37 hostpath fileTypeChecker with hostutil's PathExists/GetFileType
// (both follow symlinks), working on the real path and naming the pod's path.
type fileTypeChecker struct {
	host Host
	path string // the pod's path
}

func (ftc *fileTypeChecker) real() string { return ftc.host.RealPath(ftc.path) }

// Exists is v1.37 fileTypeChecker.Exists over utilpath.Exists(CheckFollowSymlink): any stat
// error counts as "does not exist".
func (ftc *fileTypeChecker) Exists() bool {
	_, err := os.Stat(ftc.real())
	return err == nil
}

// errBacksteps is v1.37 pkg/volume/validation ValidatePathNoBacksteps' error.
var errBacksteps = errors.New("must not contain '..'")

// errUnknownFileType is v1.37 hostutil errUnknownFileType.
var errUnknownFileType = errors.New("only recognise file, directory, socket, block device and character device")

// GetType is v1.37 hostutil getFileType (os.Stat: follows symlinks).
func (ftc *fileTypeChecker) GetType() (corev1.HostPathType, error) {
	stat := os.Stat
	if mutant.On(mutant.HostPathLstat) {
		stat = os.Lstat
	}
	info, err := stat(ftc.real())
	if os.IsNotExist(err) {
		return "", fmt.Errorf("path %q does not exist", ftc.path)
	}
	if err != nil {
		return "", ftc.host.podErr(err)
	}
	mode := info.Mode()
	swapped := mutant.On(mutant.HostPathCharBlockSwapped)
	switch {
	case mode.IsDir():
		return corev1.HostPathDirectory, nil
	case mode.IsRegular():
		return corev1.HostPathFile, nil
	case mode&os.ModeSocket != 0:
		return corev1.HostPathSocket, nil
	case mode&os.ModeDevice != 0 && mode&os.ModeCharDevice != 0:
		if swapped {
			return corev1.HostPathBlockDev, nil
		}
		return corev1.HostPathCharDev, nil
	case mode&os.ModeDevice != 0:
		if swapped {
			return corev1.HostPathCharDev, nil
		}
		return corev1.HostPathBlockDev, nil
	}
	return "", errUnknownFileType
}

// is is v1.37 fileTypeChecker.IsDir/IsFile/IsSocket/IsChar/IsBlock: the path's type is want.
// (IsDir/IsFile also ask Exists first; GetType fails whenever Exists is false, so one predicate
// serves all five.)
func (ftc *fileTypeChecker) is(want corev1.HostPathType) func() bool {
	return func() bool {
		got, err := ftc.GetType()
		return err == nil && got == want
	}
}

// MakeDir is v1.37 hostpath makeDir: MkdirAll 0755 (the umask applies), an existing path is no
// error.
func (ftc *fileTypeChecker) MakeDir() error {
	perm := os.FileMode(0755)
	if mutant.On(mutant.HostPathDirCreate0700) {
		perm = 0700
	}
	if err := os.MkdirAll(ftc.real(), perm); err != nil && (!os.IsExist(err) || mutant.On(mutant.BlindHostPathCreateExistFails)) {
		return ftc.host.podErr(err)
	}
	return nil
}

// MakeFile is v1.37 hostpath makeFile: open O_CREATE 0644, the parent must exist, an existing
// path is no error.
func (ftc *fileTypeChecker) MakeFile() error {
	perm := os.FileMode(0644)
	if mutant.On(mutant.HostPathFileCreate0600) {
		perm = 0600
	}
	if mutant.On(mutant.HostPathFileCreateParent) {
		_ = os.MkdirAll(filepath.Dir(ftc.real()), 0755)
	}
	f, err := os.OpenFile(ftc.real(), os.O_CREATE, perm)
	if f != nil {
		f.Close()
	}
	if err != nil && !os.IsExist(err) {
		return ftc.host.podErr(err)
	}
	return nil
}

// typeMatchedOrError is v1.37 hostpath typeMatchedOrError, texts included.
func typeMatchedOrError(ftc *fileTypeChecker, match func() bool, expected string) error {
	if expected == "socket file" && ftc.Exists() && mutant.On(mutant.HostPathSocketAnything) {
		return nil
	}
	if mutant.On(mutant.HostPathTextHostRoot) {
		ftc = &fileTypeChecker{host: Host{}, path: ftc.real()}
	}
	if expected == "socket file" && mutant.On(mutant.BlindHostPathSocketWord) {
		expected = "socket"
	}
	if !match() {
		pathType, err := ftc.GetType()
		if err != nil {
			return fmt.Errorf("hostPath type check failed, %s is not a %s, unable to determine its type: %w", ftc.path, expected, err)
		}
		return fmt.Errorf("hostPath type check failed: %s is not a %s, it's a %s", ftc.path, expected, pathType)
	}
	return nil
}

// checkTypeInternal is v1.37 hostpath checkTypeInternal.
func checkTypeInternal(ftc *fileTypeChecker, pathType corev1.HostPathType) error {
	switch pathType {
	case corev1.HostPathDirectoryOrCreate:
		if !ftc.Exists() {
			return ftc.MakeDir()
		}
		if mutant.On(mutant.HostPathDirAcceptsFile) {
			return nil
		}
		fallthrough
	case corev1.HostPathDirectory:
		return typeMatchedOrError(ftc, ftc.is(corev1.HostPathDirectory), "directory")
	case corev1.HostPathFileOrCreate:
		if !ftc.Exists() {
			return ftc.MakeFile()
		}
		fallthrough
	case corev1.HostPathFile:
		return typeMatchedOrError(ftc, ftc.is(corev1.HostPathFile), "file")
	case corev1.HostPathSocket:
		return typeMatchedOrError(ftc, ftc.is(corev1.HostPathSocket), "socket file")
	case corev1.HostPathCharDev:
		return typeMatchedOrError(ftc, ftc.is(corev1.HostPathCharDev), "character device")
	case corev1.HostPathBlockDev:
		if mutant.On(mutant.BlindHostPathBlockAcceptsChar) {
			isBlock, isChar := ftc.is(corev1.HostPathBlockDev), ftc.is(corev1.HostPathCharDev)
			return typeMatchedOrError(ftc, func() bool { return isBlock() || isChar() }, "block device")
		}
		return typeMatchedOrError(ftc, ftc.is(corev1.HostPathBlockDev), "block device")
	default:
		return fmt.Errorf("%s is an invalid volume type", pathType)
	}
}
