// Package hostfix creates a Case's host fixtures (what exists at a hostPath before set-up) under
// a host root, so pod paths like /var/run/docker.sock never touch the real host.
package hostfix

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/volperm/volperm/framework"
)

// Default modes when HostObject.Mode is 0 (docs/spec.md "hostPath"): what mkdir/creat/bind make
// under umask 022.
var defaultMode = map[framework.ObjectKind]uint32{
	framework.KindDirectory: 0755,
	framework.KindFile:      0644,
	framework.KindSocket:    0755,
	framework.KindCharDev:   0644,
	framework.KindBlockDev:  0644,
}

// Device numbers of the fixtures: /dev/null and /dev/loop0's numbers; nothing opens them.
var (
	charDev  = unix.Mkdev(1, 3)
	blockDev = unix.Mkdev(7, 0)
)

// Path maps a pod-visible absolute path into hostRoot.
func Path(hostRoot, podPath string) string {
	return filepath.Join(hostRoot, filepath.Clean("/"+podPath))
}

// Create makes objs under hostRoot: parents of every object (0755) first, then every object that
// is not a symlink, then symlinks (pointing into hostRoot). KindNothing creates only the parents.
func Create(hostRoot string, objs []framework.HostObject) error {
	for _, o := range objs {
		if err := os.MkdirAll(filepath.Dir(Path(hostRoot, o.Path)), 0755); err != nil {
			return fmt.Errorf("host fixture %s: %w", o.Path, err)
		}
	}
	for _, pass := range []bool{false, true} {
		for _, o := range objs {
			if (o.Kind == framework.KindSymlink) != pass {
				continue
			}
			if err := create(hostRoot, o); err != nil {
				return fmt.Errorf("host fixture %s (%s): %w", o.Path, o.Kind, err)
			}
		}
	}
	return nil
}

func create(hostRoot string, o framework.HostObject) error {
	p := Path(hostRoot, o.Path)
	mode := o.Mode
	if mode == 0 {
		mode = defaultMode[o.Kind]
	}
	var err error
	switch o.Kind {
	case framework.KindNothing:
		return nil
	case framework.KindSymlink:
		if !strings.HasPrefix(o.Target, "/") {
			return fmt.Errorf("symlink target %q must be an absolute pod path", o.Target)
		}
		return os.Symlink(Path(hostRoot, o.Target), p)
	case framework.KindDirectory:
		err = unix.Mkdir(p, mode)
	case framework.KindFile:
		err = unix.Mknod(p, unix.S_IFREG|mode, 0)
	case framework.KindSocket:
		err = unix.Mknod(p, unix.S_IFSOCK|mode, 0)
	case framework.KindCharDev:
		err = unix.Mknod(p, unix.S_IFCHR|mode, int(charDev))
	case framework.KindBlockDev:
		err = unix.Mknod(p, unix.S_IFBLK|mode, int(blockDev))
	default:
		return fmt.Errorf("unknown kind %q", o.Kind)
	}
	if err != nil {
		return err
	}
	return unix.Chmod(p, mode) // the umask must not change what the case asked for
}
