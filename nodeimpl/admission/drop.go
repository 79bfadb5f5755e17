package admission

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/volperm/volperm/nodeimpl/gates"
	"github.com/volperm/volperm/nodeimpl/mutant"
	"github.com/volperm/volperm/nodeimpl/release"
)

// atomicWriterType names the source of v that may carry preservePermissions (seed 002: secret,
// configMap, downwardAPI, projected), or "" if it may not.
func atomicWriterType(v *corev1.Volume) string {
	switch {
	case v.Secret != nil:
		return "secret"
	case v.ConfigMap != nil:
		return "configMap"
	case v.DownwardAPI != nil:
		return "downwardAPI"
	case v.Projected != nil:
		return "projected"
	}
	return ""
}

// carriers returns the volumes of pod, by name, that carry preservePermissions according to
// names. The field exists only on AtomicWriter sources (seed 002), so a name that denotes no such
// volume of pod carries nothing, as an apiserver prunes a field its schema does not have.
func carriers(pod *corev1.Pod, names []string) map[string]bool {
	out := map[string]bool{}
	if pod == nil {
		return out
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if want[v.Name] && atomicWriterType(v) != "" {
			out[v.Name] = true
		}
	}
	return out
}

// dropDisabledFields mirrors v1.37 pkg/api/pod/util.go dropDisabledFields for the fields volperm
// knows: it clears them in pod (and in preserve) and returns the cleared field paths, sorted, and
// what still carries preservePermissions.
func dropDisabledFields(g gates.Set, pod, oldPod *corev1.Pod, preserve, oldPreserve map[string]bool) ([]string, map[string]bool) {
	var dropped []string
	volumes := field.NewPath("spec", "volumes")
	// v1.37 pkg/api/pod/util.go dropDisabledFields: EmptyDirVolumeMode off and not in use by the
	// old pod spec (emptyDirVolumeModeInUse) -> every emptyDir's mode is cleared.
	perVolume := mutant.On(mutant.DropInUseSameVolume)
	inUse := emptyDirVolumeModeInUse(oldPod) && !perVolume && !mutant.On(mutant.DropIgnoresInUse)
	if !g.Enabled(gates.EmptyDirVolumeMode) && !inUse && !mutant.On(mutant.DropNever) {
		for i := range pod.Spec.Volumes {
			if ed := pod.Spec.Volumes[i].EmptyDir; ed != nil && ed.Mode != nil {
				if perVolume && sameVolumeHadMode(oldPod, pod.Spec.Volumes[i].Name) {
					continue
				}
				ed.Mode = nil
				if !mutant.On(mutant.DropNotReported) {
					dropped = append(dropped, volumes.Index(i).Child("emptyDir", "mode").String())
				}
			}
		}
	}
	// docs/spec.md "Field dropping": the PreservePermissions proposal gate follows the same
	// pattern: off and not on any volume of the old pod -> cleared on every volume.
	preserveInUse := len(oldPreserve) != 0
	if mutant.On(mutant.BlindDropPreserveInUseNewPod) {
		preserveInUse = len(preserve) != 0
	}
	if !g.Enabled(gates.PreservePermissions) && (!preserveInUse || mutant.On(mutant.DropPreserveIgnoresInUse)) {
		for i := range pod.Spec.Volumes {
			v := &pod.Spec.Volumes[i]
			if preserve[v.Name] {
				typ := atomicWriterType(v)
				if mutant.On(mutant.BlindDropPreservePathSecret) {
					typ = "secret"
				}
				dropped = append(dropped, volumes.Index(i).Child(typ, "preservePermissions").String())
			}
		}
		preserve = map[string]bool{}
	}
	// v1.37 pkg/api/pod/util.go dropDisabledAtomicWriteVolumeUserFields: AtomicWriteVolumeUserFields
	// off and not in use by the old pod spec (atomicWriteVolumeUserFieldsInUse) -> defaultUser and
	// every user cleared (KEP-5936).
	userInUse := atomicWriteVolumeUserFieldsInUse(oldPod) && !mutant.On(mutant.AtomicUserDropIgnoresInUse)
	if !g.Enabled(gates.AtomicWriteVolumeUserFields) && !userInUse {
		dropped = append(dropped, dropAtomicWriteVolumeUserFields(pod)...)
	}
	dropped = append(dropped, dropBindMountOptions(g, pod, oldPod)...)
	return sortedStrings(dropped), preserve
}

// dropAtomicWriteVolumeUserFields is the clearing part of v1.37 pkg/api/pod/util.go
// dropDisabledAtomicWriteVolumeUserFields (the fields release.UserFields lists). It returns the
// paths of the fields that were set.
func dropAtomicWriteVolumeUserFields(pod *corev1.Pod) []string {
	var dropped []string
	for _, f := range release.UserFields(pod) {
		if *f.Ptr != nil {
			*f.Ptr = nil
			dropped = append(dropped, f.Path)
		}
	}
	return dropped
}

// atomicWriteVolumeUserFieldsInUse is v1.37 pkg/api/pod/util.go atomicWriteVolumeUserFieldsInUse:
// any volume of the old pod spec sets defaultUser or a user.
func atomicWriteVolumeUserFieldsInUse(pod *corev1.Pod) bool {
	for _, f := range release.UserFields(pod) {
		if *f.Ptr != nil && !(!strings.HasSuffix(f.Path, ".defaultUser") && mutant.On(mutant.BlindDropUserInUseDefaultUserOnly)) {
			return true
		}
	}
	return false
}

// emptyDirVolumeModeInUse is v1.37 pkg/api/pod/util.go emptyDirVolumeModeInUse: any emptyDir of
// the old pod spec has a non-nil mode.
func emptyDirVolumeModeInUse(pod *corev1.Pod) bool {
	if pod == nil {
		return false
	}
	for _, v := range pod.Spec.Volumes {
		if v.EmptyDir != nil && v.EmptyDir.Mode != nil && !(*v.EmptyDir.Mode == 0 && mutant.On(mutant.BlindDropModeZeroNotInUse)) {
			return true
		}
	}
	return false
}

// sameVolumeHadMode reports whether old has an emptyDir named name with a mode: the in-use rule
// of the mutant drop-mode-in-use-same-volume-only (upstream looks at every volume).
func sameVolumeHadMode(old *corev1.Pod, name string) bool {
	if old == nil {
		return false
	}
	for _, v := range old.Spec.Volumes {
		if v.Name == name && v.EmptyDir != nil && v.EmptyDir.Mode != nil {
			return true
		}
	}
	return false
}
