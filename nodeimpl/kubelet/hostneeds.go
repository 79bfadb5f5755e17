package kubelet

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/hostfeature"
	"github.com/volperm/volperm/nodeimpl/emptydir"
)

// HostNeeds lists the features of this machine a kubelet needs to set pod up (and a harness to
// probe it): root always (mounts, chown, mknod, probes as other uids), and for every HugePages
// emptyDir the huge page size it mounts hugetlbfs with. A HugePages volume whose size cannot be
// resolved needs none: its set-up fails with the same text on every machine
// (emptydir.PageSize).
func HostNeeds(pod *corev1.Pod) []hostfeature.Feature {
	needs := []hostfeature.Feature{hostfeature.Root}
	if pod == nil {
		return needs
	}
	seen := map[hostfeature.Feature]bool{}
	for _, v := range pod.Spec.Volumes {
		if v.EmptyDir == nil || !emptydir.IsHugePageMedium(v.EmptyDir.Medium) {
			continue
		}
		size, err := emptydir.PageSize(v.EmptyDir.Medium, pod)
		if err != nil {
			continue
		}
		if f := hostfeature.HugePages(size); !seen[f] {
			seen[f] = true
			needs = append(needs, f)
		}
	}
	return needs
}
