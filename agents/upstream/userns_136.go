//go:build !volperm_k8s_pre_1_36

package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/kubelet/userns"

	"github.com/volperm/volperm/framework/execproto"
)

// agentFeatures: from v1.36 the agent runs the kubelet's real user-namespace manager (its API is the
// same in v1.36 and v1.37; docs/releases.md "Drift").
var agentFeatures = []string{execproto.FeatureUserNamespaces}

// userNamespace is the kubelet's user namespace of the pod when it has hostUsers: false, nil
// otherwise: the real manager (v1.37 pkg/kubelet/userns MakeUserNsManager, which reads every
// pod's userns file back, as after a kubelet restart; GetOrCreateUserNamespaceMappings, which
// reads the pod's or allocates a free range and records it in the pod's directory), made anew
// by every call as a kubelet process is.
func (n *node) userNamespace() (*execproto.UserNamespace, error) {
	if n.pod.Spec.HostUsers == nil || *n.pod.Spec.HostUsers {
		return nil, nil
	}
	logger := klog.Background()
	m, err := userns.MakeUserNsManager(logger, usernsPods{root: n.kubeletRoot}, nil)
	if err != nil {
		return nil, err
	}
	if m == nil {
		return nil, errors.New("the kubelet's user-namespace manager is off (feature gate UserNamespacesSupport)")
	}
	u, err := m.GetOrCreateUserNamespaceMappings(logger, n.pod, "")
	if err != nil {
		return nil, err
	}
	if u.Mode.String() != "POD" || len(u.Uids) != 1 || len(u.Gids) != 1 || u.Uids[0].ContainerId != 0 ||
		u.Uids[0].HostId != u.Gids[0].HostId || u.Uids[0].Length != u.Gids[0].Length || u.Gids[0].ContainerId != 0 {
		return nil, fmt.Errorf("the kubelet's user namespace of the pod is not one range from id 0, uids and gids alike: %v", u)
	}
	return &execproto.UserNamespace{HostID: u.Uids[0].HostId, Length: u.Uids[0].Length}, nil
}

// usernsPods is the kubelet as its user-namespace manager sees it (the manager's
// userNsPodsManager): the kubelet's pod directories, a runtime handler that supports user
// namespaces (the harness mounts idmapped), the default kubelet mappings of a node without a
// "kubelet" user (v1.37 kubelet_pods.go getKubeletMappings: ids from idsPerPod to 2^32) and the
// default maxPods (110).
type usernsPods struct{ root string }

func (k usernsPods) HandlerSupportsUserNamespaces(string) (bool, error) { return true, nil }

func (k usernsPods) GetPodDir(uid types.UID) string {
	return filepath.Join(k.root, "pods", string(uid))
}

// ListPodsFromDisk is v1.37 kubelet_pods.go listPodsFromDisk: every directory of the pods dir.
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

func (k usernsPods) GetKubeletMappings(_ klog.Logger, idsPerPod uint32) (uint32, uint32, error) {
	return idsPerPod, uint32((1 << 32) - uint64(idsPerPod)), nil
}

func (k usernsPods) GetMaxPods() int { return 110 }
