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
		vo := framework.VolumeObservation{Name: v.spec.Name, Type: v.typ, SetUp: v.result, SELinuxMount: k.selinux[v.spec.Name].label}
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
		if k.userns {
			k.podView(v.typ, vo.Paths)
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

// podView adds the pod's view of each owner where it differs from the disk's (docs/spec.md
// [userns.idmap]): through the idmapped mount an id of the pod's range is itself, any other
// has no mapping and shows as the overflow id.
func (k *kubelet) podView(typ string, paths []framework.PathObservation) {
	for i := range paths {
		p := &paths[i]
		if p.Type == absent {
			continue
		}
		unmapped := false
		if !mapped(p.UID) {
			p.PodUID, unmapped = ptr(int64(framework.Overflow)), true
		}
		if !mapped(p.GID) {
			p.PodGID, unmapped = ptr(int64(framework.Overflow)), true
		}
		k.tr.hit(rule.UsernsIDMap, cond(rule.Mapped, setOr(unmapped, "no", "yes")), cond(rule.Type, typ))
	}
}

func ptr[T any](v T) *T { return &v }

// made gives each allowed probe of a pod in a user namespace that makes or changes an entry
// what is at its path once every probe ran (framework.ProbeResult.Made): the model's entry,
// symlinks followed, with the pod's view of its owner ([userns.idmap]: through the idmapped
// mount what uid X of the pod makes is X on disk).
func (k *kubelet) made(probes []framework.Probe, results []framework.ProbeResult) {
	for i, p := range probes {
		v := k.volume(p.Volume)
		if !results[i].Allowed || !framework.MakesEntry(p.Op) || v == nil || v.root == nil {
			continue
		}
		f, errno := lookup(v.top, v.root, p.Path, true, nil)
		if errno != "" || f.n == nil {
			continue // removed or renamed by a later probe: nothing there
		}
		e := []framework.PathObservation{observe(p.Path, f.n)}
		k.podView(v.typ, e)
		results[i].Made = &e[0]
	}
}
