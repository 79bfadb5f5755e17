//go:build !volperm_k8s_pre_1_37

package main

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-base/featuregate"
	"k8s.io/kubernetes/pkg/features"
)

// kubernetesRelease names the releases this file is built for (docs/releases.md "Drift").
const kubernetesRelease = "v1.37"

// upstreamGates maps the harness's gates this release has to its feature names.
var upstreamGates = map[string]featuregate.Feature{
	// v1.37 pkg/features/kube_features.go: KEP-5502, alpha, on kube-apiserver and kubelet.
	"EmptyDirVolumeMode": features.EmptyDirVolumeMode,
	// v1.37 pkg/features/kube_features.go: KEP-5936, alpha, on kube-apiserver and kubelet.
	"AtomicWriteVolumeUserFields": features.AtomicWriteVolumeUserFields,
}

// The ClusterTrustBundle calls of KubeletVolumeHost take a context from v1.37 on.

func (h *volumeHost) GetTrustAnchorsByName(_ context.Context, name string, _ bool) ([]byte, error) {
	return nil, fmt.Errorf("ClusterTrustBundle %q: %w", name, errNotOnThisNode)
}

func (h *volumeHost) GetTrustAnchorsBySigner(_ context.Context, signerName string, _ *metav1.LabelSelector, _ bool) ([]byte, error) {
	return nil, fmt.Errorf("ClusterTrustBundles of signer %q: %w", signerName, errNotOnThisNode)
}
