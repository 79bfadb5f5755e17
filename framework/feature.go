package framework

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// FeatureInfo is an optional capability a vendor claims in its ConformanceReport
// (framework/certify, docs/certify.md): a claimed feature's cases are required; in a run that
// writes the report, an unclaimed one's are not applicable, not run and never required
// (suites Config.Unclaimed). A case belongs to a feature when it
// asks for the feature: its gate on in either component (in gates or a setGates step) or the
// proposal's field. A case that only checks what a component does with the feature off (field
// dropping, a kubelet ignoring the field) belongs to none: every v1.37 node must behave so.
type FeatureInfo struct {
	Name        string
	Description string
	has         func(*Case) bool
}

// Claimable features, in report order.
const (
	FeatureEmptyDirVolumeMode          = "emptyDirVolumeMode"
	FeatureAtomicWriteVolumeUserFields = "atomicWriteVolumeUserFields"
	FeaturePreservePermissions         = "preservePermissions"
	FeatureFlexVolumeAllowlist         = "flexVolumeAllowlist"
	FeatureVolumeBindMountOptions      = "volumeBindMountOptions"
	FeatureSELinuxMount                = "seLinuxMount"
	// The features of a node whose cases an exec agent runs only when its hello lists them
	// (docs/exec-protocol.md "Features"; issue 51: each optional part of the protocol that gates
	// cases is a claim, so that an agent without it is certified for what it has).
	FeatureUserNamespaces           = "userNamespaces"
	FeatureSupplementalGroupsPolicy = "supplementalGroupsPolicy"
	FeatureImageVolumes             = "imageVolumes"
)

var features = []FeatureInfo{
	{FeatureEmptyDirVolumeMode, "emptyDir mode with the alpha gate EmptyDirVolumeMode on (KEP-5502)",
		func(c *Case) bool { return c.featureGateOn(FeatureEmptyDirVolumeMode) }},
	{FeatureAtomicWriteVolumeUserFields, "defaultUser and item user on secret, configMap, downwardAPI and projected volumes with the alpha gate AtomicWriteVolumeUserFields on (KEP-5936)",
		func(c *Case) bool { return c.featureGateOn(FeatureAtomicWriteVolumeUserFields) }},
	{FeaturePreservePermissions, "preservePermissions on AtomicWriter volumes (seed 002's proposal, volperm's gate PreservePermissions)",
		func(c *Case) bool {
			return len(c.PreservePermissions) > 0 || len(c.OldPreservePermissions) > 0 || c.featureGateOn(FeaturePreservePermissions)
		}},
	{FeatureFlexVolumeAllowlist, "the flexVolume driver allowlist (seed 004's proposal)",
		func(c *Case) bool { return c.FlexVolumePolicy != nil }},
	{FeatureVolumeBindMountOptions, "bindMountOptions (noexec, nodev, nosuid) on volumeMounts with the alpha gate VolumeBindMountOptions on (KEP-5855)",
		func(c *Case) bool { return c.featureGateOn(FeatureVolumeBindMountOptions) }},
	{FeatureSELinuxMount, "SELinux mount decisions (KEP-1710) of a node with SELinux on: -o context per PersistentVolume access mode, plugin and seLinuxChangePolicy, conflicting labels (decided with volperm's label translator)",
		func(c *Case) bool { return c.SELinux != nil }},
	{FeatureUserNamespaces, "pods with hostUsers: false on the node (KEP-127): run in a user namespace of their own with their volumes idmapped, or refused by a runtime without user namespaces with the kubelet's sandbox error",
		func(c *Case) bool { return reachesNode(c) && InUserNamespace(c.Pod) }},
	{FeatureSupplementalGroupsPolicy, "supplementalGroupsPolicy on the node (KEP-3619): the kubelet admits pods by the policy, and a container's uid, gid and groups are the CRI config's, with the image's groups under Merge only",
		func(c *Case) bool {
			return reachesNode(c) && (HasContainerProbes(c) || (c.Pod.Spec.SecurityContext != nil && c.Pod.Spec.SecurityContext.SupplementalGroupsPolicy != nil))
		}},
	{FeatureImageVolumes, "image volumes on the node (KEP-4639): the kubelet leaves an image volume to the runtime, which mounts the image's files read-only, never walked by fsGroup",
		func(c *Case) bool {
			return reachesNode(c) && slices.ContainsFunc(c.Pod.Spec.Volumes, func(v corev1.Volume) bool { return v.Image != nil })
		}},
}

// reachesNode: c's pod goes on to a kubelet when admitted (Admitted.ReachesNode, before
// admission). A node feature's cases are those whose pod reaches a node: the apiserver's rules
// for the same pods (hostUsers: false with hostNetwork, an unknown policy) are every apiserver's.
func reachesNode(c *Case) bool {
	return c.Pod != nil && !c.AdmissionOnly && c.PersistentVolume == nil
}

// Features lists the claimable features in report order.
func Features() []FeatureInfo { return slices.Clone(features) }

// FeatureNames lists the names of the claimable features.
func FeatureNames() []string {
	out := make([]string, len(features))
	for i, f := range features {
		out[i] = f.Name
	}
	return out
}

// CaseFeatures lists the features c belongs to, in report order.
func CaseFeatures(c *Case) []string {
	var out []string
	for _, f := range features {
		if f.has(c) {
			out = append(out, f.Name)
		}
	}
	return out
}

// ClaimChecker is a target (or a half of a Pair) that can tell before a run that it cannot
// have a claimed feature: an exec agent whose hello does not list the part of the protocol a
// claim needs (issue 51: refused at the start, not found missing at the end).
type ClaimChecker interface {
	// CheckClaims says why the implementation cannot have one of claims; nil when it may.
	CheckClaims(claims []string) error
}

// ParseClaims reads a comma-separated list of feature names ("" is none).
func ParseClaims(s string) ([]string, error) {
	var out []string
	for _, n := range strings.Split(s, ",") {
		if n = strings.TrimSpace(n); n == "" {
			continue
		}
		if !slices.Contains(FeatureNames(), n) {
			return nil, &UnknownFeatureError{Name: n}
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out, nil
}

// UnknownFeatureError names a claim that is no feature.
type UnknownFeatureError struct{ Name string }

func (e *UnknownFeatureError) Error() string {
	return "unknown feature " + e.Name + ": claim some of " + strings.Join(FeatureNames(), ", ")
}

// gateOn reports whether c turns gate on in either component, at creation or in a step.
func (c *Case) gateOn(gate string) bool {
	sets := []Gates{c.Gates}
	for _, s := range c.After {
		if s.SetGates != nil {
			sets = append(sets, *s.SetGates)
		}
	}
	for _, g := range sets {
		if g.APIServer[gate] || g.Kubelet[gate] {
			return true
		}
	}
	return false
}

// featureGateOn reports whether c turns on a gate (gateTable) whose feature is feature.
func (c *Case) featureGateOn(feature string) bool {
	for _, g := range gateTable {
		if g.Feature == feature && c.gateOn(g.Name) {
			return true
		}
	}
	return false
}
