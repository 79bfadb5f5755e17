// Package needs is the table of what a case needs beyond a stock v1.37 cluster (issue 35:
// declared needs): each need has the label a run on real nodes leaves such cases out by
// (`--label-filter '!hugepages'`) and the reason a target that cannot meet it gives. The
// catalogue and the cases of -f files are labelled from it (Label); runtime-defined, which only
// the oracle's answer decides, is labelled by the catalogue's hostPath generator.
package needs

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/nodeimpl/atomicwriter"
)

// The labels of the needs.
const (
	// RuntimeDefined: a hostPath case whose set-up succeeds with nothing at the path, where what
	// a container sees is the runtime's choice (containerd creates a directory, Docker refuses
	// the bind): the oracle answers for volperm's own node. Only the oracle's answer tells such
	// a case, so the catalogue's hostPath generator labels it, and its row reads the label.
	RuntimeDefined      = "runtime-defined"
	HugePages           = "hugepages"
	PreservePermissions = "preserve-permissions"
	PodUpdate           = "pod-update"
	SourceUpdate        = "source-update"
	FsUserProbesLabel   = "fs-user-probes"
	PodCredentials      = "pod-credentials"
	NoServiceAccount    = "no-service-account-name"
	UserNamespaces      = "user-namespaces"
	UserNamespaceKept   = "user-namespace-restart"
	// RuntimeWithoutUserNamespaces: the case needs a node whose runtime lacks them.
	RuntimeWithoutUserNamespaces = "runtime-without-user-namespaces"
	// RecursiveReadOnly: a probe mount asks for recursiveReadOnly of a runtime that can.
	RecursiveReadOnly = "recursive-read-only"
	// RuntimeWithoutRecursiveReadOnly: the case needs a node whose runtime cannot.
	RuntimeWithoutRecursiveReadOnly = "runtime-without-recursive-read-only"
	// SupplementalGroupsPolicy: a probe runs as the container itself on a runtime that honours
	// supplementalGroupsPolicy and reports the container's groups.
	SupplementalGroupsPolicy = "supplemental-groups-policy"
	// MountOptions: a pod whose mounts keep bindMountOptions on a kubelet with the gate on, on
	// a runtime that applies them (CRI mount_options; containerd 2.4.2 has none).
	MountOptions = "mount-options"
	// RuntimeWithoutMountOptions: the case needs a node whose runtime applies no bind options.
	RuntimeWithoutMountOptions = "runtime-without-mount-options"
	// ImageVolumes: an image volume on a node, whose runtime mounts it (containerd >= 2.1,
	// CRI-O >= 1.31).
	ImageVolumes = "image-volumes"
	// SELinux: a node with SELinux on, whose kubelet's mount decisions are observed.
	SELinux = "selinux-node"
	// RuntimeWithoutSupplementalGroupsPolicy: the case needs a node whose runtime lacks it.
	RuntimeWithoutSupplementalGroupsPolicy = "runtime-without-supplemental-groups-policy"
	// NodeControl: a step restarts the kubelet or flips its gates, which volperm does only on a
	// node it controls (kind's nodes: the cluster target's NodeControl).
	NodeControl = "node-control"
)

// Need is one thing a case needs beyond a stock v1.37 cluster.
type Need struct {
	Label string
	// Reason says why a stock node or a real cluster cannot give it.
	Reason string
	// Node says that the node (kubelet half) is what lacks it; else the apiserver half.
	Node bool
	// Harness says that volperm itself cannot give it on a real cluster (an object it does
	// not make, a field not in the v1 API, a timing it does not wait for, a kubelet restart on
	// a node it does not control: a target that can lists it as met); else it is what a
	// node is (its runtime's capabilities, its huge pages): a case of another kind of node.
	// Either way a real cluster that lacks it is not the implementation the case is of
	// (NotOnClusters, docs/certify.md "Not applicable").
	Harness bool
}

// row is one need of the table: its label, whether the node half lacks it, whether volperm
// cannot give it on any real cluster, and the reason it holds for a case ("" when it does not).
type row struct {
	label   string
	node    bool
	harness bool
	of      func(c *framework.Case) string
}

