package oracle

import (
	"path"

	"github.com/volperm/volperm/framework"
)

// hostDefaultMode is the mode of a host fixture whose Mode is 0 (docs/spec.md "The order of
// events" 3: dir 0755, file 0644, socket 0755, char/block device 0644).
var hostDefaultMode = map[framework.ObjectKind]uint32{
	framework.KindDirectory: 0755,
	framework.KindFile:      0644,
	framework.KindSocket:    0755,
	framework.KindCharDev:   0644,
	framework.KindBlockDev:  0644,
}

// hostEntryType maps a fixture kind to the entry type it makes.
var hostEntryType = map[framework.ObjectKind]string{
	framework.KindDirectory: typeDir,
	framework.KindFile:      typeFile,
	framework.KindSocket:    typeSocket,
	framework.KindCharDev:   typeCharDev,
	framework.KindBlockDev:  typeBlockDev,
}

// buildHost makes the host as the fixtures leave it (docs/spec.md "The order of events" 3):
// parents of every object (0755, 0:0) first, then every object but symlinks, then symlinks
// (targets are absolute pod-visible paths). "nothing" makes only the parents. Everything is
// root's and gets exactly its mode.
func buildHost(objs []framework.HostObject) *node {
	root := newDir(0755, 0, 0)
	for _, o := range objs {
		mkdirAll(root, path.Dir(cleanAbs(o.Path)))
	}
	for _, symlinks := range []bool{false, true} {
		for _, o := range objs {
			if (o.Kind == framework.KindSymlink) != symlinks || o.Kind == framework.KindNothing {
				continue
			}
			p := cleanAbs(o.Path)
			f, errno := lookup(root, root, p, false, nil)
			if errno != "" || f.n != nil || f.dir == nil {
				// The object's place is taken: framework/hostfix fails such a case before set-up.
				continue
			}
			if o.Kind == framework.KindSymlink {
				f.dir.add(f.name, typeSymlink, 0777, kubeletOwner).link = o.Target
				continue
			}
			mode := o.Mode
			if mode == 0 {
				mode = hostDefaultMode[o.Kind]
			}
			n := f.dir.add(f.name, hostEntryType[o.Kind], mode, kubeletOwner)
			n.mode = mode & 07777 // hostfix chmods: the umask and a setgid parent do not change it
		}
	}
	return root
}

// cleanAbs makes p an absolute, clean slash path.
func cleanAbs(p string) string { return path.Clean("/" + p) }
