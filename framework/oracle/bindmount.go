package oracle

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/rule"
)

// docs/spec.md "Bind mount options (KEP-5855)": [dropping.bind-mount-options],
// [validation.bind-mount-options] and [mounts.bind-mount-options].

const (
	// podFeatureUnsupportedReason and its message are v1.37 pkg/kubelet/lifecycle/handlers.go
	// declaredFeaturesAdmitHandler's (Admit: "Pod requires node features that are not
	// available: %s"), as kubelet.go rejectPod writes the pod's status.
	podFeatureUnsupportedReason = "PodFeatureUnsupported"
	bindMountFeatureMsg         = "Pod was rejected: Pod requires node features that are not available: " + framework.GateVolumeBindMountOptions
)

// supportedBindMountOptions is v1.37 validation.go supportedBindMountOptions, sorted.
var supportedBindMountOptions = []string{"nodev", "noexec", "nosuid"}

// podMounts calls visit with every volumeMount of pod's containers, init containers and
// ephemeral containers, in AllContainers order, with its path.
func podMounts(pod *corev1.Pod, visit func(m *corev1.VolumeMount, at *field.Path)) {
	spec := field.NewPath("spec")
	each := func(cs []corev1.Container, at *field.Path) {
		for i := range cs {
			for j := range cs[i].VolumeMounts {
				visit(&cs[i].VolumeMounts[j], at.Index(i).Child("volumeMounts").Index(j))
			}
		}
	}
	each(pod.Spec.InitContainers, spec.Child("initContainers"))
	each(pod.Spec.Containers, spec.Child("containers"))
	for i := range pod.Spec.EphemeralContainers {
		ec := &pod.Spec.EphemeralContainers[i]
		for j := range ec.VolumeMounts {
			visit(&ec.VolumeMounts[j], spec.Child("ephemeralContainers").Index(i).Child("volumeMounts").Index(j))
		}
	}
}

// bindMountOptionsInUse is v1.37 pkg/api/pod/util.go bindMountOptionsInUse.
func bindMountOptionsInUse(pod *corev1.Pod) bool {
	if pod == nil {
		return false
	}
	in := false
	podMounts(pod, func(m *corev1.VolumeMount, _ *field.Path) { in = in || len(m.BindMountOptions) > 0 })
	return in
}

// dropBindMountOptions is [dropping.bind-mount-options]: v1.37 pkg/api/pod/util.go
// dropDisabledFields clears every volumeMount's bindMountOptions when the apiserver's
// VolumeBindMountOptions gate is off and the old pod uses none; it returns the paths cleared.
func dropBindMountOptions(pod, old *corev1.Pod, apiserver map[string]bool, t *tracer) []string {
	if !bindMountOptionsInUse(pod) {
		return nil
	}
	t.hit(rule.DropBindMountOptions, append(gateConds(apiserver, framework.GateVolumeBindMountOptions), oldConds(old, bindMountOptionsInUse(old)))...)
	if gateOn(apiserver, framework.GateVolumeBindMountOptions) || bindMountOptionsInUse(old) {
		return nil
	}
	var dropped []string
	podMounts(pod, func(m *corev1.VolumeMount, at *field.Path) {
		if len(m.BindMountOptions) > 0 {
			m.BindMountOptions = nil
			dropped = append(dropped, at.Child("bindMountOptions").String())
		}
	})
	return dropped
}

// validateBindMountOptions is [validation.bind-mount-options]: v1.37 validation.go
// ValidateVolumeMounts -> validateBindMountOptions (each option NotSupported unless supported,
// Duplicate when seen before: both for one index) and, on an image volume, Invalid with the
// whole list. Independent of the gate (with it off the field is dropped first).
func validateBindMountOptions(m corev1.VolumeMount, vols []corev1.Volume, at *field.Path, t *tracer) field.ErrorList {
	if len(m.BindMountOptions) == 0 {
		return nil
	}
	var errs field.ErrorList
	fld := at.Child("bindMountOptions")
	for i, opt := range m.BindMountOptions {
		if !slices.Contains(supportedBindMountOptions, opt) {
			errs = append(errs, field.NotSupported(fld.Index(i), opt, supportedBindMountOptions))
		}
		if slices.Contains(m.BindMountOptions[:i], opt) {
			errs = append(errs, field.Duplicate(fld.Index(i), opt))
		}
	}
	if i := slices.IndexFunc(vols, func(v corev1.Volume) bool { return v.Name == m.Name }); i >= 0 && vols[i].Image != nil {
		errs = append(errs, field.Invalid(fld, m.BindMountOptions, "bindMountOptions may not be used with image volumes"))
	}
	t.hit(rule.ValidBindMountOptions, cond(rule.Outcome, setOr(len(errs) > 0, "error", "ok")))
	return errs
}

// bindMountRejection is [mounts.bind-mount-options]' admission: v1.37 NodeDeclaredFeatures
// (GA, locked): the kubelet declares VolumeBindMountOptions when its gate is on and its runtime
// reports mount_options (component-helpers nodedeclaredfeatures volumebindmountoptions
// Discover); a pod with any bindMountOptions requires it (InferForScheduling, no gate check);
// the declared-features admit handler rejects a pod whose requirement is not declared.
func bindMountRejection(c *framework.Case, pod *corev1.Pod, t *tracer) string {
	if !bindMountOptionsInUse(pod) {
		return ""
	}
	declared := c.Gates.Kubelet[framework.GateVolumeBindMountOptions] && !c.Lacks(framework.RuntimeMountOptions)
	t.hit(rule.MountBindOptions, cond(rule.Gate, onOff(c.Gates.Kubelet[framework.GateVolumeBindMountOptions])),
		cond(rule.RuntimeMount, setOr(c.Lacks(framework.RuntimeMountOptions), "lacks", "supports")))
	if declared {
		return ""
	}
	return podFeatureUnsupportedReason + ": " + bindMountFeatureMsg
}

// noexecMount says whether volume's probe mount is noexec ([mounts.bind-mount-options]: the
// kubelet passes the options to the runtime as CRI Mount.mount_options, which applies them).
func noexecMount(pod *corev1.Pod, volume string) bool {
	m, _ := framework.ProbeMount(pod, volume)
	return slices.Contains(m.BindMountOptions, "noexec")
}

// validatePodBindMountOptions is validateBindMountOptions for every volumeMount of pod.
func validatePodBindMountOptions(pod *corev1.Pod, t *tracer) field.ErrorList {
	var errs field.ErrorList
	podMounts(pod, func(m *corev1.VolumeMount, at *field.Path) {
		errs = append(errs, validateBindMountOptions(*m, pod.Spec.Volumes, at, t)...)
	})
	return errs
}