// table is every need: its label, and the reason it holds for c ("" when it does not).
var table = []row{
	{HugePages, true, false, func(c *framework.Case) string {
		if c.Pod != nil && slices.ContainsFunc(c.Pod.Spec.Volumes, func(v corev1.Volume) bool {
			return v.EmptyDir != nil && strings.HasPrefix(string(v.EmptyDir.Medium), "HugePages")
		}) {
			return "an emptyDir on a HugePages medium needs huge pages allocated on the node"
		}
		return ""
	}},
	{PreservePermissions, false, true, func(c *framework.Case) string {
		if len(c.PreservePermissions) > 0 || len(c.OldPreservePermissions) > 0 ||
			c.Gates.APIServer[framework.GatePreservePermissions] || c.Gates.Kubelet[framework.GatePreservePermissions] {
			return "preservePermissions (seed 002's proposal) is not a field of the v1 API, nor its gate one of Kubernetes"
		}
		return ""
	}},
	{PodUpdate, false, true, func(c *framework.Case) string {
		if c.OldPod != nil {
			return "an update of a pod's volumes (oldPod): v1 pod volumes are immutable, only workload templates change"
		}
		return ""
	}},
	{SourceUpdate, true, true, func(c *framework.Case) string {
		if framework.UpdatesSources(c) {
			return "an update of a secret's or configMap's data (updateSources): a cluster's kubelet applies it at its next sync, up to a minute later"
		}
		return ""
	}},
	{FsUserProbesLabel, true, true, FsUserProbes},
	{NoServiceAccount, false, true, func(c *framework.Case) string {
		if c.Pod != nil && c.Pod.Spec.ServiceAccountName == "" && HasTokenProjection(c.Pod) {
			// v1.37 ValidatePodCreate's rule shows only where no admission plugin names one.
			return "a serviceAccountToken projection in a pod without serviceAccountName: a cluster's ServiceAccount admission plugin sets one before validation"
		}
		return ""
	}},
	{UserNamespaces, true, false, func(c *framework.Case) string {
		if c.Pod != nil && c.Pod.Spec.HostUsers != nil && !*c.Pod.Spec.HostUsers && !c.AdmissionOnly && !c.Lacks(framework.RuntimeUserNamespaces) {
			return "a pod with hostUsers: false needs a runtime that runs it in a user namespace with idmapped volume mounts (containerd >= 2.0, runc >= 1.2, Linux >= 6.3 for tmpfs)"
		}
		return ""
	}},
	{RuntimeWithoutUserNamespaces, true, false, func(c *framework.Case) string {
		if c.Lacks(framework.RuntimeUserNamespaces) && c.Pod != nil && !c.AdmissionOnly {
			return "a node whose runtime does not support user namespaces (its default handler reports no userNamespaces: containerd 1.6, kind's --runtime debian)"
		}
		return ""
	}},
	{RecursiveReadOnly, true, false, func(c *framework.Case) string {
		if c.Pod != nil && !c.AdmissionOnly && !c.Lacks(framework.RuntimeRecursiveReadOnlyMounts) && asksRecursiveReadOnly(c.Pod) {
			return "a recursiveReadOnly mount needs a runtime that makes a bind read-only all the way down (CRI recursive_read_only_mounts: containerd >= 2.0, runc >= 1.1, Linux >= 5.12; Docker 20.10 has none)"
		}
		return ""
	}},
	{RuntimeWithoutRecursiveReadOnly, true, false, func(c *framework.Case) string {
		if c.Lacks(framework.RuntimeRecursiveReadOnlyMounts) && c.Pod != nil && !c.AdmissionOnly {
			return "a node whose runtime cannot make recursive read-only mounts (its default handler reports no recursiveReadOnlyMounts: containerd 1.6, kind's --runtime debian)"
		}
		return ""
	}},
	{SupplementalGroupsPolicy, true, false, func(c *framework.Case) string {
		if c.Pod != nil && !c.AdmissionOnly && !c.Lacks(framework.RuntimeSupplementalGroupsPolicy) && framework.HasContainerProbes(c) {
			return "probes as the container itself need a runtime that honours supplementalGroupsPolicy and reports the container's uid, gid and groups (status.features.supplementalGroupsPolicy: containerd >= 2.0; Docker 20.10 has none)"
		}
		return ""
	}},
	{RuntimeWithoutSupplementalGroupsPolicy, true, false, func(c *framework.Case) string {
		if c.Lacks(framework.RuntimeSupplementalGroupsPolicy) && c.Pod != nil && !c.AdmissionOnly {
			return "a node whose runtime does not report supplementalGroupsPolicy (status.features: containerd 1.6, kind's --runtime debian)"
		}
		return ""
	}},
	{MountOptions, true, false, func(c *framework.Case) string {
		if c.Pod != nil && !c.AdmissionOnly && !c.Lacks(framework.RuntimeMountOptions) && framework.UsesBindMountOptions(c.Pod) &&
			c.Gates.APIServer[framework.GateVolumeBindMountOptions] && c.Gates.Kubelet[framework.GateVolumeBindMountOptions] {
			return "bindMountOptions applied need a runtime that reports CRI mount_options (KEP-5855; containerd 2.4.2 and 1.6 report none, so a kubelet there declares no VolumeBindMountOptions)"
		}
		return ""
	}},
	{RuntimeWithoutMountOptions, true, false, func(c *framework.Case) string {
		if c.Lacks(framework.RuntimeMountOptions) && c.Pod != nil && !c.AdmissionOnly {
			return "a node whose runtime applies no bind mount options, with the kubelet's VolumeBindMountOptions gate on (status.declaredFeatures without VolumeBindMountOptions: containerd 2.4.2 and 1.6)"
		}
		return ""
	}},
	{ImageVolumes, true, false, func(c *framework.Case) string {
		if c.Pod != nil && !c.AdmissionOnly && slices.ContainsFunc(c.Pod.Spec.Volumes, func(v corev1.Volume) bool { return v.Image != nil }) {
			return "an image volume needs a runtime that mounts an image's layers as a volume (CRI Mount.image: containerd >= 2.1, CRI-O >= 1.31; containerd 1.6 and Docker 20.10 have none) and the probe image on the node"
		}
		return ""
	}},
	{SELinux, true, true, func(c *framework.Case) string {
		if c.SELinux != nil && c.Pod != nil && !c.AdmissionOnly {
			return "a node with SELinux on and the PersistentVolumes of its claims: volperm observes the kubelet's SELinux mount decision in-process (reference, upstream, an exec agent with seLinuxMount) with its own label translator; this machine's kernel has SELinux off, so no node here mounts with a context"
		}
		return ""
	}},
	{RuntimeDefined, true, true, func(c *framework.Case) string {
		if slices.Contains(c.Labels, RuntimeDefined) {
			return "nothing at a hostPath, and what the container sees there is its runtime's choice (containerd makes a directory); the oracle answers for volperm's own node only"
		}
		return ""
	}},
	{UserNamespaceKept, true, true, func(c *framework.Case) string {
		if c.Pod != nil && framework.InUserNamespace(c.Pod) && !c.AdmissionOnly && slices.ContainsFunc(c.After, framework.Step.StartsKubelet) {
			return "a pod's user namespace across a kubelet restart: volperm reads it where it plays the runtime (reference, upstream, exec); a real node's running pod keeps the namespace it started with"
		}
		return ""
	}},
	{NodeControl, true, true, func(c *framework.Case) string {
		if slices.ContainsFunc(c.After, func(s framework.Step) bool {
			return s.Kind() == framework.StepRestartKubelet || s.SetsKubeletGates()
		}) {
			return "a kubelet restart or a flip of the kubelet's gates between its steps: volperm restarts a kubelet only on a node it controls (kind's); on a cluster reached through its apiserver it cannot"
		}
		return ""
	}},
	{PodCredentials, true, true, func(c *framework.Case) string {
		if c.Pod != nil && slices.ContainsFunc(c.Pod.Spec.Volumes, func(v corev1.Volume) bool {
			return v.Projected != nil && slices.ContainsFunc(v.Projected.Sources, func(p corev1.VolumeProjection) bool {
				return p.ClusterTrustBundle != nil || p.PodCertificate != nil
			})
		}) {
			return "a clusterTrustBundle or podCertificate projection needs a ClusterTrustBundle object or a signer, which volperm does not make on a cluster"
		}
		return ""
	}},
}

