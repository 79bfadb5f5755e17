package main

import (
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/types"

	"github.com/volperm/volperm/framework/execproto"
)

// agentFeatures: the agent runs the kubelet's real user-namespace manager, whose API differs
// between releases (userns_134.go, userns_135.go, userns_136.go; docs/releases.md "Drift").
// It runs the kubelet's real admission and security-context code too (groups.go), and the
// real image volume plugin, a stub (node.go inlinePlugins).
var agentFeatures = []string{execproto.FeatureUserNamespaces, execproto.FeatureSupplementalGroupsPolicy, execproto.FeatureVolumeBindMountOptions, execproto.FeatureSELinuxMount, execproto.FeatureImageVolumes}

// userNamespace is the kubelet's user namespace of the pod when it has hostUsers: false, nil
// otherwise: the real manager (pkg/kubelet/userns MakeUserNsManager, which reads every pod's
// userns file back, as after a kubelet restart; GetOrCreateUserNamespaceMappings, which reads
// the pod's or allocates a free range and records it in the pod's directory), made anew by every
// call as a kubelet process is (podMappings, per release).
// The manager's error fails the pod's sandbox (v1.37 kuberuntime_manager.go SyncPod: "Failed
// to create pod sandbox: %v"): it is the answer's sandboxError, the real text.
func (n *node) userNamespace() (ns *execproto.UserNamespace, sandboxError string, err error) {
	if n.pod.Spec.HostUsers == nil || *n.pod.Spec.HostUsers {
		return nil, "", nil
	}
	u, err := podMappings(usernsPods{root: n.kubeletRoot, noUserNamespaces: n.noUserNamespaces}, n.pod)
	if err != nil {
		return nil, err.Error(), nil
	}
	if u.Mode.String() != "POD" || len(u.Uids) != 1 || len(u.Gids) != 1 || u.Uids[0].ContainerId != 0 ||
		u.Uids[0].HostId != u.Gids[0].HostId || u.Uids[0].Length != u.Gids[0].Length || u.Gids[0].ContainerId != 0 {
		return nil, "", fmt.Errorf("the kubelet's user namespace of the pod is not one range from id 0, uids and gids alike: %v", u)
	}
	return &execproto.UserNamespace{HostID: u.Uids[0].HostId, Length: u.Uids[0].Length}, "", nil
}

// usernsPods is the kubelet as its user-namespace manager sees it (the manager's
// userNsPodsManager): the kubelet's pod directories, a runtime handler that supports user
// namespaces (the harness mounts idmapped) unless the request's runtime lacks them (a runtime
// that reports no handlers: kubelet_getters.go answers false, nil), the default kubelet mappings of a node without a
// "kubelet" user (kubelet_pods.go getKubeletMappings: ids from idsPerPod to 2^32; per release)
// and the default maxPods (110).
type usernsPods struct {
	root             string
	noUserNamespaces bool
}

func (k usernsPods) HandlerSupportsUserNamespaces(string) (bool, error) {
	return !k.noUserNamespaces, nil
}

func (k usernsPods) GetPodDir(uid types.UID) string {
	return filepath.Join(k.root, "pods", string(uid))
}

// ListPodsFromDisk is kubelet_pods.go listPodsFromDisk: every directory of the pods dir.
func (k usernsPods) ListPodsFromDisk() ([]types.UID, error) {
	entries, err := os.ReadDir(filepath.Join(k.root, "pods"))
	if err != nil {
		return nil, err
	}
	pods := []types.UID{}
	for _, e := range entries {
		if e.IsDir() {
			pods = append(pods, types.UID(e.Name()))
		}
	}
	return pods, nil
}

func (k usernsPods) GetMaxPods() int { return 110 }

// defaultIDsPerPod is kubeletconfig DefaultKubeletUserNamespacesIDsPerPod.
const defaultIDsPerPod = 65536
