package admission

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/volperm/volperm/nodeimpl/gates"
	"github.com/volperm/volperm/nodeimpl/mutant"
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
	if !g.Enabled(gates.PreservePermissions) && (len(oldPreserve) == 0 || mutant.On(mutant.DropPreserveIgnoresInUse)) {
		for i := range pod.Spec.Volumes {
			v := &pod.Spec.Volumes[i]
			if preserve[v.Name] {
				dropped = append(dropped, volumes.Index(i).Child(atomicWriterType(v), "preservePermissions").String())
			}
		}
		preserve = map[string]bool{}
	}
	// v1.37 pkg/api/pod/util.go dropDisabledAtomicWriteVolumeUserFields: AtomicWriteVolumeUserFields
	// off and not in use by the old pod spec (atomicWriteVolumeUserFieldsInUse) -> defaultUser and
	// every user cleared (KEP-5936).
	userInUse := atomicWriteVolumeUserFieldsInUse(oldPod) && !mutant.On(mutant.AtomicUserDropIgnoresInUse)
	if !g.Enabled(gates.AtomicWriteVolumeUserFields) && !userInUse {
		dropped = append(dropped, dropAtomicWriteVolumeUserFields(pod, volumes)...)
	}
	return sortedStrings(dropped), preserve
}

// dropAtomicWriteVolumeUserFields is the clearing part of v1.37 pkg/api/pod/util.go
// dropDisabledAtomicWriteVolumeUserFields, with its switches (the first source set in a volume,
// in a projection, is the one cleared). It returns the paths of the fields that were set.
func dropAtomicWriteVolumeUserFields(pod *corev1.Pod, volumes *field.Path) []string {
	if pod == nil {
		return nil
	}
	var dropped []string
	drop := func(u **int64, at *field.Path) {
		if *u != nil {
			*u = nil
			dropped = append(dropped, at.String())
		}
	}
	// v1.37 util.go dropUserFieldsInKeyToPaths.
	keyToPaths := func(items []corev1.KeyToPath, at *field.Path) {
		for j := range items {
			drop(&items[j].User, at.Child("items").Index(j).Child("user"))
		}
	}
	// v1.37 util.go dropUserFieldsInDownwardAPIVolumeFiles.
	downwardAPIFiles := func(items []corev1.DownwardAPIVolumeFile, at *field.Path) {
		for j := range items {
			drop(&items[j].User, at.Child("items").Index(j).Child("user"))
		}
	}
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		at := volumes.Index(i)
		switch {
		case v.Secret != nil:
			drop(&v.Secret.DefaultUser, at.Child("secret", "defaultUser"))
			keyToPaths(v.Secret.Items, at.Child("secret"))
		case v.ConfigMap != nil:
			drop(&v.ConfigMap.DefaultUser, at.Child("configMap", "defaultUser"))
			keyToPaths(v.ConfigMap.Items, at.Child("configMap"))
		case v.DownwardAPI != nil:
			drop(&v.DownwardAPI.DefaultUser, at.Child("downwardAPI", "defaultUser"))
			downwardAPIFiles(v.DownwardAPI.Items, at.Child("downwardAPI"))
		case v.Projected != nil:
			drop(&v.Projected.DefaultUser, at.Child("projected", "defaultUser"))
			for j := range v.Projected.Sources {
				src := &v.Projected.Sources[j]
				srcAt := at.Child("projected", "sources").Index(j)
				switch {
				case src.Secret != nil:
					keyToPaths(src.Secret.Items, srcAt.Child("secret"))
				case src.DownwardAPI != nil:
					downwardAPIFiles(src.DownwardAPI.Items, srcAt.Child("downwardAPI"))
				case src.ConfigMap != nil:
					keyToPaths(src.ConfigMap.Items, srcAt.Child("configMap"))
				case src.ServiceAccountToken != nil:
					drop(&src.ServiceAccountToken.User, srcAt.Child("serviceAccountToken", "user"))
				case src.ClusterTrustBundle != nil:
					drop(&src.ClusterTrustBundle.User, srcAt.Child("clusterTrustBundle", "user"))
				case src.PodCertificate != nil:
					drop(&src.PodCertificate.User, srcAt.Child("podCertificate", "user"))
				}
			}
		}
	}
	return dropped
}

// atomicWriteVolumeUserFieldsInUse is v1.37 pkg/api/pod/util.go atomicWriteVolumeUserFieldsInUse:
// any volume of the old pod spec sets defaultUser or a user, looked up with upstream's else-if
// chains (per volume: secret, configMap, downwardAPI, projected; per projection: secret,
// downwardAPI, configMap, serviceAccountToken, clusterTrustBundle, podCertificate).
func atomicWriteVolumeUserFieldsInUse(pod *corev1.Pod) bool {
	if pod == nil {
		return false
	}
	anyKeyToPath := func(items []corev1.KeyToPath) bool {
		for _, it := range items {
			if it.User != nil {
				return true
			}
		}
		return false
	}
	anyDownwardAPIFile := func(items []corev1.DownwardAPIVolumeFile) bool {
		for _, it := range items {
			if it.User != nil {
				return true
			}
		}
		return false
	}
	for _, v := range pod.Spec.Volumes {
		switch {
		case v.Secret != nil:
			if v.Secret.DefaultUser != nil || anyKeyToPath(v.Secret.Items) {
				return true
			}
		case v.ConfigMap != nil:
			if v.ConfigMap.DefaultUser != nil || anyKeyToPath(v.ConfigMap.Items) {
				return true
			}
		case v.DownwardAPI != nil:
			if v.DownwardAPI.DefaultUser != nil || anyDownwardAPIFile(v.DownwardAPI.Items) {
				return true
			}
		case v.Projected != nil:
			if v.Projected.DefaultUser != nil {
				return true
			}
			for _, src := range v.Projected.Sources {
				var used bool
				switch {
				case src.Secret != nil:
					used = anyKeyToPath(src.Secret.Items)
				case src.DownwardAPI != nil:
					used = anyDownwardAPIFile(src.DownwardAPI.Items)
				case src.ConfigMap != nil:
					used = anyKeyToPath(src.ConfigMap.Items)
				case src.ServiceAccountToken != nil:
					used = src.ServiceAccountToken.User != nil
				case src.ClusterTrustBundle != nil:
					used = src.ClusterTrustBundle.User != nil
				case src.PodCertificate != nil:
					used = src.PodCertificate.User != nil
				}
				if used {
					return true
				}
			}
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
		if v.EmptyDir != nil && v.EmptyDir.Mode != nil {
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
