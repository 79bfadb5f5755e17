package admission

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/volperm/volperm/nodeimpl/mutant"
)

// validateMountModes is the mountPropagation and recursiveReadOnly part of v1.37 validation.go
// ValidateVolumeMounts for every mount of cs (docs/spec.md [validation.mount-propagation],
// [validation.recursive-read-only]). Upstream hands both checks ValidateVolumeMounts' own path,
// so their errors name `volumeMounts.mountPropagation` and `volumeMounts.recursiveReadOnly`,
// without the mount's index.
func validateMountModes(cs []corev1.Container, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i := range cs {
		c := &cs[i]
		mounts := fldPath.Index(i).Child("volumeMounts")
		for j, m := range c.VolumeMounts {
			if mutant.On(mutant.MountsPathIndexed) {
				mounts = fldPath.Index(i).Child("volumeMounts").Index(j)
			}
			if m.MountPropagation != nil {
				errs = append(errs, propagationErrors(*m.MountPropagation, c, mounts.Child("mountPropagation"))...)
			}
			if m.RecursiveReadOnly != nil {
				errs = append(errs, rroErrors(m, mounts.Child("recursiveReadOnly"))...)
			}
		}
	}
	return errs
}

var propagations = []string{string(corev1.MountPropagationBidirectional), string(corev1.MountPropagationHostToContainer), string(corev1.MountPropagationNone)}

// propagationErrors is v1.37 validateMountPropagation for a container of a pod.
func propagationErrors(p corev1.MountPropagationMode, c *corev1.Container, at *field.Path) field.ErrorList {
	var errs field.ErrorList
	known := false
	for _, k := range propagations {
		known = known || string(p) == k
	}
	if !known {
		errs = append(errs, field.NotSupported(at, p, propagations))
	}
	if p == corev1.MountPropagationBidirectional && !mutant.On(mutant.MountsBidirectionalAllowed) {
		if sc := c.SecurityContext; sc == nil || sc.Privileged == nil || !*sc.Privileged {
			errs = append(errs, field.Forbidden(at, "Bidirectional mount propagation is available only to privileged containers"))
		}
	}
	return errs
}

var rroModes = []string{string(corev1.RecursiveReadOnlyDisabled), string(corev1.RecursiveReadOnlyEnabled), string(corev1.RecursiveReadOnlyIfPossible)}

// rroErrors is v1.37 validateMountRecursiveReadOnly.
func rroErrors(m corev1.VolumeMount, at *field.Path) field.ErrorList {
	switch *m.RecursiveReadOnly {
	case corev1.RecursiveReadOnlyDisabled:
		return nil
	case corev1.RecursiveReadOnlyEnabled, corev1.RecursiveReadOnlyIfPossible:
		var errs field.ErrorList
		if !m.ReadOnly {
			errs = append(errs, field.Forbidden(at, "may only be specified when readOnly is true"))
		}
		if m.MountPropagation != nil && *m.MountPropagation != corev1.MountPropagationNone && !mutant.On(mutant.MountsRROIgnoresPropagation) &&
			!(mutant.On(mutant.MountsRROOneErrorOnly) && len(errs) > 0) {
			errs = append(errs, field.Forbidden(at, "may only be specified when mountPropagation is None or not specified"))
		}
		return errs
	}
	return field.ErrorList{field.NotSupported(at, *m.RecursiveReadOnly, rroModes)}
}
