// Package atomicwriter is the reference node's AtomicWriter: it builds the files of secret,
// configMap, downwardAPI and projected volumes and publishes them with the upstream layout
// (`..<timestamp>` data dir, `..data` symlink swapped atomically, user-visible symlinks)
// (v1.37 pkg/volume/util/atomic_writer.go and the payload builders of pkg/volume/secret,
// configmap, downwardapi and projected).
package atomicwriter

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/volperm/volperm/nodeimpl/mutant"
)

// FileProjection is one file of a payload: its content, its exact mode and its owner.
type FileProjection struct {
	Data []byte
	Mode int32
	// FsUser is the file's owner uid (KEP-5936 `user` / `defaultUser`, resolved by Payload);
	// nil leaves the file root's. The group is never changed here (v1.37 FileProjection.FsUser).
	FsUser *int64
}

// Reserved names of v1.37 atomic_writer.go.
const (
	dataDirName       = "..data"
	newDataDirName    = "..data_tmp"
	maxFileNameLength = 255
	maxPathLength     = 4096
)

// Write publishes payload into dir like v1.37 AtomicWriter.Write:
//
//  1. validate the payload paths;
//  2. read `..data` for the current timestamp dir;
//  3. list the old paths no longer in the payload;
//  4. if no content changed and nothing is to be removed, skip 5-9 (nothing is written,
//     setPerms is not called);
//  5. create `..<timestamp>` (MkdirTemp, then chmod 0755);
//  6. write every file (parent dirs MkdirAll 0777 minus umask, file written then chmod'ed to
//     exactly Mode, then lchown'ed to FsUser when set, group unchanged);
//  7. call setPerms (when not nil);
//  8. symlink `..data_tmp -> ..<timestamp>`;
//  9. rename `..data_tmp` over `..data` (atomic);
//  10. create the missing user-visible symlinks `name -> ..data/name`, each lchown'ed to the
//     FsUser of the first payload path under name, in sorted order, when that one has an owner;
//  11. remove the user-visible names no longer in the payload;
//  12. remove the old timestamp dir.
//
// So on a first write setPerms runs before `..data` and the user-visible symlinks exist.
// Validation errors carry upstream's texts; setPerms' error is returned as it is.
func Write(dir string, payload map[string]FileProjection, setPerms func() error) error {
	// v1.37 NewAtomicWriter: the target dir must exist.
	if _, err := os.Stat(dir); os.IsNotExist(err) {
		return fmt.Errorf("atomic writer target: %w", err)
	}

	// (1) v1.37 validatePayload
	clean, err := validatePayload(payload)
	if err != nil {
		return err
	}

	// (2)
	dataDirPath := filepath.Join(dir, dataDirName)
	oldTsDir, err := os.Readlink(dataDirPath)
	if err != nil {
		if !os.IsNotExist(err) {
			return fmt.Errorf("read link for data directory: %w", err)
		}
		oldTsDir = ""
	}
	oldTsPath := filepath.Join(dir, oldTsDir)

	var toRemove sets.Set[string]
	shouldWrite := true
	if oldTsDir != "" {
		// (3)
		if toRemove, err = pathsToRemove(clean, oldTsPath); err != nil {
			return fmt.Errorf("determine user-visible files to remove in %s: %w", dir, err)
		}
		// (4) v1.37 shouldWritePayload: only content is compared, not modes.
		should, err := shouldWritePayload(clean, oldTsPath)
		if err != nil {
			return fmt.Errorf("determine whether payload should be written to %s: %w", dir, err)
		}
		if !should && len(toRemove) == 0 && !mutant.On(mutant.AtomicRewriteOnRestart) {
			// v1.37 Write: the data dir is up to date; the user-visible symlinks are still
			// (re)created below (kubernetes#121472), and the data dir is kept.
			shouldWrite = false
			oldTsDir = ""
		}
	}

	if shouldWrite {
		// (5)
		tsDir, err := newTimestampDir(dir)
		if err != nil {
			return err
		}
		tsDirName := filepath.Base(tsDir)
		// (6)
		if err := writePayloadToDir(clean, tsDir); err != nil {
			return err
		}
		// (7) v1.37 Write: permissions are set after the files are written, before the
		// ..data swap and before the user-visible symlinks are created.
		if setPerms != nil {
			if err := setPerms(); err != nil {
				return err
			}
		}
		// (8)
		newDataDirPath := filepath.Join(dir, newDataDirName)
		if err := os.Symlink(tsDirName, newDataDirPath); err != nil {
			return errorsAnd(fmt.Errorf("create symbolic link for atomic update: %w", err), os.RemoveAll(tsDir))
		}
		// (9)
		if err := os.Rename(newDataDirPath, dataDirPath); err != nil {
			rmLink := os.Remove(newDataDirPath)
			if os.IsNotExist(rmLink) {
				rmLink = nil
			}
			return errorsAnd(fmt.Errorf("rename symbolic link for data directory %s: %w", newDataDirPath, err), rmLink, os.RemoveAll(tsDir))
		}
	}

	// (10)
	if err := createUserVisibleFiles(dir, clean); err != nil {
		return fmt.Errorf("create visible symlinks in %s: %w", dir, err)
	}
	// (11)
	if err := removeUserVisiblePaths(dir, toRemove); err != nil {
		return fmt.Errorf("remove old visible symlinks: %w", err)
	}
	// (12)
	if oldTsDir != "" {
		if err := os.RemoveAll(oldTsPath); err != nil {
			return fmt.Errorf("remove old data directory %s: %w", oldTsDir, err)
		}
	}
	return nil
}