// Of lists what c needs beyond a stock v1.37 cluster, in table order.
func Of(c *framework.Case) []Need {
	var out []Need
	for _, n := range table {
		if why := n.of(c); why != "" {
			out = append(out, Need{Label: n.label, Reason: why, Node: n.node, Harness: n.harness})
		}
	}
	return out
}

// Half is the first need of c that the node half (node true) or the apiserver half lacks;
// met are the labels of the needs that half has beyond a stock cluster's.
func Half(c *framework.Case, node bool, met ...string) (Need, bool) {
	for _, n := range Of(c) {
		if n.Node == node && !slices.Contains(met, n.Label) {
			return n, true
		}
	}
	return Need{}, false
}

// NotOnClusters is the first need of c a real cluster whose nodes meet the node needs met does
// not meet (a need of the apiserver half is never met by one), and whether there is one: c is
// then not a case of that cluster (docs/certify.md "Not applicable"), because volperm cannot
// show it on any real cluster (Harness) or because it is a case of another kind of node.
func NotOnClusters(c *framework.Case, met ...string) (Need, bool) {
	reaches := c.Pod != nil && !c.AdmissionOnly
	for _, n := range Of(c) {
		if (reaches || !n.Node) && !slices.Contains(met, n.Label) {
			return n, true
		}
	}
	return Need{}, false
}

// Label adds to c's labels the label of each need of c it does not carry yet.
func Label(c *framework.Case) {
	for _, n := range Of(c) {
		if !slices.Contains(c.Labels, n.Label) {
			c.Labels = append(c.Labels, n.Label)
		}
	}
}

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
	return slices.ContainsFunc(pod.Spec.Volumes, ProjectsToken)
}

// ProjectsToken reports whether v is a projected volume with a serviceAccountToken source.
func ProjectsToken(v corev1.Volume) bool {
	return v.Projected != nil && slices.ContainsFunc(v.Projected.Sources, func(s corev1.VolumeProjection) bool { return s.ServiceAccountToken != nil })
}

// asksRecursiveReadOnly: a probe mount of pod (framework.ProbeMount) sets recursiveReadOnly
// Enabled or IfPossible.
func asksRecursiveReadOnly(pod *corev1.Pod) bool {
	for _, v := range pod.Spec.Volumes {
		if m, ok := framework.ProbeMount(pod, v.Name); ok && m.ReadOnly && m.RecursiveReadOnly != nil && *m.RecursiveReadOnly != corev1.RecursiveReadOnlyDisabled {
			return true
		}
	}
	return false
}
