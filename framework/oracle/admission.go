package oracle

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/rule"
)

// admitted is the apiserver's answer plus what the node receives.
type admitted struct {
	result framework.Admission
	// pod is the defaulted pod after field dropping (what the kubelet sets up).
	pod *corev1.Pod
	// preserve names the volumes still carrying preservePermissions.
	preserve map[string]bool
}

// admit runs docs/spec.md "Admission": defaulting -> field dropping -> validation -> the
// flexVolume allowlist. A PersistentVolume case admits the PV instead of the pod.
func admit(c *framework.Case, t *tracer) admitted {
	if c.PersistentVolume != nil {
		return admitPersistentVolume(c, t)
	}
	if c.Pod == nil {
		return admitted{result: framework.Admission{Allowed: true}}
	}
	pod := c.Pod.DeepCopy()
	var old *corev1.Pod
	if c.OldPod != nil {
		old = c.OldPod.DeepCopy()
	}
	// docs/spec.md "Releases": the request is decoded first, as the apiserver's release knows it.
	warnings, rejected := decodeRequest(c, pod, old, t)
	if rejected != "" {
		return admitted{result: framework.Admission{Errors: []string{rejected}}}
	}
	t.traceDefaulting(pod)
	defaultPodVolumes(pod)
	if old != nil {
		defaultPodVolumes(old)
	}
	dropped, preserve := dropDisabledFields(pod, old, c.PreservePermissions, c.OldPreservePermissions, c.Gates.APIServer, t)
	if more := dropBindMountOptions(pod, old, c.Gates.APIServer, t); len(more) > 0 {
		dropped = append(dropped, more...)
		sort.Strings(dropped)
	}

	a := admitted{pod: pod, preserve: preserve}
	a.result.Dropped = dropped
	a.result.Warnings = warnings
	for name := range preserve {
		a.result.PreservePermissions = append(a.result.PreservePermissions, name)
	}
	sort.Strings(a.result.PreservePermissions)

	// A request that fails validation never reaches validating admission (kube-apiserver
	// create path: validation, then validating admission).
	errs := validatePod(pod)
	t.traceValidation(pod, c.Gates.APIServer, errs)
	t.traceMounts(pod, errs)
	// docs/spec.md "User namespaces (KEP-127)": the parts of ValidatePodSpec that read hostUsers.
	userns := validateUserNamespaces(pod, old, c.Releases.Of(true))
	t.traceUserNamespaces(pod, old, c.Releases.Of(true), userns)
	errs = append(errs, userns...)
	errs = append(errs, validateGroupsPolicy(pod, t)...)
	errs = append(errs, validateSELinuxPolicy(pod, old, c.Releases.Of(true), t)...)
	errs = append(errs, validatePodBindMountOptions(pod, t)...)
	if len(errs) == 0 && c.FlexVolumePolicy != nil {
		errs = podPolicyErrors(c.FlexVolumePolicy, pod, t)
	}
	a.result.Errors = errorTexts(errs)
	a.result.Allowed = len(errs) == 0
	return a
}

// admitPersistentVolume admits a PV: defaulting, the volume-source validation, the allowlist
// (docs/spec.md "Admission": dropping and pod rules do not apply).
func admitPersistentVolume(c *framework.Case, t *tracer) admitted {
	pv := c.PersistentVolume.DeepCopy()
	// v1.37 pkg/apis/core/v1/defaults.go SetDefaults_HostPathVolumeSource: type nil -> "".
	if hp := pv.Spec.HostPath; hp != nil && hp.Type == nil {
		t.hit(rule.DefaultHostPath, cond(rule.Object, "persistentVolume"))
		hp.Type = ptrTo(corev1.HostPathUnset)
	}
	errs := validatePersistentVolumeSource(pv)
	if len(errs) == 0 && c.FlexVolumePolicy != nil {
		errs = pvPolicyErrors(c.FlexVolumePolicy, pv, t)
	}
	return admitted{result: framework.Admission{Allowed: len(errs) == 0, Errors: errorTexts(errs)}}
}

// defaultPodVolumes applies the v1 defaults that matter for volumes.
func defaultPodVolumes(pod *corev1.Pod) {
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		// v1.37 defaults.go SetDefaults_Volume: a volume with no source becomes an emptyDir.
		if sourceOf(&v.VolumeSource) == nil {
			v.EmptyDir = &corev1.EmptyDirVolumeSource{}
		}
		switch {
		case v.HostPath != nil && v.HostPath.Type == nil:
			// defaults.go SetDefaults_HostPathVolumeSource: type nil -> "" (HostPathUnset).
			v.HostPath.Type = ptrTo(corev1.HostPathUnset)
		case v.Secret != nil && v.Secret.DefaultMode == nil:
			// defaults.go SetDefaults_SecretVolumeSource: defaultMode nil -> 0644.
			v.Secret.DefaultMode = ptrTo(corev1.SecretVolumeSourceDefaultMode)
		case v.ConfigMap != nil && v.ConfigMap.DefaultMode == nil:
			// defaults.go SetDefaults_ConfigMapVolumeSource: defaultMode nil -> 0644.
			v.ConfigMap.DefaultMode = ptrTo(corev1.ConfigMapVolumeSourceDefaultMode)
		case v.DownwardAPI != nil && v.DownwardAPI.DefaultMode == nil:
			// defaults.go SetDefaults_DownwardAPIVolumeSource: defaultMode nil -> 0644.
			v.DownwardAPI.DefaultMode = ptrTo(corev1.DownwardAPIVolumeSourceDefaultMode)
		case v.Projected != nil && v.Projected.DefaultMode == nil:
			// defaults.go SetDefaults_ProjectedVolumeSource: defaultMode nil -> 0644.
			v.Projected.DefaultMode = ptrTo(corev1.ProjectedVolumeSourceDefaultMode)
		}
		if v.Image != nil && v.Image.PullPolicy == "" {
			// defaults.go SetDefaults_Volume: Always for a :latest (or untagged) reference, else
			// IfNotPresent (the ImageVolume gate is locked on).
			v.Image.PullPolicy = corev1.PullPolicy(setOr(imageTag(v.Image.Reference) == "latest", string(corev1.PullAlways), string(corev1.PullIfNotPresent)))
		}
		if v.Projected != nil {
			for j := range v.Projected.Sources {
				// defaults.go SetDefaults_ServiceAccountTokenProjection: expirationSeconds nil -> 3600.
				if t := v.Projected.Sources[j].ServiceAccountToken; t != nil && t.ExpirationSeconds == nil {
					t.ExpirationSeconds = ptrTo(int64(3600))
				}
			}
		}
	}
}

// errorTexts renders field errors as field.Error.Error() does, sorted.
func errorTexts(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	sort.Strings(out)
	return out
}

func ptrTo[T any](v T) *T { return &v }
