package oracle

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/rule"
)

// Upstream texts of docs/spec.md "User namespaces (KEP-127)".
const (
	// v1.37 validation.go validateHostUsers.
	hostUsersFalseMsg = "when `hostUsers` is false"
	// v1.37 validation.go ValidateSecurityContext.
	unmaskedNeedsUserNSMsg = "`hostUsers` must be false to use `Unmasked`"
	// v1.37 validation.go validateWindows.
	windowsForbiddenMsg = "cannot be set for a windows pod"
)

// hostUsersFalse says whether spec asks for a user namespace: hostUsers set and false (unset
// means true).
func hostUsersFalse(spec *corev1.PodSpec) bool {
	return spec.HostUsers != nil && !*spec.HostUsers
}

// hostUsersValue is rule.HostUsers for spec.
func hostUsersValue(spec *corev1.PodSpec) string {
	switch {
	case spec.HostUsers == nil:
		return "unset"
	case *spec.HostUsers:
		return "true"
	}
	return "false"
}

// podContainer is one container of a pod with its path, in v1.37 VisitContainersWithPath order:
// init containers, containers, ephemeral containers.
type podContainer struct {
	c    *corev1.Container
	path *field.Path
	kind string // rule.Container's value ("" for an ephemeral container)
}

func podContainers(spec *corev1.PodSpec, specPath *field.Path) []podContainer {
	var out []podContainer
	for i := range spec.InitContainers {
		out = append(out, podContainer{&spec.InitContainers[i], specPath.Child("initContainers").Index(i), "initContainer"})
	}
	for i := range spec.Containers {
		out = append(out, podContainer{&spec.Containers[i], specPath.Child("containers").Index(i), "container"})
	}
	for i := range spec.EphemeralContainers {
		c := corev1.Container(spec.EphemeralContainers[i].EphemeralContainerCommon)
		out = append(out, podContainer{&c, specPath.Child("ephemeralContainers").Index(i), ""})
	}
	return out
}

// hasVolumeDevices says whether any container of spec has volumeDevices.
func hasVolumeDevices(spec *corev1.PodSpec) bool {
	for _, c := range podContainers(spec, field.NewPath("spec")) {
		if len(c.c.VolumeDevices) > 0 {
			return true
		}
	}
	return false
}

// userNSAllowances are the two ratchets of v1.37 pkg/api/pod/util.go
// GetValidationOptionsFromPodSpecAndMeta for validateHostUsers, decided by the old pod of an
// update: AllowUserNamespacesHostNetworkSupport (useAllowUserNamespacesHostNetworkSupport, the
// UserNamespacesHostNetworkSupport gate being off) and AllowUserNamespacesWithVolumeDevices
// (hasUserNamespacesWithVolumeDevices).
// The hostNetwork ratchet exists from v1.35 (useAllowUserNamespacesHostNetworkSupport, with
// KEP-5607); a v1.34 apiserver forbids hostNetwork on every hostUsers: false pod.
func userNSAllowances(old *corev1.Pod, release string) (hostNetwork, volumeDevices bool) {
	if old == nil || !hostUsersFalse(&old.Spec) {
		return false, false
	}
	return old.Spec.HostNetwork && framework.ReleaseMinor(release) >= hostNetworkRatchetSince, hasVolumeDevices(&old.Spec)
}

// hostNetworkRatchetSince is the first minor release whose apiserver keeps an old pod's
// hostNetwork with hostUsers: false (v1.35 pkg/api/pod/util.go).
const hostNetworkRatchetSince = 35

// validateUserNamespaces is docs/spec.md "User namespaces (KEP-127)": the parts of v1.37
// ValidatePodSpec that read hostUsers, each in upstream's order (the texts are sorted later).
func validateUserNamespaces(pod *corev1.Pod, old *corev1.Pod, release string) field.ErrorList {
	spec := &pod.Spec
	specPath := field.NewPath("spec")
	var errs field.ErrorList
	// validateContainers / validateInitContainers / validateEphemeralContainers ->
	// ValidateSecurityContext(hostUsers = unset or true).
	if !hostUsersFalse(spec) {
		for _, c := range podContainers(spec, specPath) {
			if sc := c.c.SecurityContext; sc != nil && sc.ProcMount != nil && *sc.ProcMount == corev1.UnmaskedProcMount {
				errs = append(errs, field.Invalid(c.path.Child("securityContext", "procMount"), string(*sc.ProcMount), unmaskedNeedsUserNSMsg))
			}
		}
	}
	// validateHostUsers.
	if hostUsersFalse(spec) {
		allowHostNetwork, allowVolumeDevices := userNSAllowances(old, release)
		if !allowHostNetwork && spec.HostNetwork {
			errs = append(errs, field.Forbidden(specPath.Child("hostNetwork"), hostUsersFalseMsg))
		}
		if spec.HostPID {
			errs = append(errs, field.Forbidden(specPath.Child("HostPID"), hostUsersFalseMsg))
		}
		if spec.HostIPC {
			errs = append(errs, field.Forbidden(specPath.Child("HostIPC"), hostUsersFalseMsg))
		}
		if !allowVolumeDevices {
			for _, c := range podContainers(spec, specPath) {
				if len(c.c.VolumeDevices) > 0 {
					errs = append(errs, field.Forbidden(c.path.Child("volumeDevices"), hostUsersFalseMsg))
				}
			}
		}
	}
	// validateOS -> validateWindows.
	if spec.OS != nil && spec.OS.Name == corev1.Windows && spec.HostUsers != nil {
		errs = append(errs, field.Forbidden(specPath.Child("hostUsers"), windowsForbiddenMsg))
	}
	return errs
}

