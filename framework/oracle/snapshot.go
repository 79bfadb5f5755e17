package oracle

import (
	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/rule"
)

// snapshot is docs/spec.md "Snapshot": every volume in pod order with its latest SetUp result;
// a hostPath shows only "." (stat, symlinks followed), every other type "." and every entry
// below it (lstat). A failed SetUp has no paths.
func (k *kubelet) snapshot() []framework.VolumeObservation {
	var out []framework.VolumeObservation
	for _, v := range k.vols {
		vo := framework.VolumeObservation{Name: v.spec.Name, Type: v.typ, SetUp: v.result}
		if ed := v.spec.EmptyDir; ed != nil {
			vo.Medium = string(ed.Medium)
		}
		switch {
		case v.result == ok && v.root != nil:
			vo.Paths = []framework.PathObservation{observe(".", v.root)}
			if v.spec.HostPath == nil {
				vo.Paths = appendTree(vo.Paths, "", v.root)
			}
		case v.result == ok && v.spec.HostPath != nil:
			// docs/spec.md "Snapshot": nothing at a hostPath that set up fine is `absent`.
			k.tr.hit(rule.SnapshotAbsent, cond(rule.HostType, hostTypeValue(v.spec.HostPath.Type)))
			vo.Paths = []framework.PathObservation{{Path: ".", Type: absent, Mode: framework.FormatMode(0)}}
		}
		out = append(out, vo)
	}
	return out
}

// absent is the Type of a hostPath root with nothing there (framework/snapshot.Absent).
const absent = "absent"

// appendTree adds every entry below d, paths relative to the volume root.
func appendTree(out []framework.PathObservation, prefix string, d *node) []framework.PathObservation {
	for _, name := range d.names() {
		n := d.kids[name]
		out = append(out, observe(prefix+name, n))
		if n.typ == typeDir {
			out = appendTree(out, prefix+name+"/", n)
		}
	}
	return out
}

// observe renders one entry; Linux reports every symlink as 0777.
func observe(p string, n *node) framework.PathObservation {
	mode := n.mode
	if n.typ == typeSymlink {
		mode = 0777
	}
	return framework.PathObservation{Path: p, Type: n.typ, Mode: framework.FormatMode(mode), UID: n.uid, GID: n.gid, Link: n.link}
}
