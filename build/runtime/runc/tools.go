//go:build tools

// Package runc pins the runc of the kind node image's default runtime (nodeimage Runtime
// "containerd2"): `go build` in this module compiles runc at exactly v1.5.2, every dependency at
// the version runc's own go.mod selects. A module apart from containerd's: together, each would
// raise some of the other's dependencies.
package runc

import (
	_ "github.com/opencontainers/runc"
)
