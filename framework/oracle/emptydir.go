package oracle

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/rule"
)

// setUpEmptyDir is v1.37 pkg/volume/emptydir/empty_dir.go SetUpAt with the KEP-5502 mode
// (seed 000), then the ownership walk (policy ignored, errors ignored).
func (k *kubelet) setUpEmptyDir(v *volume) string {
	// empty_dir.go SetUpAt: a ready volume (ready marker, mount present) is left alone: no
	// chmod, no walk, whatever the gates now say.
	ed := v.spec.EmptyDir
	medium := cond(rule.Medium, mediumOf(ed.Medium))
	fsGroup := k.fsGroupCond()
	if v.ready {
		k.tr.hit(rule.EmptyDirReady, medium, fsGroup)
		return ok
	}
	var mode *uint32
	switch {
	case ed.Mode == nil:
		k.tr.hit(rule.EmptyDirDefault, medium)
	case gateOn(k.gates, framework.GateEmptyDirVolumeMode):
		k.tr.hit(rule.EmptyDirMode, medium, fsGroup, cond(rule.Boundary, rule.BoundaryOf(int64(*ed.Mode), 0, 01777)))
	default:
		k.tr.hit(rule.EmptyDirGateOff, medium, gateSource(k.gates, framework.GateEmptyDirVolumeMode))
	}
	// seed 000 "Design Details": the kubelet ignores mode with its gate off.
	if gateOn(k.gates, framework.GateEmptyDirVolumeMode) && ed.Mode != nil {
		// empty_dir.go unixModeToFileMode: permission bits and sticky only.
		m := uint32(*ed.Mode) & (0777 | modeSticky)
		mode = &m
	}
	root, err := k.emptyDirRoot(ed.Medium, mode)
	if isHugePageMedium(ed.Medium) {
		k.tr.hit(rule.EmptyDirHuge, cond(rule.Outcome, setOr(err == "", "ok", "error")))
	}
	if err != "" {
		return err
	}
	v.root, v.top = root, root
	// empty_dir.go SetUpAt: _ = ownershipChanger.ChangePermissions() with no policy.
	if g := k.fsGroup(); g != nil {
		k.tr.hit(rule.EmptyDirFSGroup, medium, cond(rule.Policy, policyValue(k.pod)))
		k.walk(v, root, *g, false)
	}
	v.ready = true
	return ok
}

// emptyDirRoot makes the root directory of an emptyDir of medium, as the pod sees it.
// docs/spec.md "emptyDir": with a mode, exactly that mode on every medium (KEP test plan);
// without: 0777 on the default medium (mkdir + chmod), tmpfs' root 1777 on Memory,
// hugetlbfs' root 0755 on HugePages. Root's, 0:0.
func (k *kubelet) emptyDirRoot(medium corev1.StorageMedium, mode *uint32) (*node, string) {
	var def uint32
	switch {
	case medium == corev1.StorageMediumDefault:
		def = 0777
	case medium == corev1.StorageMediumMemory:
		def = 01777
	case isHugePageMedium(medium):
		if err := pageSizeMountOption(medium, k.pod); err != nil {
			return nil, err.Error()
		}
		def = 0755
	default:
		// empty_dir.go SetUpAt.
		return nil, fmt.Sprintf("unknown storage medium %q", medium)
	}
	if mode != nil {
		def = *mode
	}
	return newDir(def, 0, 0), ""
}

// isHugePageMedium is v1.37 pkg/apis/core/v1/helper IsHugePageMedium.
func isHugePageMedium(m corev1.StorageMedium) bool {
	return m == corev1.StorageMediumHugePages || strings.HasPrefix(string(m), string(corev1.StorageMediumHugePagesPrefix))
}

// pageSizeMountOption is the error half of v1.37 empty_dir.go getPageSizeMountOption: the pod
// (pod-level resources, then containers, then init containers) must request hugepages of one
// size, or of the medium's size for HugePages-<size>.
func pageSizeMountOption(medium corev1.StorageMedium, pod *corev1.Pod) error {
	var mediumSize resource.Quantity
	if medium != corev1.StorageMediumHugePages {
		// helper.HugePageSizeFromMedium.
		q, err := resource.ParseQuantity(strings.TrimPrefix(string(medium), string(corev1.StorageMediumHugePagesPrefix)))
		if err != nil {
			return err
		}
		mediumSize = q
	}
	var lists []corev1.ResourceList
	// PodLevelResources is on by default in v1.37.
	if pod.Spec.Resources != nil {
		lists = append(lists, pod.Spec.Resources.Requests)
	}
	for _, c := range append(append([]corev1.Container{}, pod.Spec.Containers...), pod.Spec.InitContainers...) {
		lists = append(lists, c.Resources.Requests)
	}
	var pageSize resource.Quantity
	found := false
	for _, list := range lists {
		names := make([]string, 0, len(list))
		for name := range list {
			names = append(names, string(name))
		}
		sort.Strings(names)
		for _, name := range names {
			if !strings.HasPrefix(name, corev1.ResourceHugePagesPrefix) {
				continue
			}
			// helper.HugePageSizeFromResourceName.
			size, err := resource.ParseQuantity(strings.TrimPrefix(name, corev1.ResourceHugePagesPrefix))
			if err != nil {
				return err
			}
			if medium == corev1.StorageMediumHugePages {
				if found && pageSize.Cmp(size) != 0 {
					return fmt.Errorf("medium: %s can't be used if container requests multiple huge page sizes", medium)
				}
				found, pageSize = true, size
			} else if size.Cmp(mediumSize) == 0 {
				found, pageSize = true, size
			}
		}
	}
	if !found {
		return fmt.Errorf("medium %s: hugePages storage requested, but there is no resource request for huge pages", medium)
	}
	return nil
}
