// Package kindconfig holds the kind cluster configurations the kind target creates clusters
// from, one per combination of apiserver and kubelet feature gates, embedded for offline runs.
package kindconfig

import "embed"

// Configs holds *.yaml: kind Cluster configs (kind.x-k8s.io/v1alpha4).
//
//go:embed *.yaml
var Configs embed.FS
