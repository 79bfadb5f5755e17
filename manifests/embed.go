// Package manifests holds volperm's canonical, hand-written cases as YAML (cases/*.yaml),
// embedded so that the binary runs offline.
package manifests

import "embed"

// Cases holds cases/*.yaml: Case documents (apiVersion volperm.dev/v1, kind Case), one file per area.
//
//go:embed cases/*.yaml
var Cases embed.FS