// errorsAnd is err with the cleanup errors that followed it, the first error's text first.
func errorsAnd(err error, cleanups ...error) error {
	for _, c := range cleanups {
		if c != nil {
			err = fmt.Errorf("%w (cleanup: %v)", err, c)
		}
	}
	return err
}

// validatePayload is v1.37 validatePayload: every path valid, keys cleaned.
func validatePayload(payload map[string]FileProjection) (map[string]FileProjection, error) {
	clean := make(map[string]FileProjection, len(payload))
	for k, content := range payload {
		if err := validatePath(k); err != nil {
			return nil, err
		}
		clean[filepath.Clean(k)] = content
	}
	return clean, nil
}

// validatePath is v1.37 validatePath, with its error texts.
func validatePath(targetPath string) error {
	if targetPath == "" {
		return fmt.Errorf("invalid path: must not be empty: %q", targetPath)
	}
	if path.IsAbs(targetPath) {
		return fmt.Errorf("invalid path: must be relative path: %s", targetPath)
	}
	if len(targetPath) > maxPathLength {
		return fmt.Errorf("invalid path: must be less than or equal to %d characters", maxPathLength)
	}
	items := strings.Split(targetPath, string(os.PathSeparator))
	for _, item := range items {
		if item == ".." {
			return fmt.Errorf("invalid path: must not contain '..': %s", targetPath)
		}
		if len(item) > maxFileNameLength {
			return fmt.Errorf("invalid path: filenames must be less than or equal to %d characters", maxFileNameLength)
		}
	}
	if strings.HasPrefix(items[0], "..") && len(items[0]) > 2 {
		return fmt.Errorf("invalid path: must not start with '..': %s", targetPath)
	}
	return nil
}

// shouldWritePayload is v1.37 shouldWritePayload: true if any file is missing or its content
// differs.
func shouldWritePayload(payload map[string]FileProjection, oldTsDir string) (bool, error) {
	for p, fp := range payload {
		full := filepath.Join(oldTsDir, p)
		fi, err := os.Lstat(full)
		if os.IsNotExist(err) {
			return true, nil
		}
		if err == nil && mutant.On(mutant.BlindAtomicRewriteOnOwnerChange) {
			want := int64(0)
			if fp.FsUser != nil {
				want = *fp.FsUser
			}
			if st, ok := fi.Sys().(*syscall.Stat_t); ok && int64(st.Uid) != want {
				return true, nil
			}
		}
		if mutant.On(mutant.BlindAtomicUpdateContentIgnored) {
			continue
		}
		onDisk, err := os.ReadFile(full)
		if err != nil {
			return false, err
		}
		if !bytes.Equal(fp.Data, onDisk) {
			return true, nil
		}
	}
	return false, nil
}

// pathsToRemove is v1.37 pathsToRemove: every path under the old timestamp dir that is
// neither a payload path nor one of its parent dirs.
func pathsToRemove(payload map[string]FileProjection, oldTsDir string) (sets.Set[string], error) {
	paths := sets.New[string]()
	err := filepath.Walk(oldTsDir, func(p string, _ os.FileInfo, _ error) error {
		rel := strings.TrimPrefix(strings.TrimPrefix(p, oldTsDir), string(os.PathSeparator))
		if rel != "" {
			paths.Insert(rel)
		}
		return nil
	})
	if os.IsNotExist(err) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	newPaths := sets.New[string]()
	for file := range payload {
		for sub := file; sub != ""; {
			newPaths.Insert(sub)
			sub, _ = filepath.Split(sub)
			sub = strings.TrimSuffix(sub, string(os.PathSeparator))
		}
	}
	return paths.Difference(newPaths), nil
}

// newTimestampDir is v1.37 newTimestampDir: MkdirTemp `..2006_01_02_15_04_05.N`, then chmod
// 0755 whatever the umask.
func newTimestampDir(dir string) (string, error) {
	tsDir, err := os.MkdirTemp(dir, time.Now().UTC().Format("..2006_01_02_15_04_05."))
	if err != nil {
		return "", fmt.Errorf("create new timestamp data directory: %w", err)
	}
	perm := os.FileMode(0755)
	if mutant.On(mutant.AtomicTsDir0700) {
		perm = 0700
	}
	if err := os.Chmod(tsDir, perm); err != nil {
		return "", fmt.Errorf("set mode on new timestamp data directory: %w", err)
	}
	return tsDir, nil
}

