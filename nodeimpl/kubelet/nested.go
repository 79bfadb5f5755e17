package kubelet

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// makeNestedMountpoints is v1.37 pkg/volume/util MakeNestedMountpoints (docs/spec.md
// [atomicwriter.nested]): for every container, init and ephemeral ones included, and every path
// it mounts volume name at, the mount points of its other mounts directly below that path are
// made in dir with os.MkdirAll(0755), so that the runtime has somewhere to mount them.
func makeNestedMountpoints(name, dir string, pod *corev1.Pod) error {
	var rels []string
	visit := func(mounts []corev1.VolumeMount) error {
		var all, mine []string
		for _, m := range mounts {
			cleaned := filepath.Clean(m.MountPath)
			all = append(all, cleaned)
			if m.Name == name {
				mine = append(mine, cleaned)
			}
		}
		sort.Strings(all)
		for _, at := range mine {
			if strings.HasPrefix(at, "../") {
				// getNestedMountpoints: no directory outside the container's root filesystem.
				return fmt.Errorf("invalid container mount point %v", at)
			}
			var nested []string // the mount points below at already taken
			for _, mp := range all {
				if !strings.HasPrefix(mp, at+"/") {
					continue
				}
				under := false
				for _, n := range nested {
					if strings.HasPrefix(mp, n) {
						under = true
						break
					}
				}
				if under {
					continue
				}
				nested = append(nested, mp+"/")
				rels = append(rels, mp[len(at)+1:])
			}
		}
		return nil
	}
	var all [][]corev1.VolumeMount
	for _, c := range pod.Spec.InitContainers {
		all = append(all, c.VolumeMounts)
	}
	for _, c := range pod.Spec.Containers {
		all = append(all, c.VolumeMounts)
	}
	for _, c := range pod.Spec.EphemeralContainers {
		all = append(all, c.VolumeMounts)
	}
	for _, mounts := range all {
		if err := visit(mounts); err != nil {
			return err
		}
	}
	for _, rel := range rels {
		if err := os.MkdirAll(filepath.Join(dir, rel), 0755); err != nil {
			return fmt.Errorf("unable to create nested volume mountpoints: %v", err)
		}
	}
	return nil
}
