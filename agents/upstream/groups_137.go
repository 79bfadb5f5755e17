//go:build !volperm_k8s_pre_1_37

package main

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"
)

// kubeletAdmit is v1.37's predicate admit handler: getNode(ctx, useCache), Admit(ctx, attrs).
func kubeletAdmit(node *corev1.Node, attrs *lifecycle.PodAdmitAttributes) lifecycle.PodAdmitResult {
	h := lifecycle.NewPredicateAdmitHandler(func(context.Context, bool) (*corev1.Node, error) { return node, nil }, &lifecycle.AdmissionFailureHandlerStub{}, noPluginResources)
	return h.Admit(context.Background(), attrs)
}
