// Package needs says what a case needs of a target beyond setting its volumes up, where a
// target's answer depends on the case's pod shape rather than on its gates or releases.
package needs

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/nodeimpl/atomicwriter"
)

// FsUserProbes says why a cluster cannot run c's probes ("" when it can): c projects a
// serviceAccountToken and its pod's containers all run as one uid other than 0, which the
// kubelet makes the token's owner (FsUserFrom), so the probe pod's containers run as that uid
// too (framework/cluster shapeFsUser) and cannot switch to a probe's other user (framework/probe runsAs).
func FsUserProbes(c *framework.Case) string {
	if c.Pod == nil || !HasTokenProjection(c.Pod) {
		return ""
	}
	u := atomicwriter.FsUserFrom(c.Pod)
	if u == nil || *u == 0 {
		return ""
	}
	var groups []int64
	if sc := c.Pod.Spec.SecurityContext; sc != nil && sc.FSGroup != nil {
		groups = []int64{*sc.FSGroup}
	}
	for _, p := range c.Probes {
		if p.As.UID != *u || p.As.GID != *u || !slices.Equal(p.As.Groups, groups) {
			return fmt.Sprintf("probe %q as uid %d gid %d groups %v: the probe pod's containers all run as the pod's FsUser %d (uid %d, gid %d, groups %v), so that the kubelet gives the token that owner, and cannot switch users",
				p.Name, p.As.UID, p.As.GID, p.As.Groups, *u, *u, *u, groups)
		}
	}
	return ""
}

// HasTokenProjection reports whether a volume of pod projects a serviceAccountToken.
func HasTokenProjection(pod *corev1.Pod) bool {
	for _, v := range pod.Spec.Volumes {
		if v.Projected == nil {
			continue
		}
		for _, src := range v.Projected.Sources {
			if src.ServiceAccountToken != nil {
				return true
			}
		}
	}
	return false
}
