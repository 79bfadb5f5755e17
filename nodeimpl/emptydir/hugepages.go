package emptydir

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/volperm/volperm/nodeimpl/mutant"
)

// IsHugePageMedium is v1.37 pkg/apis/core/v1/helper IsHugePageMedium.
func IsHugePageMedium(medium corev1.StorageMedium) bool {
	return medium == corev1.StorageMediumHugePages || strings.HasPrefix(string(medium), string(corev1.StorageMediumHugePagesPrefix))
}

// hugePageSizeFromMedium is v1.37 helper HugePageSizeFromMedium, texts included.
func hugePageSizeFromMedium(medium corev1.StorageMedium) (resource.Quantity, error) {
	if !IsHugePageMedium(medium) {
		return resource.Quantity{}, fmt.Errorf("medium: %s is not a hugepage medium", medium)
	}
	if medium == corev1.StorageMediumHugePages {
		return resource.Quantity{}, fmt.Errorf("medium: %s doesn't have size information", medium)
	}
	return resource.ParseQuantity(strings.TrimPrefix(string(medium), string(corev1.StorageMediumHugePagesPrefix)))
}

// isHugePageResourceName is v1.37 helper IsHugePageResourceName.
func isHugePageResourceName(name corev1.ResourceName) bool {
	return strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix)
}

// hugePageSizeFromResourceName is v1.37 helper HugePageSizeFromResourceName.
func hugePageSizeFromResourceName(name corev1.ResourceName) (resource.Quantity, error) {
	if !isHugePageResourceName(name) {
		return resource.Quantity{}, fmt.Errorf("resource name: %s is an invalid hugepage name", name)
	}
	return resource.ParseQuantity(strings.TrimPrefix(string(name), corev1.ResourceHugePagesPrefix))
}

// isPodLevelResourcesSet is v1.37 component-helpers IsPodLevelResourcesSet: pod-level requests
// or limits name cpu, memory or a hugepages-<size>.
func isPodLevelResourcesSet(pod *corev1.Pod) bool {
	r := pod.Spec.Resources
	if r == nil {
		return false
	}
	supported := func(n corev1.ResourceName) bool {
		return n == corev1.ResourceCPU || n == corev1.ResourceMemory || isHugePageResourceName(n)
	}
	for n := range r.Requests {
		if supported(n) {
			return true
		}
	}
	for n := range r.Limits {
		if supported(n) {
			return true
		}
	}
	return false
}

// getPageSizeMountOption is v1.37 emptydir getPageSizeMountOption, texts included.
func getPageSizeMountOption(medium corev1.StorageMedium, pod *corev1.Pod) (string, error) {
	if mutant.On(mutant.BlindEmptyDirHugePagesInitIgnored) {
		p := *pod
		p.Spec.InitContainers = nil
		pod = &p
	}
	pageSize, err := PageSize(medium, pod)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("pagesize=%s", pageSize.String()), nil
}

// PageSize is the huge page size a HugePages emptyDir of pod is mounted with (v1.37 emptydir
// getPageSizeMountOption, texts included): it comes from the hugepages-<size> requests of the
// pod (pod level: gate PodLevelResources, beta and on by default since v1.34) and of its
// containers and init containers.
func PageSize(medium corev1.StorageMedium, pod *corev1.Pod) (resource.Quantity, error) {
	pageSizeFound := false
	pageSize := resource.Quantity{}

	var mediumPageSize resource.Quantity
	if medium != corev1.StorageMediumHugePages {
		var err error
		if mediumPageSize, err = hugePageSizeFromMedium(medium); err != nil {
			return resource.Quantity{}, err
		}
	}

	var requests []corev1.ResourceList
	if isPodLevelResourcesSet(pod) {
		requests = append(requests, pod.Spec.Resources.Requests)
	}
	for _, c := range append(append([]corev1.Container{}, pod.Spec.Containers...), pod.Spec.InitContainers...) {
		requests = append(requests, c.Resources.Requests)
	}

	for _, list := range requests {
		for name := range list {
			if !isHugePageResourceName(name) {
				continue
			}
			current, err := hugePageSizeFromResourceName(name)
			if err != nil {
				return resource.Quantity{}, err
			}
			if medium == corev1.StorageMediumHugePages {
				// One page size for the whole pod when the medium names none.
				if pageSizeFound && pageSize.Cmp(current) != 0 {
					return resource.Quantity{}, fmt.Errorf("medium: %s can't be used if container requests multiple huge page sizes", medium)
				}
				pageSizeFound = true
				pageSize = current
			} else if current.Cmp(mediumPageSize) == 0 {
				pageSizeFound = true
				pageSize = current
			}
		}
	}

	if !pageSizeFound {
		return resource.Quantity{}, fmt.Errorf("medium %s: hugePages storage requested, but there is no resource request for huge pages", medium)
	}
	return pageSize, nil
}
