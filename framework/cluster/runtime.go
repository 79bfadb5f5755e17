package cluster

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/needs"
)

// detectors read each runtime capability of framework/needs' table from a node's status, by
// the capability's Name (TestEveryCapabilityDetected keeps the two tables equal).
var detectors = map[string]func(*corev1.Node) bool{
	string(framework.RuntimeUserNamespaces):           defaultHandlerUserNamespaces,
	string(framework.RuntimeRecursiveReadOnlyMounts):  defaultHandlerRecursiveReadOnly,
	string(framework.RuntimeSupplementalGroupsPolicy): nodeSupplementalGroupsPolicy,
	string(framework.RuntimeMountOptions): func(n *corev1.Node) bool {
		return slices.Contains(n.Status.DeclaredFeatures, framework.GateVolumeBindMountOptions)
	},
	"imageVolumes": runtimeMountsImages,
}

// runtimeOf is what node n's runtime has of each capability, by name.
func runtimeOf(n *corev1.Node) map[string]bool {
	out := map[string]bool{}
	for _, c := range needs.Capabilities {
		if d := detectors[c.Name]; d != nil {
			out[c.Name] = d(n)
		}
	}
	return out
}

// What a node's runtime can do beyond user namespaces and recursive read-only mounts (those
// are its default handler's features: userns.go), as the node's status says it.

// nodeSupplementalGroupsPolicy says whether node n's runtime honours supplementalGroupsPolicy
// (v1.37 Node.status.features.supplementalGroupsPolicy, nodestatus/setters.go from the CRI's
// RuntimeFeatures): what the kubelet's admission reads (docs/spec.md [groups.admit]).
func nodeSupplementalGroupsPolicy(n *corev1.Node) bool {
	return n.Status.Features != nil && n.Status.Features.SupplementalGroupsPolicy != nil && *n.Status.Features.SupplementalGroupsPolicy
}

// runtimeMountsImages says whether node n's runtime mounts image volumes (no status field says
// it; its version does: containerd >= 2.1 (its image volume support), CRI-O >= 1.31).
func runtimeMountsImages(n *corev1.Node) bool {
	name, v, _ := strings.Cut(n.Status.NodeInfo.ContainerRuntimeVersion, "://")
	var major, minor int
	if _, err := fmt.Sscanf(v, "%d.%d", &major, &minor); err != nil {
		return false
	}
	switch name {
	case "containerd":
		return major > 2 || major == 2 && minor >= 1
	case "cri-o":
		return major > 1 || major == 1 && minor >= 31
	}
	return false
}
