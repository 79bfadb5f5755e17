// Package snapshot reads what a volume looks like on disk into framework.PathObservation entries:
// the same listing for every target that can see the node's filesystem (and for the probe binary).
package snapshot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"

	"github.com/volperm/volperm/framework"
)

// timestampDir matches AtomicWriter's `..2006_01_02_15_04_05.NNNN` directory
// (v1.37 pkg/volume/util/atomic_writer.go newTimestampDir).
var timestampDir = regexp.MustCompile(`^\.\.\d{4}_\d{2}_\d{2}_\d{2}_\d{2}_\d{2}\.\d+$`)

// Timestamp is how a timestamp directory is written in an Observation, so observations compare.
const Timestamp = "..TIMESTAMP"

// Absent is PathObservation.Type for a hostPath root where nothing exists after a set-up that
// succeeded (type "" or a dangling symlink): the kubelet leaves it to the container runtime.
const Absent = "absent"

// Root observes only the volume root, following symlinks: a hostPath as the container sees it.
// Nothing is there when the path does not exist (ENOENT) or one of its parents is no directory
// (ENOTDIR: a type "" hostPath below a file, which the kubelet does not check).
func Root(path string) ([]framework.PathObservation, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENOTDIR) {
		return []framework.PathObservation{{Path: ".", Type: Absent, Mode: framework.FormatMode(0)}}, nil
	} else if err != nil {
		return nil, fmt.Errorf("stat volume root %s: %w", path, err)
	}
	return []framework.PathObservation{fromStat(".", &st, "")}, nil
}

// Tree observes the root (lstat) and every entry below it, never following symlinks.
func Tree(root string) ([]framework.PathObservation, error) {
	var out []framework.PathObservation
	err := filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		var st syscall.Stat_t
		if err := syscall.Lstat(p, &st); err != nil {
			return fmt.Errorf("lstat %s: %w", p, err)
		}
		link := ""
		if st.Mode&syscall.S_IFMT == syscall.S_IFLNK {
			if link, err = os.Readlink(p); err != nil {
				return fmt.Errorf("readlink %s: %w", p, err)
			}
			link = normalize(link)
		}
		out = append(out, fromStat(normalize(rel), &st, link))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("observe volume %s: %w", root, err)
	}
	return out, nil
}

// normalize replaces every timestamp-directory element of a slash path with Timestamp.
func normalize(p string) string {
	parts := strings.Split(filepath.ToSlash(p), "/")
	for i, e := range parts {
		if timestampDir.MatchString(e) {
			parts[i] = Timestamp
		}
	}
	return strings.Join(parts, "/")
}

func fromStat(rel string, st *syscall.Stat_t, link string) framework.PathObservation {
	mode := st.Mode & 07777
	if st.Mode&syscall.S_IFMT == syscall.S_IFLNK {
		mode = 0777 // Linux reports 0777 for every symlink; say so explicitly.
	}
	return framework.PathObservation{
		Path: rel,
		Type: TypeName(st.Mode),
		Mode: framework.FormatMode(mode),
		UID:  int64(st.Uid),
		GID:  int64(st.Gid),
		Link: link,
	}
}

// TypeName names the file type bits of a stat mode as PathObservation.Type does.
func TypeName(mode uint32) string {
	switch mode & syscall.S_IFMT {
	case syscall.S_IFDIR:
		return "dir"
	case syscall.S_IFREG:
		return "file"
	case syscall.S_IFLNK:
		return "symlink"
	case syscall.S_IFSOCK:
		return "socket"
	case syscall.S_IFCHR:
		return "chardev"
	case syscall.S_IFBLK:
		return "blockdev"
	case syscall.S_IFIFO:
		return "fifo"
	}
	return "unknown"
}
