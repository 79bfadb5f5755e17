package admission

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/volperm/volperm/nodeimpl/mutant"
	"github.com/volperm/volperm/nodeimpl/release"
)

// validateUserNamespaces is every check of v1.37 ValidatePodSpec that reads spec.hostUsers
// (KEP-127), one line per rule with its upstream source. old is the old pod of an update (nil
// on a create): it decides the two ratchets of v1.37 pkg/api/pod/util.go
// GetValidationOptionsFromPodSpecAndMeta.
func validateUserNamespaces(pod, old *corev1.Pod, rel string) field.ErrorList {
	spec := &pod.Spec
	specPath := field.NewPath("spec")
	userns := spec.HostUsers != nil && !*spec.HostUsers
	if mutant.On(mutant.UserNSSetNotFalse) {
		userns = spec.HostUsers != nil
	}
	var allErrs field.ErrorList

	// v1.37 validation.go ValidateSecurityContext (called by validateContainerCommon for every
	// init, regular and ephemeral container with hostUsers = HostUsers unset or true).
	hostUsers := spec.HostUsers == nil || *spec.HostUsers
	if mutant.On(mutant.UserNSUnmaskedUnsetAllowed) {
		hostUsers = spec.HostUsers != nil && *spec.HostUsers
	}
	visitContainers(spec, specPath, func(c *corev1.Container, p *field.Path) {
		if sc := c.SecurityContext; hostUsers && sc != nil && sc.ProcMount != nil && *sc.ProcMount == corev1.UnmaskedProcMount &&
			(!strings.HasPrefix(p.String(), "spec.initContainers") || !mutant.On(mutant.BlindUsernsUnmaskedInitSkipped)) {
			allErrs = append(allErrs, field.Invalid(p.Child("securityContext").Child("procMount"), sc.ProcMount, "`hostUsers` must be false to use `Unmasked`"))
		}
	})

	if userns {
		// v1.37 util.go useAllowUserNamespacesHostNetworkSupport (gate UserNamespacesHostNetworkSupport
		// off, its default) and hasUserNamespacesWithVolumeDevices, on the old spec.
		oldUserns := old != nil && old.Spec.HostUsers != nil && !*old.Spec.HostUsers
		allowHostNetwork := (oldUserns || old != nil && mutant.On(mutant.BlindUsernsHostNetworkRatchetAnyOld)) && old.Spec.HostNetwork &&
			(release.KeepsUserNSHostNetwork(rel) || mutant.On(mutant.BlindUsernsHostNetworkRatchetV134))
		allowVolumeDevices := false
		if oldUserns {
			ratchetSpec := &old.Spec
			if mutant.On(mutant.BlindUsernsVolumeDevicesRatchetNew) {
				ratchetSpec = spec
			}
			visitContainers(ratchetSpec, specPath, func(c *corev1.Container, _ *field.Path) {
				allowVolumeDevices = allowVolumeDevices || len(c.VolumeDevices) > 0
			})
		}
		// v1.37 validation.go validateHostUsers, in its order and with its paths ("HostPID", "HostIPC").
		pidPath, ipcPath := specPath.Child("HostPID"), specPath.Child("HostIPC")
		if mutant.On(mutant.UserNSLowercasePaths) {
			pidPath, ipcPath = specPath.Child("hostPID"), specPath.Child("hostIPC")
		}
		if spec.HostNetwork && !allowHostNetwork {
			allErrs = append(allErrs, field.Forbidden(specPath.Child("hostNetwork"), "when `hostUsers` is false"))
		}
		if spec.HostPID && !(oldUserns && old.Spec.HostPID && mutant.On(mutant.BlindUsernsHostPIDRatchets)) {
			allErrs = append(allErrs, field.Forbidden(pidPath, "when `hostUsers` is false"))
		}
		if spec.HostIPC {
			allErrs = append(allErrs, field.Forbidden(ipcPath, "when `hostUsers` is false"))
		}
		if !allowVolumeDevices && !mutant.On(mutant.UserNSVolumeDevicesUnchecked) {
			visitContainers(spec, specPath, func(c *corev1.Container, p *field.Path) {
				if len(c.VolumeDevices) > 0 && (!strings.HasPrefix(p.String(), "spec.initContainers") || !mutant.On(mutant.BlindUsernsVolumeDevicesInitSkipped)) {
					allErrs = append(allErrs, field.Forbidden(p.Child("volumeDevices"), "when `hostUsers` is false"))
				}
			})
		}
	}

	// v1.37 validation.go validateOS -> validateWindows: hostUsers may not be set at all.
	if spec.OS != nil && spec.OS.Name == corev1.Windows && spec.HostUsers != nil {
		allErrs = append(allErrs, field.Forbidden(specPath.Child("hostUsers"), "cannot be set for a windows pod"))
	}
	return allErrs
}

// visitContainers is v1.37 pkg/apis/core/pods VisitContainersWithPath: init containers, then
// containers, then ephemeral containers, each with its path.
func visitContainers(spec *corev1.PodSpec, specPath *field.Path, visit func(*corev1.Container, *field.Path)) {
	for i := range spec.InitContainers {
		visit(&spec.InitContainers[i], specPath.Child("initContainers").Index(i))
	}
	for i := range spec.Containers {
		visit(&spec.Containers[i], specPath.Child("containers").Index(i))
	}
	for i := range spec.EphemeralContainers {
		c := corev1.Container(spec.EphemeralContainers[i].EphemeralContainerCommon)
		visit(&c, specPath.Child("ephemeralContainers").Index(i))
	}
}
