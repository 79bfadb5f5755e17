package kind

import (
	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/targets/kind/nodeimage"
)

// The target's flags (volperm run, observe, diff); it also reads cluster.FlagProbeImage.
const (
	FlagNodeImage = "node-image"
	FlagKeep      = "keep"
	// FlagKubernetesVersion is the release of the node image (nodeimage.Options.Release).
	FlagKubernetesVersion = "kubernetes-version"
	// FlagRuntime is the container runtime of the node image (nodeimage.Options.Runtime).
	FlagRuntime = "runtime"
)

func init() {
	framework.RegisterTargetFlag(framework.TargetFlag{Name: FlagNodeImage, Owner: Name, Usage: "kind node image (built offline and cached when empty: volperm cluster image)"})
	framework.RegisterTargetFlag(framework.TargetFlag{Name: FlagKubernetesVersion, Owner: Name, Usage: "the Kubernetes release of the kind cluster, v1.N.P of a supported minor (default " + nodeimage.KubernetesVersion + "); its node image is built offline and cached per release; with kind@matrix, the control plane's release"})
	framework.RegisterTargetFlag(framework.TargetFlag{Name: FlagRuntime, Owner: Name, Usage: "the container runtime of the kind cluster's node image: " + nodeimage.RuntimeContainerd2 + " (default: containerd " + nodeimage.ContainerdVersion + " and runc " + nodeimage.RuncVersion + " built here; the cgroupfs driver on a cgroup v1 host: docs/kind.md) or " + nodeimage.RuntimeDebian + " (Debian 12's containerd 1.6 and runc 1.1, without user namespaces, recursive read-only mounts or supplementalGroupsPolicy); its node image is built offline and cached per runtime"})
	framework.RegisterTargetFlag(framework.TargetFlag{Name: FlagKeep, Owner: Name, Bool: true, Usage: "keep the clusters the kind target created"})
	framework.RegisterEnv(framework.EnvVar{Name: "XDG_CACHE_HOME", Owner: Name, Meaning: "where the node image's built components are cached: $XDG_CACHE_HOME/volperm/kindnode (default ~/.cache)"})
}
