//go:build volperm_k8s_pre_1_37

package main

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-base/featuregate"
)

// kubernetesRelease names the releases this file is built for (docs/releases.md "Drift").
const kubernetesRelease = "v1.34-v1.36"

// upstreamGates: before v1.37 Kubernetes has none of the harness's gates (KEP-5502's
// EmptyDirVolumeMode and KEP-5936's AtomicWriteVolumeUserFields come with v1.37).
var upstreamGates = map[string]featuregate.Feature{}

// The ClusterTrustBundle calls of KubeletVolumeHost give every name and signer the reference
// node's fixed trust anchors (fakeTrustAnchors); they take no context before v1.37.

func (h *volumeHost) GetTrustAnchorsByName(_ string, _ bool) ([]byte, error) {
	return []byte(fakeTrustAnchors), nil
}

func (h *volumeHost) GetTrustAnchorsBySigner(_ string, _ *metav1.LabelSelector, _ bool) ([]byte, error) {
	return []byte(fakeTrustAnchors), nil
}
