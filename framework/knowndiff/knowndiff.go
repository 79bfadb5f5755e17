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
// (the seed wins): a failing case it matches is explained by Why, next to the failure, when
// every line of its Diff is one the difference makes (Makes: what of which volumes it changes).
type KnownDifference struct {
	Match func(*framework.Case) bool
	Why   string
	// Makes says whether a line of the case's framework.Diff is one this difference makes.
	Makes func(c *framework.Case, line string) bool
}

// KnownDifferences lists them, one line each (docs/spec.md "known difference").
var KnownDifferences = []KnownDifference{
	{Match: emptyDirModeOn(corev1.StorageMediumMemory), Makes: onVolumes(isModeOn(corev1.StorageMediumMemory), "root path", "probe"),
		Why: "upstream v1.37 chmods a Memory emptyDir before mounting tmpfs, so the pod sees tmpfs' root mode (1777), not `mode` (KEP-5502 test plan)"},
	{Match: emptyDirModeOn(corev1.StorageMediumHugePages), Makes: onVolumes(isModeOn(corev1.StorageMediumHugePages), "root path", "probe"),
		Why: "upstream v1.37 chmods a HugePages emptyDir before mounting hugetlbfs, so the pod sees hugetlbfs' root mode (0755), not `mode` (KEP-5502 test plan)"},
	{Match: hugePagesRestart, Makes: onVolumes(isOn(corev1.StorageMediumHugePages), "root path", "top-level path", "path", "probe"),
		Why: "upstream v1.37 SetUpAt skips a ready emptyDir on Memory and the default medium only: a HugePages emptyDir is set up again at a kubelet restart (setupDir chmods the mounted root to 0777, then the walk runs), where the spec says a ready volume is left alone"},
	{Match: hostPathTypeBefore137, Makes: onVolumes(isTypedHostPath, "setUp"),
		Why: "Kubernetes v1.34 to v1.36 do not name what a hostPath type check found (\"hostPath type check failed: /x is not a directory\"); v1.37 names it (\", it's a File\") or why it found nothing (pkg/volume/hostpath host_path.go checkType), as the spec does"},
	// The link's owner decides too whether a probe may follow it where the volume's root is
	// sticky and world-writable (fs.protected_symlinks, docs/spec.md [probes.protected-symlinks]):
	// uid 1004 of fsGroup reads the token through a root-owned link (v1.35: seen by
	// upstream@matrix), not through one of FsUser's.
	{Match: tokenLinkBefore136, Makes: onVolumes(needs.ProjectsToken, "top-level path", "probe"),
		Why: "Kubernetes v1.34 and v1.35 give a projected token's file the pod's FsUser but leave its top-level symlink root's: the lchown of the user-visible link (pkg/volume/util atomic_writer.go createUserVisibleFiles) came with v1.36"},
	{Match: otherFlexDriver, Makes: onVolumes(isOtherFlexDriver, "setUp"),
		Why: "upstream has no \"not installed\" text: a flexVolume driver missing from the node fails with the plugin manager's \"no volume plugin matched\" (the spec's text is the reference node's)"},
}

// Explain returns the known differences c matches as one (normally there is one): their
// reasons, and the lines of c's Diff any of them makes.
func Explain(c *framework.Case) (framework.KnownDifference, bool) {
	var matched []KnownDifference
	for _, k := range KnownDifferences {
		if k.Match(c) {
			matched = append(matched, k)
		}
	}
	if len(matched) == 0 {
		return framework.KnownDifference{}, false
	}
	whys := make([]string, len(matched))
	for i, k := range matched {
		whys[i] = k.Why
	}
	return framework.KnownDifference{Why: strings.Join(whys, "; and "), Makes: func(line string) bool {
		return slices.ContainsFunc(matched, func(k KnownDifference) bool { return k.Makes(c, line) })
	}}, true
}

