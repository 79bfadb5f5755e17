// Package manifests holds volperm's canonical, hand-written cases as YAML (cases/*.yaml), the
// objects of an in-cluster run (in-cluster.yaml) and the Sonobuoy plugin (sonobuoy-plugin.yaml),
// embedded so that the binary runs offline.
package manifests

import "embed"

// Cases holds cases/*.yaml: Case documents (apiVersion volperm.dev/v1, kind Case), one file per area.
//
//go:embed cases/*.yaml
var Cases embed.FS

// InCluster is in-cluster.yaml: the namespace, service account and RBAC of `volperm cluster run
// --in-cluster` (framework/incluster).
//
//go:embed in-cluster.yaml
var InCluster []byte

// SonobuoyPlugin is sonobuoy-plugin.yaml: volperm's runner image as a Sonobuoy plugin.
//
//go:embed sonobuoy-plugin.yaml
var SonobuoyPlugin []byte
