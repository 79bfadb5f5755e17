//go:build !volperm_k8s_pre_1_37

package main

import (
	"context"

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
	// v1.37 pkg/features/kube_features.go: KEP-5855, alpha, on kube-apiserver and kubelet.
	"VolumeBindMountOptions": features.VolumeBindMountOptions,
}

// The ClusterTrustBundle calls of KubeletVolumeHost give every name and signer the reference
// node's fixed trust anchors (fakeTrustAnchors); they take a context from v1.37 on.

func (h *volumeHost) GetTrustAnchorsByName(_ context.Context, _ string, _ bool) ([]byte, error) {
	return []byte(fakeTrustAnchors), nil
}

func (h *volumeHost) GetTrustAnchorsBySigner(_ context.Context, _ string, _ *metav1.LabelSelector, _ bool) ([]byte, error) {
	return []byte(fakeTrustAnchors), nil
}
