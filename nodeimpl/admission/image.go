package admission

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/volperm/volperm/nodeimpl/mutant"
)

// validateImage is v1.37 validation.go validateImageVolumeSource: a reference is required, the
// pull policy one of Always, IfNotPresent and Never (validatePullPolicy).
func validateImage(s *corev1.ImageVolumeSource, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Reference == "" {
		errs = append(errs, field.Required(fld.Child("reference"), ""))
	}
	switch s.PullPolicy {
	case corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever:
	case "":
		errs = append(errs, field.Required(fld.Child("pullPolicy"), ""))
	default:
		supported := []corev1.PullPolicy{corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever}
		if mutant.On(mutant.BlindImagePullPolicyFolded) && slices.ContainsFunc(supported, func(p corev1.PullPolicy) bool { return strings.EqualFold(string(p), string(s.PullPolicy)) }) {
			break
		}
		errs = append(errs, field.NotSupported(fld.Child("pullPolicy"), s.PullPolicy, supported))
	}
	return errs
}

// imageTag is the tag v1.37 pkg/util/parsers ParseImageName gives ref: the last path
// element's after its colon; "latest" for neither tag nor digest; "" for a digest alone.
func imageTag(ref string) string {
	rest, digest, _ := strings.Cut(ref, "@")
	if i := strings.LastIndexByte(rest, '/'); i >= 0 {
		rest = rest[i+1:]
	}
	if i := strings.IndexByte(rest, ':'); i >= 0 {
		return rest[i+1:]
	}
	if digest != "" || mutant.On(mutant.BlindImageUntaggedIfNotPresent) {
		return ""
	}
	return "latest"
}
