//go:build volperm_k8s_pre_1_35

package main

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"

	"github.com/volperm/volperm/framework/execproto"
)

// kubeletAdmit is v1.34's predicate admit handler: getNode without a context, Admit(attrs).
func kubeletAdmit(node *corev1.Node, attrs *lifecycle.PodAdmitAttributes) lifecycle.PodAdmitResult {
	h := lifecycle.NewPredicateAdmitHandler(func() (*corev1.Node, error) { return node, nil }, &lifecycle.AdmissionFailureHandlerStub{}, noPluginResources)
	return h.Admit(attrs)
}

// declaredFeaturesRejection: before v1.37 no node feature reads a volume (VolumeBindMountOptions
// is v1.37's), and a case with its gate is a v1.37 cell only.
func (n *node) declaredFeaturesRejection() *execproto.Rejection { return nil }
