//go:build volperm_k8s_pre_1_36

package main

import (
	"k8s.io/kubernetes/pkg/volume"
	"k8s.io/kubernetes/pkg/volume/flexvolume"
	"k8s.io/utils/exec"
)

// newFlexProber is the real prober of dir; before v1.36 it takes no context (docs/releases.md
// "Drift").
func newFlexProber(dir string, runner exec.Interface) volume.DynamicPluginProber {
	return flexvolume.GetDynamicPluginProber(dir, runner)
}
