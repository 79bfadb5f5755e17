package oracle

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/rule"
)

// docs/spec.md "Container groups (KEP-3619)": supplementalGroupsPolicy in the API, the kubelet's
// admission and the container's process identity.

const (
	// sgpNotSupportedReason and sgpNotSupportedMsg are v1.37 pkg/kubelet/lifecycle/predicate.go
	// Admit's rejection of a Strict pod, as kubelet.go rejectPod writes the pod's status
	// (message "Pod was rejected: " + the predicate's).
	sgpNotSupportedReason = "SupplementalGroupsPolicyNotSupported"
	sgpNotSupportedMsg    = "Pod was rejected: SupplementalGroupsPolicy=Strict is not supported in this node"
)

// validSupplementalGroupsPolicies is v1.37 validation.go validSupplementalGroupsPolicies, sorted.
var validSupplementalGroupsPolicies = []string{string(corev1.SupplementalGroupsPolicyMerge), string(corev1.SupplementalGroupsPolicyStrict)}

// groupsPolicy is the pod's supplementalGroupsPolicy as the rule dimension names it.
func groupsPolicy(pod *corev1.Pod) string {
	sc := pod.Spec.SecurityContext
	if sc == nil || sc.SupplementalGroupsPolicy == nil {
		return "unset"
	}
	switch p := *sc.SupplementalGroupsPolicy; p {
	case corev1.SupplementalGroupsPolicyMerge, corev1.SupplementalGroupsPolicyStrict:
		return string(p)
	}
	return "unknown"
}

// validateGroupsPolicy is [validation.supplemental-groups-policy]: v1.37 validation.go
// validatePodSpecSecurityContext -> validateSupplementalGroupsPolicy, and validateWindows.
func validateGroupsPolicy(pod *corev1.Pod, t *tracer) field.ErrorList {
	sc := pod.Spec.SecurityContext
	if sc == nil || sc.SupplementalGroupsPolicy == nil {
		return nil
	}
	at := field.NewPath("spec", "securityContext", "supplementalGroupsPolicy")
	var errs field.ErrorList
	if groupsPolicy(pod) == "unknown" {
		errs = append(errs, field.NotSupported(at, string(*sc.SupplementalGroupsPolicy), validSupplementalGroupsPolicies))
	}
	if pod.Spec.OS != nil && pod.Spec.OS.Name == corev1.Windows {
		errs = append(errs, field.Forbidden(at, windowsForbiddenMsg))
	}
	t.hit(rule.ValidGroupsPolicy, cond(rule.GroupsPolicyDim, groupsPolicy(pod)), cond(rule.Outcome, map[bool]string{true: "error", false: "ok"}[len(errs) > 0]))
	return errs
}

// groupsRuntime is the node's runtime support as the rule dimension names it.
func groupsRuntime(c *framework.Case) string {
	if c.Lacks(framework.RuntimeSupplementalGroupsPolicy) {
		return "lacks"
	}
	return "supports"
}

// kubeletRejection is [groups.admit]: v1.37 lifecycle/predicate.go
// rejectPodAdmissionBasedOnSupplementalGroupsPolicy (the gate is GA: beta or above): Strict on a
// node whose status.features.supplementalGroupsPolicy is not true is rejected before any volume
// is set up; "" when the kubelet admits the pod.
func kubeletRejection(c *framework.Case, pod *corev1.Pod, t *tracer) string {
	policy := groupsPolicy(pod)
	if policy == "unset" && !framework.HasContainerProbes(c) {
		return ""
	}
	t.hit(rule.GroupsAdmit, cond(rule.GroupsPolicyDim, policy), cond(rule.RuntimeGroups, groupsRuntime(c)))
	if policy == string(corev1.SupplementalGroupsPolicyStrict) && c.Lacks(framework.RuntimeSupplementalGroupsPolicy) {
		return sgpNotSupportedReason + ": " + sgpNotSupportedMsg
	}
	return ""
}

// containerUser is [groups.policy]: the process identity of the pod's first container, from
// the kubelet (v1.37 kuberuntime/security_context.go determineEffectiveSecurityContext:
// runAsUser and runAsGroup, the container's over the pod's; supplementalGroups fsGroup then the
// pod's) and the runtime (containerd 2 container_create_linux.go: a runAsUser without
// runAsGroup takes the image's /etc/passwd gid, else 0; the groups /etc/group gives the user
// unless the policy is Strict and the runtime honours it), and the container status the
// runtime reports (nil where it lacks the feature).
func containerUser(c *framework.Case, pod *corev1.Pod, t *tracer) (framework.User, *framework.ContainerUser) {
	var runAsUser, runAsGroup *int64
	var fsGroup *int64
	var supplemental []int64
	strict := false
	if sc := pod.Spec.SecurityContext; sc != nil {
		runAsUser, runAsGroup, fsGroup = sc.RunAsUser, sc.RunAsGroup, sc.FSGroup
		supplemental = sc.SupplementalGroups
		strict = sc.SupplementalGroupsPolicy != nil && *sc.SupplementalGroupsPolicy == corev1.SupplementalGroupsPolicyStrict
	}
	if sc := pod.Spec.Containers[0].SecurityContext; sc != nil {
		if sc.RunAsUser != nil {
			runAsUser = sc.RunAsUser
		}
		if sc.RunAsGroup != nil {
			runAsGroup = sc.RunAsGroup
		}
	}
	var u framework.User
	if runAsUser != nil {
		u.UID = *runAsUser
	}
	gid, _, imageGroups := framework.ImageLookup(u.UID)
	u.GID = gid
	var from []rule.Cond
	if runAsGroup != nil {
		u.GID = *runAsGroup
		from = append(from, cond(rule.GroupFrom, "runAsGroup"))
	}
	groups := []int64{u.GID}
	honoursStrict := !c.Lacks(framework.RuntimeSupplementalGroupsPolicy)
	if !(strict && honoursStrict) && len(imageGroups) > 0 {
		groups = append(groups, imageGroups...)
		from = append(from, cond(rule.GroupFrom, "image"))
	}
	if fsGroup != nil {
		groups = append(groups, *fsGroup)
		from = append(from, cond(rule.GroupFrom, "fsGroup"))
	}
	if len(supplemental) > 0 {
		groups = append(groups, supplemental...)
		from = append(from, cond(rule.GroupFrom, "supplementalGroups"))
	}
	if len(from) == 0 {
		from = append(from, cond(rule.GroupFrom, "none"))
	}
	u.Groups = framework.NormalGroups(groups)
	t.hit(rule.GroupsPolicy, append([]rule.Cond{cond(rule.GroupsPolicyDim, groupsPolicy(pod)), cond(rule.RuntimeGroups, groupsRuntime(c))}, from...)...)
	if !honoursStrict {
		return u, nil
	}
	return u, framework.ContainerUserOf(u)
}
