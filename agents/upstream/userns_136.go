//go:build !volperm_k8s_pre_1_36

package main

import (
	"errors"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/kubelet/userns"
)

// podMappings is v1.36 and v1.37's manager: MakeUserNsManager(logger, kl, idsPerPod),
// GetOrCreateUserNamespaceMappings(logger, pod, handler).
func podMappings(kl usernsPods, pod *corev1.Pod) (*runtimeapi.UserNamespace, error) {
	logger := klog.Background()
	m, err := userns.MakeUserNsManager(logger, kl, nil)
	if err != nil {
		return nil, err
	}
	if m == nil {
		return nil, errors.New("the kubelet's user-namespace manager is off (feature gate UserNamespacesSupport)")
	}
	return m.GetOrCreateUserNamespaceMappings(logger, pod, "")
}

func (k usernsPods) GetKubeletMappings(_ klog.Logger, idsPerPod uint32) (uint32, uint32, error) {
	return idsPerPod, uint32((1 << 32) - uint64(idsPerPod)), nil
}
