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

// seLinuxMountSince is the first release whose SELinuxMount gate is on by default (v1.37
// kube_features.go: GA; beta and off in v1.33-v1.36).
const seLinuxMountSince = 37

// SELinuxMount says whether a component of release r has SELinuxMount on.
func SELinuxMount(r string) bool { return minor(r) >= seLinuxMountSince }

// hostNetworkRatchetSince is the first release whose apiserver keeps an old pod's hostNetwork
// with hostUsers: false on an update (v1.35 pkg/api/pod/util.go useAllowUserNamespacesHostNetworkSupport).
const hostNetworkRatchetSince = 35

// KeepsUserNSHostNetwork says whether release r's apiserver has that ratchet.
func KeepsUserNSHostNetwork(r string) bool { return minor(r) >= hostNetworkRatchetSince }

// userFieldsSince is the first release with defaultUser and item user (KEP-5936, alpha in v1.37).
const userFieldsSince = 37

// UserField is one KEP-5936 field of a pod (defaultUser, or an item's, a token's,
// clusterTrustBundle's or podCertificate's user), set or not.
type UserField struct {
	// Volume is the index of its volume; Path its field path ("spec.volumes[1].secret.defaultUser").
	Volume int
	Path   string
	Ptr    **int64
}

// UserFields lists every KEP-5936 field of pod (the fields v1.37 pkg/api/pod/util.go
// dropDisabledAtomicWriteVolumeUserFields clears), in the order a JSON decoder meets them:
// volume order, and in a volume its items (each item's user) before its defaultUser, as the v1
// types declare them. In a projection, the first source set is the one looked at, as upstream's
// switches do.
func UserFields(pod *corev1.Pod) []UserField {
	if pod == nil {
		return nil
	}
	var out []UserField
	var vol int
	add := func(p **int64, path string) { out = append(out, UserField{vol, path, p}) }
	keys := func(at string, items []corev1.KeyToPath) {
		for j := range items {
			add(&items[j].User, fmt.Sprintf("%s.items[%d].user", at, j))
		}
	}
	files := func(at string, items []corev1.DownwardAPIVolumeFile) {
		for j := range items {
			add(&items[j].User, fmt.Sprintf("%s.items[%d].user", at, j))
		}
	}
	for i := range pod.Spec.Volumes {
		vol = i
		v := &pod.Spec.Volumes[i].VolumeSource
		at := fmt.Sprintf("spec.volumes[%d]", i)
		switch {
		case v.Secret != nil:
			keys(at+".secret", v.Secret.Items)
			add(&v.Secret.DefaultUser, at+".secret.defaultUser")
		case v.ConfigMap != nil:
			keys(at+".configMap", v.ConfigMap.Items)
			add(&v.ConfigMap.DefaultUser, at+".configMap.defaultUser")
		case v.DownwardAPI != nil:
			files(at+".downwardAPI", v.DownwardAPI.Items)
			add(&v.DownwardAPI.DefaultUser, at+".downwardAPI.defaultUser")
		case v.Projected != nil:
			for j := range v.Projected.Sources {
				src := &v.Projected.Sources[j]
				sat := fmt.Sprintf("%s.projected.sources[%d]", at, j)
				switch {
				case src.Secret != nil:
					keys(sat+".secret", src.Secret.Items)
				case src.DownwardAPI != nil:
					files(sat+".downwardAPI", src.DownwardAPI.Items)
				case src.ConfigMap != nil:
					keys(sat+".configMap", src.ConfigMap.Items)
				case src.ServiceAccountToken != nil:
					add(&src.ServiceAccountToken.User, sat+".serviceAccountToken.user")
				case src.ClusterTrustBundle != nil:
					add(&src.ClusterTrustBundle.User, sat+".clusterTrustBundle.user")
				case src.PodCertificate != nil:
					add(&src.PodCertificate.User, sat+".podCertificate.user")
				}
			}
			add(&v.Projected.DefaultUser, at+".projected.defaultUser")
		}
	}
	return out
}

// Decode clears in pod every field release r does not know and returns their JSON paths in
// decoding order: volume order, and in a volume its fields as the v1 types declare them
// (UserFields): "spec.volumes[0].emptyDir.mode", "spec.volumes[1].secret.items[0].user",
// "spec.volumes[1].secret.defaultUser".
func Decode(r string, pod *corev1.Pod) []string {
	if pod == nil {
		return nil
	}
	var users []UserField
	if minor(r) < userFieldsSince {
		users = UserFields(pod)
	}
	var out []string
	for i := range pod.Spec.Volumes {
		if ed := pod.Spec.Volumes[i].EmptyDir; ed != nil && ed.Mode != nil && minor(r) < emptyDirModeSince {
			ed.Mode = nil
			out = append(out, fmt.Sprintf("spec.volumes[%d].emptyDir.mode", i))
		}
		for _, f := range users {
			if f.Volume == i && *f.Ptr != nil {
				*f.Ptr = nil
				out = append(out, f.Path)
			}
		}
	}
	return out
}
