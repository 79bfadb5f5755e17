//go:build volperm_k8s_pre_1_37 && !volperm_k8s_pre_1_35

package main

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"
)

// kubeletAdmit is v1.35's and v1.36's predicate admit handler: getNode(ctx, useCache), Admit(attrs).
func kubeletAdmit(node *corev1.Node, attrs *lifecycle.PodAdmitAttributes) lifecycle.PodAdmitResult {
	h := lifecycle.NewPredicateAdmitHandler(func(context.Context, bool) (*corev1.Node, error) { return node, nil }, &lifecycle.AdmissionFailureHandlerStub{}, noPluginResources)
	return h.Admit(attrs)
}
