package admission

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/volperm/volperm/nodeimpl/mutant"
	"github.com/volperm/volperm/nodeimpl/release"
)

// validateSELinuxChangePolicy is v1.37 validation.go validateSELinuxChangePolicy, with the
// option pkg/api/pod/util.go useOnlyRecursiveSELinuxChangePolicy gives it (an apiserver whose
// SELinuxMount gate is off, for a pod whose old spec has no policy: Recursive only), and
// validateWindows (Forbidden on a windows pod).
func validateSELinuxChangePolicy(pod, old *corev1.Pod, rel string) field.ErrorList {
	sc := pod.Spec.SecurityContext
	if sc == nil || sc.SELinuxChangePolicy == nil {
		return nil
	}
	at := field.NewPath("spec", "securityContext", "seLinuxChangePolicy")
	v := *sc.SELinuxChangePolicy
	onlyRecursive := !release.SELinuxMount(rel) && !mutant.On(mutant.SELinuxPolicyMountOptionOld)
	if old != nil && old.Spec.SecurityContext != nil && old.Spec.SecurityContext.SELinuxChangePolicy != nil {
		onlyRecursive = false
	}
	var errs field.ErrorList
	switch {
	case onlyRecursive && v != corev1.SELinuxChangePolicyRecursive:
		errs = append(errs, field.NotSupported(at, v, []corev1.PodSELinuxChangePolicy{corev1.SELinuxChangePolicyRecursive}))
	case !onlyRecursive && v != corev1.SELinuxChangePolicyRecursive && v != corev1.SELinuxChangePolicyMountOption:
		errs = append(errs, field.NotSupported(at, v, []corev1.PodSELinuxChangePolicy{corev1.SELinuxChangePolicyMountOption, corev1.SELinuxChangePolicyRecursive}))
	}
	if pod.Spec.OS != nil && pod.Spec.OS.Name == corev1.Windows && !mutant.On(mutant.BlindSELinuxWindowsUnchecked) {
		errs = append(errs, field.Forbidden(at, "cannot be set for a windows pod"))
	}
	return errs
}
