package kubelet

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/nodeimpl/gates"
	"github.com/volperm/volperm/nodeimpl/mutant"
)

// Rejection is the kubelet refusing to admit a pod (v1.37 kubelet.go rejectPod: the pod's
// status, phase Failed, with Reason and "Pod was rejected: " + the admit handler's message).
type Rejection struct {
	Reason  string
	Message string
}

func (r *Rejection) Error() string { return r.Reason + ": " + r.Message }

// SupplementalGroupsPolicyNotSupported is v1.37 pkg/kubelet/lifecycle/predicate.go's reason
// and message for a Strict pod on a node whose runtime lacks the policy.
const (
	SupplementalGroupsPolicyNotSupported    = "SupplementalGroupsPolicyNotSupported"
	SupplementalGroupsPolicyNotSupportedMsg = "SupplementalGroupsPolicy=Strict is not supported in this node"
)

// PodFeatureUnsupported is v1.37 pkg/kubelet/lifecycle/handlers.go's reason, and
// NodeFeaturesMsg its message, of the declared-features admit handler.
const (
	PodFeatureUnsupported = "PodFeatureUnsupported"
	NodeFeaturesMsg       = "Pod requires node features that are not available: "
)

// Admit is the kubelet's admission of p before anything of it is set up: nil, or the
// Rejection of the first admit handler that refuses (v1.37 kubelet.go: the predicate handler,
// then the declared-features one last). Of them, those that read what a pod asks of its
// volumes and groups matter here:
//   - lifecycle/predicate.go rejectPodAdmissionBasedOnSupplementalGroupsPolicy (the gate is
//     GA, so beta or above): Strict on a node whose runtime does not report the policy;
//   - lifecycle/handlers.go declaredFeaturesAdmitHandler (NodeDeclaredFeatures, GA in v1.37): a
//     pod whose volumeMounts use bindMountOptions needs the node feature
//     VolumeBindMountOptions, which the kubelet declares with its gate on and a runtime that
//     reports mount_options (component-helpers nodedeclaredfeatures volumebindmountoptions).
func (k *Kubelet) Admit(p *Pod) error {
	sc := p.Pod.Spec.SecurityContext
	if sc != nil && sc.SupplementalGroupsPolicy != nil && !mutant.On(mutant.GroupsStrictAdmitted) &&
		(*sc.SupplementalGroupsPolicy == corev1.SupplementalGroupsPolicyStrict || mutant.On(mutant.BlindGroupsMergeRejected)) &&
		k.noSupplementalGroupsPolicy {
		return &Rejection{Reason: SupplementalGroupsPolicyNotSupported, Message: "Pod was rejected: " + SupplementalGroupsPolicyNotSupportedMsg}
	}
	declared := k.currentGates().Enabled(gates.VolumeBindMountOptions) && (!k.noMountOptions || mutant.On(mutant.BindOptionsDeclaredWithoutRuntime))
	if usesBindMountOptions(p.Pod) && !declared && !mutant.On(mutant.BindOptionsAdmitted) {
		return &Rejection{Reason: PodFeatureUnsupported, Message: "Pod was rejected: " + NodeFeaturesMsg + gates.VolumeBindMountOptions}
	}
	return nil
}

// usesBindMountOptions is nodedeclaredfeatures volumebindmountoptions InferForScheduling: any
// volumeMount of any container with bindMountOptions (the gate is not read).
func usesBindMountOptions(pod *corev1.Pod) bool {
	for ci, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		if ci == 0 && mutant.On(mutant.BlindBindAdmitIgnoresInit) {
			continue
		}
		for _, c := range cs {
			for _, m := range c.VolumeMounts {
				if len(m.BindMountOptions) > 0 {
					return true
				}
			}
		}
	}
	for _, ec := range pod.Spec.EphemeralContainers {
		for _, m := range ec.VolumeMounts {
			if len(m.BindMountOptions) > 0 {
				return true
			}
		}
	}
	return false
}

// ContainerSecurity is the user part of the CRI config of a pod's container, as a kubelet
// hands it to its runtime.
type ContainerSecurity struct {
	RunAsUser          *int64
	RunAsGroup         *int64
	SupplementalGroups []int64
	Strict             bool
}

// ContainerSecurity is v1.37 kuberuntime/security_context.go determineEffectiveSecurityContext
// for p's container i: runAsUser and runAsGroup of the container, else of the pod
// (securitycontext.DetermineEffectiveSecurityContext); supplementalGroups fsGroup, then the
// pod's supplementalGroups; the policy as the pod gives it.
func (k *Kubelet) ContainerSecurity(p *Pod, i int) ContainerSecurity {
	var out ContainerSecurity
	if sc := p.Pod.Spec.SecurityContext; sc != nil {
		out.RunAsUser, out.RunAsGroup = sc.RunAsUser, sc.RunAsGroup
		strict := sc.SupplementalGroupsPolicy != nil && *sc.SupplementalGroupsPolicy == corev1.SupplementalGroupsPolicyStrict
		if sc.FSGroup != nil && !mutant.On(mutant.GroupsNoFSGroup) && !(strict && mutant.On(mutant.BlindGroupsStrictDropsFSGroup)) {
			out.SupplementalGroups = append(out.SupplementalGroups, *sc.FSGroup)
		}
		out.SupplementalGroups = append(out.SupplementalGroups, sc.SupplementalGroups...)
		out.Strict = strict && !mutant.On(mutant.GroupsPolicyNotPassed)
	}
	if i < len(p.Pod.Spec.Containers) && !(p.Pod.Spec.SecurityContext == nil && mutant.On(mutant.BlindGroupsContainerIDsNeedPodSC)) {
		if sc := p.Pod.Spec.Containers[i].SecurityContext; sc != nil {
			if sc.RunAsUser != nil {
				out.RunAsUser = sc.RunAsUser
			}
			if sc.RunAsGroup != nil && !mutant.On(mutant.GroupsPodRunAsGroupWins) {
				out.RunAsGroup = sc.RunAsGroup
			}
		}
	}
	return out
}