// writePayloadToDir is v1.37 writePayloadToDir.
func writePayloadToDir(payload map[string]FileProjection, dir string) error {
	for p, fp := range payload {
		mode := os.FileMode(fp.Mode)
		full := filepath.Join(dir, p)
		baseDir, _ := filepath.Split(full)
		// v1.37 writePayloadToDir: nested dirs are MkdirAll(os.ModePerm), so the umask applies
		// (0755 at umask 022), and no chmod follows.
		dirPerm := os.ModePerm
		if mutant.On(mutant.AtomicNestedDir0700) {
			dirPerm = 0700
		}
		if err := os.MkdirAll(baseDir, dirPerm); err != nil {
			return fmt.Errorf("create directory %s: %w", baseDir, err)
		}
		if err := os.WriteFile(full, fp.Data, mode); err != nil {
			return fmt.Errorf("write file %s with mode %v: %w", full, mode, err)
		}
		// v1.37 writePayloadToDir: chmod after the write so the umask does not strip Mode.
		if !mutant.On(mutant.AtomicFileUmask) {
			if err := os.Chmod(full, mode); err != nil {
				return fmt.Errorf("change file %s to mode %v: %w", full, mode, err)
			}
		}
		// v1.37 writePayloadToDir: then lchown(file, FsUser, -1) when the file has an owner.
		if fp.FsUser == nil {
			continue
		}
		if err := setOwner(full, *fp.FsUser); err != nil {
			return err
		}
		if filepath.Clean(baseDir) != filepath.Clean(dir) && mutant.On(mutant.BlindUserNestedDirChowned) {
			if err := setOwner(filepath.Clean(baseDir), *fp.FsUser); err != nil {
				return err
			}
		}
	}
	return nil
}

// setOwner is v1.37 AtomicWriter's lchown(path, uid, -1): the owner only, the group unchanged,
// a symlink itself rather than its target.
func setOwner(p string, uid int64) error {
	gid := -1
	if mutant.On(mutant.AtomicUserChownsGroup) {
		gid = int(uid)
	}
	if err := os.Lchown(p, int(uid), gid); err != nil {
		return fmt.Errorf("change file %s with owner %d: %w", p, uid, err)
	}
	return nil
}

// createUserVisibleFiles is v1.37 createUserVisibleFiles: `name -> ..data/name` for each
// top-level name that has no link yet, lchown'ed (owner only) to the FsUser of the payload path
// that created it. Upstream ranges over the payload map, so when several paths under one
// top-level directory have different owners the link's owner is whichever comes first; here the
// paths are taken in sorted order, so the first path in sorted order decides (docs/spec.md
// [atomicwriter.owner]: no case depends on that order).
func createUserVisibleFiles(dir string, payload map[string]FileProjection) error {
	paths := make([]string, 0, len(payload))
	for p := range payload {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if strings.Contains(p, string(os.PathSeparator)) && mutant.On(mutant.BlindAtomicNestedNoLink) {
			continue
		}
		linkName, _, _ := strings.Cut(p, string(os.PathSeparator))
		visible := filepath.Join(dir, linkName)
		if _, err := os.Readlink(visible); err == nil && mutant.On(mutant.AtomicUpdateRechownsLinks) {
			if owner := payload[p].FsUser; owner != nil {
				if err := setOwner(visible, *owner); err != nil {
					return err
				}
			}
			continue
		}
		if _, err := os.Readlink(visible); err != nil && os.IsNotExist(err) {
			target := filepath.Join(dataDirName, linkName)
			if mutant.On(mutant.AtomicAbsoluteLinks) {
				target = filepath.Join(dir, target)
			}
			if err := os.Symlink(target, visible); err != nil {
				return err
			}
			// v1.37 createUserVisibleFiles: lchown(visibleFile, FsUser, -1) after creating it.
			if owner := payload[p].FsUser; owner != nil && !mutant.On(mutant.AtomicUserLinkNotChowned) {
				if err := setOwner(visible, *owner); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// removeUserVisiblePaths is v1.37 removeUserVisiblePaths: only top-level names are removed;
// every removal is tried and the last error returned.
func removeUserVisiblePaths(dir string, paths sets.Set[string]) error {
	if mutant.On(mutant.AtomicUpdateKeepsLostLinks) {
		return nil
	}
	var lastErr error
	for p := range paths {
		if strings.Contains(p, string(os.PathSeparator)) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, p)); err != nil {
			lastErr = err
		}
	}
	return lastErr
}
