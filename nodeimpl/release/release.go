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

// Decode clears in pod every field release r does not know and returns their JSON paths in
// decoding order (volume order): "spec.volumes[0].emptyDir.mode".
func Decode(r string, pod *corev1.Pod) []string {
	if pod == nil || minor(r) >= emptyDirModeSince {
		return nil
	}
	var out []string
	for i := range pod.Spec.Volumes {
		if ed := pod.Spec.Volumes[i].EmptyDir; ed != nil && ed.Mode != nil {
			ed.Mode = nil
			out = append(out, fmt.Sprintf("spec.volumes[%d].emptyDir.mode", i))
		}
	}
	return out
}
