// Package knowndiff lists where Kubernetes (v1.37, or an older release where it says so) is
// known to differ from the spec (docs/spec.md
// "known difference"): every target that runs the real kubelet (upstream, kind,
// cluster) explains its failures with it.
package knowndiff

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/needs"
	"github.com/volperm/volperm/nodeimpl/atomicwriter"
)

// KnownDifference is a place where upstream v1.37 is expected to disagree with docs/spec.md
// (the seed wins): a failing case it matches is explained by Why, next to the failure.
type KnownDifference struct {
	Match func(*framework.Case) bool
	Why   string
}

// KnownDifferences lists them, one line each (docs/spec.md "known difference").
var KnownDifferences = []KnownDifference{
	{Match: emptyDirModeOn(corev1.StorageMediumMemory), Why: "upstream v1.37 chmods a Memory emptyDir before mounting tmpfs, so the pod sees tmpfs' root mode (1777), not `mode` (KEP-5502 test plan)"},
	{Match: emptyDirModeOn(corev1.StorageMediumHugePages), Why: "upstream v1.37 chmods a HugePages emptyDir before mounting hugetlbfs, so the pod sees hugetlbfs' root mode (0755), not `mode` (KEP-5502 test plan)"},
	{Match: hugePagesRestart, Why: "upstream v1.37 SetUpAt skips a ready emptyDir on Memory and the default medium only: a HugePages emptyDir is set up again at a kubelet restart (setupDir chmods the mounted root to 0777, then the walk runs), where the spec says a ready volume is left alone"},
	{Match: hostPathTypeBefore137, Why: "Kubernetes v1.34 to v1.36 do not name what a hostPath type check found (\"hostPath type check failed: /x is not a directory\"); v1.37 names it (\", it's a File\") or why it found nothing (pkg/volume/hostpath host_path.go checkType), as the spec does"},
	{Match: tokenLinkBefore136, Why: "Kubernetes v1.34 and v1.35 give a projected token's file the pod's FsUser but leave its top-level symlink root's: the lchown of the user-visible link (pkg/volume/util atomic_writer.go createUserVisibleFiles) came with v1.36"},
	{Match: otherFlexDriver, Why: "upstream has no \"not installed\" text: a flexVolume driver missing from the node fails with the plugin manager's \"no volume plugin matched\" (the spec's text is the reference node's)"},
}

// emptyDirModeOn matches cases whose pod sets an emptyDir `mode` on medium (HugePages matches
// every hugepages-<size> medium) with the kubelet's EmptyDirVolumeMode gate on at some point.
func emptyDirModeOn(medium corev1.StorageMedium) func(*framework.Case) bool {
	return func(c *framework.Case) bool {
		if c.Pod == nil || !kubeletGateEverOn(c, framework.GateEmptyDirVolumeMode) {
			return false
		}
		for _, v := range c.Pod.Spec.Volumes {
			if e := v.EmptyDir; e != nil && e.Mode != nil && strings.HasPrefix(string(e.Medium), string(medium)) {
				return true
			}
		}
		return false
	}
}

func kubeletGateEverOn(c *framework.Case, gate string) bool {
	if c.Gates.Kubelet[gate] {
		return true
	}
	for _, s := range c.After {
		if s.SetGates != nil && s.SetGates.Kubelet[gate] {
			return true
		}
	}
	return false
}

// hostPathTypeBefore137 matches cases whose kubelet is older than v1.37 and whose pod has a
// hostPath volume with a type to check.
func hostPathTypeBefore137(c *framework.Case) bool {
	if c.Pod == nil || framework.ReleaseMinor(c.Releases.Of(false)) >= 37 {
		return false
	}
	for _, v := range c.Pod.Spec.Volumes {
		if hp := v.HostPath; hp != nil && hp.Type != nil && *hp.Type != corev1.HostPathUnset {
			return true
		}
	}
	return false
}

// tokenLinkBefore136 matches cases whose kubelet is older than v1.36 and whose pod projects a
// serviceAccountToken with an FsUser (needs.HasTokenProjection, FsUserFrom): found by
// upstream@matrix on the real v1.34.4 and v1.35.4 code (86 cells of the token cases).
func tokenLinkBefore136(c *framework.Case) bool {
	if c.Pod == nil || framework.ReleaseMinor(framework.ObservedReleases(c).Kubelet) >= 36 {
		return false
	}
	return needs.HasTokenProjection(c.Pod) && atomicwriter.FsUserFrom(c.Pod) != nil
}

// Explain returns the explanation of the first known difference c matches.
func Explain(c *framework.Case) (string, bool) {
	for _, k := range KnownDifferences {
		if k.Match(c) {
			return k.Why, true
		}
	}
	return "", false
}

// otherFlexDriver matches cases whose pod has a flexVolume with a driver other than the
// harness's fixture.
func otherFlexDriver(c *framework.Case) bool {
	if c.Pod == nil {
		return false
	}
	for _, v := range c.Pod.Spec.Volumes {
		if v.FlexVolume != nil && v.FlexVolume.Driver != framework.FixtureDriver {
			return true
		}
	}
	return false
}

// hugePagesRestart: a HugePages emptyDir in a case that restarts the kubelet.
func hugePagesRestart(c *framework.Case) bool {
	if c.Pod == nil || !slices.ContainsFunc(c.After, func(s framework.Step) bool { return s.RestartKubelet }) {
		return false
	}
	return slices.ContainsFunc(c.Pod.Spec.Volumes, func(v corev1.Volume) bool {
		return v.EmptyDir != nil && strings.HasPrefix(string(v.EmptyDir.Medium), string(corev1.StorageMediumHugePages))
	})
}
