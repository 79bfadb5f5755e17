//go:build volperm_k8s_pre_1_37

package main

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-base/featuregate"
)

// kubernetesRelease names the releases this file is built for (docs/releases.md "Drift").
const kubernetesRelease = "v1.34-v1.36"

// upstreamGates: before v1.37 Kubernetes has none of the harness's gates (KEP-5502's
// EmptyDirVolumeMode and KEP-5936's AtomicWriteVolumeUserFields come with v1.37).
var upstreamGates = map[string]featuregate.Feature{}

// The ClusterTrustBundle calls of KubeletVolumeHost take no context before v1.37.

func (h *volumeHost) GetTrustAnchorsByName(name string, _ bool) ([]byte, error) {
	return nil, fmt.Errorf("ClusterTrustBundle %q: %w", name, errNotOnThisNode)
}

func (h *volumeHost) GetTrustAnchorsBySigner(signerName string, _ *metav1.LabelSelector, _ bool) ([]byte, error) {
	return nil, fmt.Errorf("ClusterTrustBundles of signer %q: %w", signerName, errNotOnThisNode)
}
