//go:build volperm_k8s_pre_1_35

package main

import (
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/kubernetes/pkg/kubelet/userns"
)

// podMappings is v1.34's manager: MakeUserNsManager(kl), GetOrCreateUserNamespaceMappings(pod,
// handler), GetKubeletMappings() and GetUserNamespacesIDsPerPod() (v1.34 kubelet_pods.go: the
// default mapping from 65536 to 2^32).
func podMappings(kl usernsPods, pod *corev1.Pod) (*runtimeapi.UserNamespace, error) {
	m, err := userns.MakeUserNsManager(kl)
	if err != nil {
		return nil, err
	}
	return m.GetOrCreateUserNamespaceMappings(pod, "")
}

func (k usernsPods) GetKubeletMappings() (uint32, uint32, error) {
	return defaultIDsPerPod, uint32((1 << 32) - uint64(defaultIDsPerPod)), nil
}

func (k usernsPods) GetUserNamespacesIDsPerPod() uint32 { return defaultIDsPerPod }
