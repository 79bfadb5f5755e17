package admission

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/volperm/volperm/nodeimpl/mutant"
)

// validateSupplementalGroupsPolicy is v1.37 validation.go's checks of the pod's
// supplementalGroupsPolicy: validatePodSpecSecurityContext -> validateSupplementalGroupsPolicy
// (Merge or Strict, NotSupported otherwise) and validateWindows (Forbidden on a windows pod).
func validateSupplementalGroupsPolicy(pod *corev1.Pod) field.ErrorList {
	sc := pod.Spec.SecurityContext
	if sc == nil || sc.SupplementalGroupsPolicy == nil {
		return nil
	}
	at := field.NewPath("spec", "securityContext", "supplementalGroupsPolicy")
	var errs field.ErrorList
	switch p := *sc.SupplementalGroupsPolicy; p {
	case corev1.SupplementalGroupsPolicyMerge, corev1.SupplementalGroupsPolicyStrict:
	default:
		errs = append(errs, field.NotSupported(at, p, []corev1.SupplementalGroupsPolicy{corev1.SupplementalGroupsPolicyMerge, corev1.SupplementalGroupsPolicyStrict}))
	}
	if pod.Spec.OS != nil && pod.Spec.OS.Name == corev1.Windows &&
		!(*sc.SupplementalGroupsPolicy == corev1.SupplementalGroupsPolicyMerge && mutant.On(mutant.BlindGroupsWindowsMergeAllowed)) {
		errs = append(errs, field.Forbidden(at, "cannot be set for a windows pod"))
	}
	return errs
}
