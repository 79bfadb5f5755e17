package oracle

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/rule"
)

// fixtureDriver is the flexVolume driver the harness serves (docs/spec.md "flexVolume").
const fixtureDriver = framework.FixtureDriver

// setUpFlexVolume is the blog's flexVolumeMounter.SetUpAt (seed 003) with the fixture driver:
// the dir is made 0750 (prepareForMount), populated from Case.Storage on the first SetUp only,
// and every SetUp runs the ownership walk (rw mask) when fsGroup is set and the volume is not
// readOnly, honouring fsGroupChangePolicy.
func (k *kubelet) setUpFlexVolume(v *volume) string {
	fv := v.spec.FlexVolume
	if fv.Driver != fixtureDriver {
		return fmt.Sprintf("flexVolume driver %q is not installed on this node", fv.Driver)
	}
	if v.root == nil {
		k.tr.hit(rule.FlexDir)
		v.root = newDir(0750, 0, 0)
		v.top = v.root
	}
	k.tr.hit(rule.FlexPopulate, setUpValue(k.setups))
	g := k.fsGroup()
	k.tr.hit(rule.FlexWalk, cond(rule.Access, setOr(fv.ReadOnly, "read-only", "read-write")),
		k.fsGroupCond(), setUpValue(k.setups), cond(rule.Policy, policyValue(k.pod)))
	if !v.populated {
		populate(v.root, k.storage[v.spec.Name])
		v.populated = true
	}
	if g == nil || fv.ReadOnly {
		return ok
	}
	// v1.37 volume_linux.go skipPermissionChange: OnRootMismatch skips a root that already matches.
	sc := k.pod.Spec.SecurityContext
	if sc.FSGroupChangePolicy != nil && *sc.FSGroupChangePolicy == corev1.FSGroupChangeOnRootMismatch {
		mismatch := rootMismatch(v.root, *g, false)
		k.tr.hit(rule.WalkPolicy, cond(rule.Root, setOr(mismatch == "", "match", mismatch)), setUpValue(k.setups))
		if mismatch == "" {
			return ok
		}
	}
	k.walk(v, v.root, *g, false)
	return ok
}

// populate is the fixture driver's mount: the storage's entries with exact modes and owners,
// parents first. A parent the storage does not list is made as mkdir -p would (0755, 0:0);
// "." sets the root's own mode and owner.
func populate(root *node, files []framework.File) {
	for _, f := range files {
		comps := splitPath(f.Path)
		if len(comps) == 0 {
			root.mode, root.uid, root.gid = f.Mode&07777, f.UID, f.GID
			continue
		}
		d := parentDir(root, comps)
		if d == nil {
			continue // a parent is not a directory: the driver cannot place this entry
		}
		typ := typeFile
		switch {
		case f.Dir || f.Mount:
			typ = typeDir
		case f.Symlink != "":
			typ = typeSymlink
		}
		n := d.kids[comps[len(comps)-1]]
		if n == nil || n.typ != typ {
			n = d.add(comps[len(comps)-1], typ, 0, kubeletOwner)
		}
		n.uid, n.gid = f.UID, f.GID
		n.mode = f.Mode & 07777
		n.mount = f.Mount
		if typ == typeSymlink {
			n.mode = 0777
			n.link = f.Symlink
		}
	}
}

// parentDir returns the directory that holds comps' last element, making missing parents
// (0755, 0:0); nil when a parent exists but is not a directory.
func parentDir(root *node, comps []string) *node {
	d := root
	for _, c := range comps[:len(comps)-1] {
		if d.kids[c] == nil {
			d.add(c, typeDir, 0755, kubeletOwner)
		}
		d = d.kids[c]
		if d.typ != typeDir {
			return nil
		}
	}
	return d
}
