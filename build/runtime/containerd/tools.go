//go:build tools

// Package containerd pins the containerd of the kind node image's default runtime (nodeimage
// Runtime "containerd2"): `go build` in this module compiles containerd, its runc shim and ctr at
// exactly v2.4.2, every dependency at the version containerd's own go.mod selects.
package containerd

import (
	_ "github.com/containerd/containerd/v2/cmd/containerd"
	_ "github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2"
	_ "github.com/containerd/containerd/v2/cmd/ctr"
)
