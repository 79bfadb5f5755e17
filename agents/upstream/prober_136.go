//go:build !volperm_k8s_pre_1_36

package main

import (
	"context"

	"k8s.io/kubernetes/pkg/volume"
	"k8s.io/kubernetes/pkg/volume/flexvolume"
	"k8s.io/utils/exec"
)

// newFlexProber is the real prober of dir; from v1.36 it takes the context its watcher runs in
// (docs/releases.md "Drift"): the process's.
func newFlexProber(dir string, runner exec.Interface) volume.DynamicPluginProber {
	return flexvolume.GetDynamicPluginProber(context.Background(), dir, runner)
}
