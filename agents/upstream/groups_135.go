//go:build volperm_k8s_pre_1_37 && !volperm_k8s_pre_1_35

package main

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"

	"github.com/volperm/volperm/framework/execproto"
)

// kubeletAdmit is v1.35's and v1.36's predicate admit handler: getNode(ctx, useCache), Admit(attrs).
func kubeletAdmit(node *corev1.Node, attrs *lifecycle.PodAdmitAttributes) lifecycle.PodAdmitResult {
	h := lifecycle.NewPredicateAdmitHandler(func(context.Context, bool) (*corev1.Node, error) { return node, nil }, &lifecycle.AdmissionFailureHandlerStub{}, noPluginResources)
	return h.Admit(attrs)
}

// declaredFeaturesRejection: before v1.37 no node feature reads a volume (VolumeBindMountOptions
// is v1.37's), and a case with its gate is a v1.37 cell only.
func (n *node) declaredFeaturesRejection() *execproto.Rejection { return nil }
