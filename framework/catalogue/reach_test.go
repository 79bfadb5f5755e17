package catalogue_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/catalogue"
	"github.com/volperm/volperm/framework/oracle"
)

// TestProbesReachTheirEntries: a probe of an entry below a volume's root by a user who cannot
// search that root is answered by the root (EACCES), whatever the entry's own bits, owner or
// group say: such a probe checks nothing of what its case names. (Found in session 12: 13 of
// the 16 probes of the [probes.dac] matrix were answered by the fixture driver's 0750 root.)
// A probe of the root's own names (create, delete, rename of a top-level entry) is decided by
// the root and stays allowed.
func TestProbesReachTheirEntries(t *testing.T) {
	for _, c := range catalogue.All() {
		o := oracle.Expect(c)
		roots := map[string]framework.PathObservation{}
		for _, v := range o.Volumes {
			if len(v.Paths) > 0 && v.Paths[0].Path == "." && v.Paths[0].Type == "dir" {
				roots[v.Name] = v.Paths[0]
			}
		}
		for _, p := range c.Probes {
			r, ok := roots[p.Volume]
			if !ok || p.As.UID == 0 || p.Path == "." || !decidedBelowRoot(p) || searches(r, p.As) {
				continue
			}
			t.Errorf("case %q: probe %q by uid %d cannot search the volume's root (%s %d:%d): the root answers it, not %s",
				c.Name, p.Name, p.As.UID, r.Mode, r.UID, r.GID, p.Path)
		}
	}
}

// decidedBelowRoot says whether an entry other than the volume's root decides p: the entry itself
// (open, chmod, chown) or a parent below the root.
func decidedBelowRoot(p framework.Probe) bool {
	if strings.Contains(p.Path, "/") {
		return true
	}
	switch p.Op {
	case framework.OpRead, framework.OpWrite, framework.OpList, framework.OpChmod, framework.OpChown:
		return true
	}
	return false
}

// searches says whether u may search the directory r as the pod sees it (Linux DAC; the owner
// class first, then the group's).
func searches(r framework.PathObservation, u framework.User) bool {
	uid, gid := r.UID, r.GID
	if r.PodUID != nil {
		uid = *r.PodUID
	}
	if r.PodGID != nil {
		gid = *r.PodGID
	}
	mode, _ := strconv.ParseUint(r.Mode, 8, 32)
	switch {
	case u.UID == uid:
		mode >>= 6
	case u.GID == gid || contains(u.Groups, gid):
		mode >>= 3
	}
	return mode&1 != 0
}

func contains(l []int64, x int64) bool {
	for _, y := range l {
		if y == x {
			return true
		}
	}
	return false
}
