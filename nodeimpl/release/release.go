// Package release is what each Kubernetes release of the reference node knows (docs/spec.md
// "Releases"): a component of a release without a field decodes a pod without it.
package release

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Newest is the release a component runs when none is named.
const Newest = "v1.37"

// emptyDirModeSince is the first release with emptyDir.mode (KEP-5502, alpha in v1.37).
const emptyDirModeSince = 37

// minor is N of "v1.N"; "" is Newest.
func minor(r string) int {
	if r == "" {
		r = Newest
	}
	n, err := strconv.Atoi(strings.TrimPrefix(r, "v1."))
	if err != nil || !strings.HasPrefix(r, "v1.") {
		return -1
	}
	return n
}

// userFieldsSince is the first release with defaultUser and item user (KEP-5936, alpha in v1.37).
const userFieldsSince = 37

// Decode clears in pod every field release r does not know and returns their JSON paths in
// decoding order: volume order, and in a volume its fields as the v1 types declare them (items,
// each item's user, before the volume's defaultUser): "spec.volumes[0].emptyDir.mode",
// "spec.volumes[1].secret.items[0].user", "spec.volumes[1].secret.defaultUser".
func Decode(r string, pod *corev1.Pod) []string {
	if pod == nil {
		return nil
	}
	var out []string
	clear := func(p **int64, path string) {
		if *p != nil {
			*p = nil
			out = append(out, path)
		}
	}
	keys := func(at string, items []corev1.KeyToPath) {
		for j := range items {
			clear(&items[j].User, fmt.Sprintf("%s.items[%d].user", at, j))
		}
	}
	files := func(at string, items []corev1.DownwardAPIVolumeFile) {
		for j := range items {
			clear(&items[j].User, fmt.Sprintf("%s.items[%d].user", at, j))
		}
	}
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i].VolumeSource
		at := fmt.Sprintf("spec.volumes[%d]", i)
		if ed := v.EmptyDir; ed != nil && ed.Mode != nil && minor(r) < emptyDirModeSince {
			ed.Mode = nil
			out = append(out, at+".emptyDir.mode")
		}
		if minor(r) >= userFieldsSince {
			continue
		}
		switch {
		case v.Secret != nil:
			keys(at+".secret", v.Secret.Items)
			clear(&v.Secret.DefaultUser, at+".secret.defaultUser")
		case v.ConfigMap != nil:
			keys(at+".configMap", v.ConfigMap.Items)
			clear(&v.ConfigMap.DefaultUser, at+".configMap.defaultUser")
		case v.DownwardAPI != nil:
			files(at+".downwardAPI", v.DownwardAPI.Items)
			clear(&v.DownwardAPI.DefaultUser, at+".downwardAPI.defaultUser")
		case v.Projected != nil:
			for j := range v.Projected.Sources {
				src := &v.Projected.Sources[j]
				sat := fmt.Sprintf("%s.projected.sources[%d]", at, j)
				if src.Secret != nil {
					keys(sat+".secret", src.Secret.Items)
				}
				if src.DownwardAPI != nil {
					files(sat+".downwardAPI", src.DownwardAPI.Items)
				}
				if src.ConfigMap != nil {
					keys(sat+".configMap", src.ConfigMap.Items)
				}
				if src.ServiceAccountToken != nil {
					clear(&src.ServiceAccountToken.User, sat+".serviceAccountToken.user")
				}
				if src.ClusterTrustBundle != nil {
					clear(&src.ClusterTrustBundle.User, sat+".clusterTrustBundle.user")
				}
				if src.PodCertificate != nil {
					clear(&src.PodCertificate.User, sat+".podCertificate.user")
				}
			}
			clear(&v.Projected.DefaultUser, at+".projected.defaultUser")
		}
	}
	return out
}
