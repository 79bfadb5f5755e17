package needs

import "github.com/volperm/volperm/framework"

// Capability is one thing a node's container runtime can or cannot do that decides a kubelet
// branch (issue 35: one table of them; docs/architecture.md "Recipe: add a runtime capability"):
// the need of a case that asks it of the runtime, the need of a case of a runtime without it,
// and which runtime of kind's node images has it. The cluster target reads each from the node
// (framework/cluster runtime.go, a detector per row: TestEveryCapabilityDetected).
type Capability struct {
	// Name names it in a target's details ("runtime.NAME"); for a capability a case can say its
	// runtime lacks (runtimeLacks), it is that framework.RuntimeFeature.
	Name string
	// Has and Without are the labels of the needs (table) of a case that asks it of the runtime
	// and of a case whose runtime lacks it ("" when no case is of such a runtime).
	Has, Without string
	// Reports is where a node says it has it.
	Reports string
	// Containerd2 says whether kind's node image runtime (containerd 2.4.2, runc 1.5.2) has it;
	// containerd 1.6 (kind --runtime debian) has none of them.
	Containerd2 bool
}

// Capabilities is every runtime capability volperm's cases depend on.
var Capabilities = []Capability{
	{string(framework.RuntimeUserNamespaces), UserNamespaces, RuntimeWithoutUserNamespaces,
		`status.runtimeHandlers[""].features.userNamespaces`, true},
	{string(framework.RuntimeRecursiveReadOnlyMounts), RecursiveReadOnly, RuntimeWithoutRecursiveReadOnly,
		`status.runtimeHandlers[""].features.recursiveReadOnlyMounts`, true},
	{string(framework.RuntimeSupplementalGroupsPolicy), SupplementalGroupsPolicy, RuntimeWithoutSupplementalGroupsPolicy,
		"status.features.supplementalGroupsPolicy", true},
	// docs/spec.md [mounts.bind-mount-options]: the kubelet declares the node feature
	// VolumeBindMountOptions with its gate on exactly when the runtime applies mount options.
	{string(framework.RuntimeMountOptions), MountOptions, RuntimeWithoutMountOptions,
		"status.declaredFeatures VolumeBindMountOptions", false},
	// No case says its runtime lacks image volumes: a runtime without them runs none of them.
	{"imageVolumes", ImageVolumes, "", "status.nodeInfo.containerRuntimeVersion (containerd >= 2.1, CRI-O >= 1.31)", true},
}

// Met are the labels of the capability needs a node meets whose runtime has the capabilities
// has says: each capability's Has when it has it, else its Without.
func Met(has func(Capability) bool) []string {
	var out []string
	for _, c := range Capabilities {
		switch {
		case has(c):
			out = append(out, c.Has)
		case c.Without != "":
			out = append(out, c.Without)
		}
	}
	return out
}
