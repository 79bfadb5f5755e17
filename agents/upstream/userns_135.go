//go:build volperm_k8s_pre_1_36 && !volperm_k8s_pre_1_35

package main

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/kubelet/userns"
)

// podMappings is v1.35's manager: MakeUserNsManager(logger, kl, idsPerPod),
// GetOrCreateUserNamespaceMappings(ctx, pod, handler), GetKubeletMappings(idsPerPod).
func podMappings(kl usernsPods, pod *corev1.Pod) (*runtimeapi.UserNamespace, error) {
	m, err := userns.MakeUserNsManager(klog.Background(), kl, nil)
	if err != nil {
		return nil, err
	}
	if m == nil {
		return nil, errors.New("the kubelet's user-namespace manager is off (feature gate UserNamespacesSupport)")
	}
	return m.GetOrCreateUserNamespaceMappings(context.Background(), pod, "")
}

func (k usernsPods) GetKubeletMappings(idsPerPod uint32) (uint32, uint32, error) {
	return idsPerPod, uint32((1 << 32) - uint64(idsPerPod)), nil
}
