package oracle

import (
	"fmt"
	"path"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// nestedMountpoints is docs/spec.md [atomicwriter.nested] (v1.37 pkg/volume/util nested_volumes.go
// getNestedMountpoints): per container (init, regular, ephemeral), for each place volume name is
// mounted, the mount paths of the container's volumes directly below it (one below another
// such is left to that one), relative to it, in the container's sorted order of mount paths. A
// place that climbs out of the container's root ("../x", a relative mountPath the API allows)
// fails the set-up with upstream's text and makes nothing.
func nestedMountpoints(name string, pod *corev1.Pod) ([]string, error) {
	var out []string
	var err error
	check := func(mounts []corev1.VolumeMount) {
		if err != nil {
			return
		}
		var all, mine []string
		for _, m := range mounts {
			p := path.Clean(m.MountPath)
			all = append(all, p)
			if m.Name == name {
				mine = append(mine, p)
			}
		}
		sort.Strings(all)
		for _, at := range mine {
			if strings.HasPrefix(at, "../") {
				err = fmt.Errorf("invalid container mount point %v", at)
				return
			}
			var seen []string
			for _, p := range all {
				rel, below := strings.CutPrefix(p, at+"/")
				if !below || rel == "" {
					continue
				}
				nested := false
				for _, s := range seen {
					nested = nested || strings.HasPrefix(p, s+"/")
				}
				if nested {
					continue
				}
				seen = append(seen, p)
				out = append(out, rel)
			}
		}
	}
	for _, c := range pod.Spec.InitContainers {
		check(c.VolumeMounts)
	}
	for _, c := range pod.Spec.Containers {
		check(c.VolumeMounts)
	}
	for _, c := range pod.Spec.EphemeralContainers {
		check(c.VolumeMounts)
	}
	return out, err
}

// makeNested is MakeNestedMountpoints: os.MkdirAll(dir, 0755) of each nested mount point in the
// volume's root, after the wrapped emptyDir's set-up and before the write; root-owned.
func makeNested(root *node, rels []string) {
	for _, rel := range rels {
		d := root
		for _, c := range strings.Split(rel, "/") {
			if d.kids[c] == nil {
				d.add(c, typeDir, 0755&^umask, kubeletOwner)
			}
			d = d.kids[c]
		}
	}
}
