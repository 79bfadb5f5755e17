// Package admission is the reference kube-apiserver's part for volumes: it admits a Pod (or a
// PersistentVolume) the way docs/spec.md "Admission" orders it: defaulting -> field dropping by
// the apiserver gates -> validation with the upstream texts -> the flexVolume driver allowlist
// (seed 004) as a validating admission step. It makes no syscalls.
package admission

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/volperm/volperm/nodeimpl/gates"
	"github.com/volperm/volperm/nodeimpl/mutant"
	"github.com/volperm/volperm/nodeimpl/release"
)

// FlexVolumePolicy is seed 004's allowlist (PodSecurityPolicy's `volumes` and
// `allowedFlexVolumes[].driver`), enforced as a validating admission step.
type FlexVolumePolicy struct {
	// AllowedVolumeTypes lists the allowed volume types by their API name ("*" = all); empty = all.
	AllowedVolumeTypes []string
	// AllowedDrivers lists the allowed flexVolume drivers (exact match); empty = every driver.
	AllowedDrivers []string
}

// Request is one create (or update) the apiserver admits.
type Request struct {
	// Pod is admitted; OldPod != nil makes it an update of OldPod's spec, which decides dropping only.
	Pod, OldPod *corev1.Pod
	// PersistentVolume is admitted instead of Pod when set (no dropping, no pod rules).
	PersistentVolume *corev1.PersistentVolume
	// PreservePermissions names the volumes of Pod carrying the proposed field (seed 002; not in
	// the v1 API); OldPreservePermissions the same for OldPod.
	PreservePermissions, OldPreservePermissions []string
	// Gates are the kube-apiserver's gates.
	Gates gates.Set
	// FlexPolicy, when set, is the allowlist in force.
	FlexPolicy *FlexVolumePolicy
	// Release is the apiserver's Kubernetes release ("" = the newest), and Strict the request's
	// fieldValidation Strict (else Warn): together they decide what an unknown field does.
	Release string
	Strict  bool
}

// Result is the apiserver's answer.
type Result struct {
	Allowed bool
	// Errors are field.Error.Error() texts, sorted.
	Errors []string
	// Dropped are the field paths cleared by dropping, sorted.
	Dropped []string
	// Pod is a deep copy of the request's pod after defaulting and dropping (nil for a PV).
	Pod *corev1.Pod
	// PreservePermissions are the volumes still carrying the proposed field, sorted.
	PreservePermissions []string
	// Warnings are the warnings of an admitted request: one per unknown field it carried.
	Warnings []string
}

// Admit runs docs/spec.md "Admission" on req. Stages stop the request: an invalid policy rejects
// with the policy errors only (seed 004 "Validation rules"); validation errors reject before the
// allowlist runs (kube-apiserver runs validating admission only on a valid object). A request
// with neither a pod nor a PersistentVolume admits nothing and is allowed.
func Admit(req Request) Result {
	var res Result
	var validate func() field.ErrorList
	var allow func(*FlexVolumePolicy) field.ErrorList
	switch {
	case req.PersistentVolume != nil:
		// docs/spec.md "Admission": a PersistentVolume is admitted the same way, without dropping
		// and pod rules. Its defaults change nothing validation or the allowlist looks at.
		pv := req.PersistentVolume
		validate = func() field.ErrorList { return validatePersistentVolumeSource(&pv.Spec.PersistentVolumeSource) }
		allow = func(p *FlexVolumePolicy) field.ErrorList { return allowPersistentVolume(p, pv) }
	case req.Pod != nil:
		pod := req.Pod.DeepCopy()
		// docs/spec.md "Releases": the request is decoded as the apiserver's release knows it.
		unknown := release.Decode(req.Release, pod)
		if len(unknown) > 0 {
			texts := make([]string, len(unknown))
			for i, p := range unknown {
				texts[i] = fmt.Sprintf("unknown field %q", p)
			}
			if req.Strict && !mutant.On(mutant.ReleaseStrictIgnored) {
				if mutant.On(mutant.BlindReleaseStrictSortedFields) {
					sort.Strings(texts)
				}
				return Result{Errors: []string{`Pod in version "v1" cannot be handled as a Pod: strict decoding error: ` + strings.Join(texts, ", ")}}
			}
			if !mutant.On(mutant.ReleaseWarnSilently) {
				res.Warnings = texts
			}
		}
		var old *corev1.Pod
		if req.OldPod != nil {
			old = req.OldPod.DeepCopy()
			release.Decode(req.Release, old) // the apiserver stored it without what it does not know
		}
		setDefaultsPod(pod)
		if mutant.On(mutant.DropAfterValidation) {
			if errs := validatePod(pod, old, req.Release); len(errs) > 0 {
				return Result{Errors: errorTexts(errs)}
			}
		}
		preserve := carriers(pod, req.PreservePermissions)
		res.Dropped, preserve = dropDisabledFields(req.Gates, pod, old, preserve, carriers(req.OldPod, req.OldPreservePermissions))
		if len(unknown) > 0 && mutant.On(mutant.BlindReleaseUnknownListedDropped) {
			res.Dropped = sortedStrings(append(res.Dropped, unknown...))
		}
		res.Pod = pod
		res.PreservePermissions = sortedKeys(preserve)
		validate = func() field.ErrorList { return validatePod(pod, old, req.Release) }
		allow = func(p *FlexVolumePolicy) field.ErrorList { return allowPod(p, pod) }
	default:
		return Result{Allowed: true}
	}
	res.Errors = firstFailingStage(req.FlexPolicy, validate, allow)
	res.Allowed = len(res.Errors) == 0
	return res
}

// firstFailingStage runs the policy check, validation and the allowlist in this order and
// returns the error texts of the first stage that has any, sorted.
func firstFailingStage(policy *FlexVolumePolicy, validate func() field.ErrorList, allow func(*FlexVolumePolicy) field.ErrorList) []string {
	if errs := ValidateFlexVolumePolicy(policy); len(errs) > 0 {
		return errs
	}
	if errs := validate(); len(errs) > 0 {
		return errorTexts(errs)
	}
	if policy == nil {
		return nil
	}
	return errorTexts(allow(policy))
}

func sortedKeys(set map[string]bool) []string {
	if len(set) == 0 {
		return nil
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