// onVolumes is a Makes: the lines of Diff about a volume of the case's pod that is matches
// (volumeLine), of one of kinds.
func onVolumes(is func(corev1.Volume) bool, kinds ...string) func(*framework.Case, string) bool {
	return func(c *framework.Case, line string) bool {
		volume, kind := volumeLine(c, line)
		if c.Pod == nil || volume == "" || !slices.Contains(kinds, kind) {
			return false
		}
		return slices.ContainsFunc(c.Pod.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == volume && is(v) })
	}
}

// volumeLine reads a line of framework.Diff (framework.DiffLineSubject): the volume it is about
// and what of it, "setUp", "path" (an entry below the root: "top-level path" for one directly in
// it, "root path" for the root), "probe" (a probe of c acting in the volume), or another field of
// the volume (type, medium, seLinuxMount, ...); "" for a line about no volume (admission, the
// container, the user namespace).
func volumeLine(c *framework.Case, line string) (volume, kind string) {
	s := framework.DiffLineSubject(line)
	switch {
	case s.Probe != "":
		for _, p := range c.Probes {
			if p.Name == s.Probe {
				return p.Volume, "probe"
			}
		}
		return "", ""
	case s.Volume == "":
		return "", ""
	case s.Field != "path":
		return s.Volume, s.Field
	case s.Path == "." || s.Path == "":
		return s.Volume, "root path"
	case !strings.Contains(s.Path, "/"):
		return s.Volume, "top-level path"
	}
	return s.Volume, "path"
}

// emptyDirModeOn matches cases whose pod sets an emptyDir `mode` on medium (HugePages matches
// every hugepages-<size> medium) with the kubelet's EmptyDirVolumeMode gate on at some point.
func emptyDirModeOn(medium corev1.StorageMedium) func(*framework.Case) bool {
	return func(c *framework.Case) bool {
		return kubeletGateEverOn(c, framework.GateEmptyDirVolumeMode) && anyVolume(c, isModeOn(medium))
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
	return framework.ReleaseMinor(c.Releases.Of(false)) < 37 && anyVolume(c, isTypedHostPath)
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

// otherFlexDriver matches cases whose pod has a flexVolume with a driver other than the
// harness's fixture.
func otherFlexDriver(c *framework.Case) bool { return anyVolume(c, isOtherFlexDriver) }

// hugePagesRestart: a HugePages emptyDir in a case that restarts the kubelet.
func hugePagesRestart(c *framework.Case) bool {
	return slices.ContainsFunc(c.After, func(s framework.Step) bool { return s.Kind() == framework.StepRestartKubelet }) &&
		anyVolume(c, isOn(corev1.StorageMediumHugePages))
}

// anyVolume says whether a volume of c's pod is one is matches: a Match of a difference is its
// Makes' volume predicate on any volume, so that the two say the same of a volume.
func anyVolume(c *framework.Case, is func(corev1.Volume) bool) bool {
	return c.Pod != nil && slices.ContainsFunc(c.Pod.Spec.Volumes, is)
}

// isOn: an emptyDir on medium (HugePages: every hugepages-<size> medium).
func isOn(medium corev1.StorageMedium) func(corev1.Volume) bool {
	return func(v corev1.Volume) bool {
		return v.EmptyDir != nil && strings.HasPrefix(string(v.EmptyDir.Medium), string(medium))
	}
}

// isModeOn: an emptyDir on medium with a `mode`.
func isModeOn(medium corev1.StorageMedium) func(corev1.Volume) bool {
	return func(v corev1.Volume) bool { return isOn(medium)(v) && v.EmptyDir.Mode != nil }
}

// isTypedHostPath: a hostPath volume with a type to check.
func isTypedHostPath(v corev1.Volume) bool {
	return v.HostPath != nil && v.HostPath.Type != nil && *v.HostPath.Type != corev1.HostPathUnset
}

// isOtherFlexDriver: a flexVolume of another driver than the harness's fixture.
func isOtherFlexDriver(v corev1.Volume) bool {
	return v.FlexVolume != nil && v.FlexVolume.Driver != framework.FixtureDriver
}