// traceUserNamespaces records the rules of docs/spec.md "User namespaces (KEP-127)" a pod meets,
// with their outcomes read from errs (the pod's validation errors).
func (t *tracer) traceUserNamespaces(pod, old *corev1.Pod, release string, errs field.ErrorList) {
	if t == nil {
		return
	}
	spec := &pod.Spec
	users := cond(rule.HostUsers, hostUsersValue(spec))
	hasErr := func(match func(field string) bool) string {
		for _, e := range errs {
			if match(e.Field) && (e.Detail == hostUsersFalseMsg || e.Detail == unmaskedNeedsUserNSMsg || e.Detail == windowsForbiddenMsg) {
				return "error"
			}
		}
		return "ok"
	}

	// [validation.host-users]: a pod that sets hostUsers or any field it may forbid.
	var fields []rule.Cond
	for _, f := range []struct {
		name string
		set  bool
	}{{"hostNetwork", spec.HostNetwork}, {"hostPID", spec.HostPID}, {"hostIPC", spec.HostIPC}, {"volumeDevices", hasVolumeDevices(spec)}} {
		if f.set {
			fields = append(fields, cond(rule.HostField, f.name))
		}
	}
	if spec.HostUsers != nil || len(fields) > 0 {
		if len(fields) == 0 {
			fields = append(fields, cond(rule.HostField, "none"))
		}
		hostNetwork, volumeDevices := userNSAllowances(old, release)
		conds := append([]rule.Cond{users, oldConds(old, hostNetwork || volumeDevices)}, fields...)
		conds = append(conds, cond(rule.Outcome, hasErr(func(f string) bool {
			return f != "spec.hostUsers" && !isProcMountPath(f)
		})))
		if hostUsersFalse(spec) {
			for _, v := range spec.Volumes {
				if k := typeName(&v.VolumeSource); k != "" {
					conds = append(conds, cond(rule.Type, k))
				}
			}
		}
		t.hit(rule.ValidHostUsers, conds...)
	}

	// [validation.proc-mount-unmasked]: each container asking for an unmasked /proc.
	for _, c := range podContainers(spec, field.NewPath("spec")) {
		sc := c.c.SecurityContext
		if sc == nil || sc.ProcMount == nil || *sc.ProcMount != corev1.UnmaskedProcMount {
			continue
		}
		at := c.path.Child("securityContext", "procMount").String()
		conds := []rule.Cond{users, cond(rule.Outcome, hasErr(func(f string) bool { return f == at }))}
		if c.kind != "" {
			conds = append(conds, cond(rule.Container, c.kind))
		}
		t.hit(rule.ValidProcMount, conds...)
	}

	// [validation.host-users-windows].
	if spec.OS != nil && spec.OS.Name == corev1.Windows {
		t.hit(rule.ValidWindowsUsers, users, cond(rule.Outcome, hasErr(func(f string) bool { return f == "spec.hostUsers" })))
	}
}

// isProcMountPath says whether f is a container's securityContext.procMount.
func isProcMountPath(f string) bool {
	return strings.HasSuffix(f, ".securityContext.procMount")
}

// userNamespace is docs/spec.md [userns.range]: a pod with hostUsers: false gets one range of
// userNSLength ids from a nonzero multiple of userNSLength (v1.37 userns_manager.go
// allocateOne), which a restarted kubelet reads back from the pod's directory (v1.37
// userns_manager.go readMappingsFromFile): the same after every restart.
func (k *kubelet) userNamespace(c *framework.Case) *framework.UserNamespace {
	if !k.userns {
		return nil
	}
	ranges := []framework.IDMap{{HostID: userNSLength, Length: userNSLength}}
	for _, s := range c.After {
		if s.StartsKubelet() {
			ranges = append(ranges, ranges[0])
		}
	}
	if k.tr != nil {
		k.tr.hit(rule.UsernsRange, cond(rule.SetUp, setOr(len(ranges) > 1, "restart", "first")))
	}
	return framework.UserNamespaceOf(ranges)
}

// noUserNamespacesMsg is v1.37 userns_manager.go GetOrCreateUserNamespaceMappings for a pod
// with hostUsers: false whose runtime handler (the default one) reports no user namespace
// support (kubelet_getters.go HandlerSupportsUserNamespaces: false for a runtime that reports
// no handlers at all, containerd 1.6).
const noUserNamespacesMsg = "can't set `spec.hostUsers: false`, runtime does not support user namespaces"

// sandboxError is docs/spec.md [userns.runtime]: the kubelet mounts the pod's volumes
// (WaitForAttachAndMount) before it asks for the sandbox, whose config needs the pod's user
// namespace (kuberuntime util.go NamespacesForPod): that fails, and no container runs.
func (k *kubelet) sandboxError() string {
	if k.tr != nil {
		for _, v := range k.pod.Spec.Volumes {
			if t := typeName(&v.VolumeSource); t != "" {
				k.tr.hit(rule.UsernsRuntime, cond(rule.Type, t))
			}
		}
	}
	return noUserNamespacesMsg
}
