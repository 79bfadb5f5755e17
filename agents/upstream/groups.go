package main

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"
	schedulerframework "k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/securitycontext"

	"github.com/volperm/volperm/framework/execproto"
)

// docs/spec.md "Container groups (KEP-3619)" on the real kubelet code: its admission (the
// predicate admit handler, per release in groups_*.go) and the user part of its container's CRI
// config.

// admitNode is the node the kubelet admits pods on: room for pods, nothing else asked of it,
// and status.features.supplementalGroupsPolicy as the runtime reports it (v1.37
// nodestatus/setters.go: from the CRI's RuntimeFeatures).
func (n *node) admitNode() *corev1.Node {
	supported := !n.noSupplementalGroupsPolicy
	allocatable := corev1.ResourceList{corev1.ResourcePods: resource.MustParse("110"), corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("16Gi")}
	// Room for whatever the pod asks (a HugePages emptyDir's hugepages-2Mi request): the
	// resource fit is not what the cases check; the node's huge pages are the harness's own
	// (hostfeature), not this model's.
	for _, c := range append(append([]corev1.Container{}, n.pod.Spec.InitContainers...), n.pod.Spec.Containers...) {
		for _, l := range []corev1.ResourceList{c.Resources.Requests, c.Resources.Limits} {
			for name, q := range l {
				room := q.DeepCopy()
				room.Add(q) // twice the container's, summed over containers below
				if have, ok := allocatable[name]; ok {
					room.Add(have)
				}
				allocatable[name] = room
			}
		}
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "volperm-node", Labels: map[string]string{corev1.LabelOSStable: "linux"}},
		Status: corev1.NodeStatus{
			Allocatable: allocatable,
			Features:    &corev1.NodeFeatures{SupplementalGroupsPolicy: &supported},
		},
	}
}

// rejection is the real predicate admit handler's answer for the pod (admitPod, per release),
// as v1.37 kubelet.go rejectPod writes it into the pod's status; nil when it admits.
func (n *node) rejection() *execproto.Rejection {
	r := kubeletAdmit(n.admitNode(), &lifecycle.PodAdmitAttributes{Pod: n.pod})
	if r.Admit {
		return nil
	}
	return &execproto.Rejection{Reason: r.Reason, Message: "Pod was rejected: " + r.Message}
}

// containerSecurity is v1.37 kuberuntime/security_context.go determineEffectiveSecurityContext's
// user part for the pod's first container: the real securitycontext.DetermineEffectiveSecurityContext
// (runAsUser and runAsGroup, the container's over the pod's) and the method's own lines for
// supplementalGroups and the policy, which are not exported (fsGroup, then the pod's
// supplementalGroups; GetExtraSupplementalGroupsForPod adds the groups of PersistentVolumes,
// which no case has).
func (n *node) containerSecurity() (*execproto.ContainerSecurity, error) {
	if len(n.pod.Spec.Containers) == 0 {
		return nil, nil
	}
	sc := securitycontext.DetermineEffectiveSecurityContext(n.pod, &n.pod.Spec.Containers[0])
	out := &execproto.ContainerSecurity{RunAsUser: sc.RunAsUser, RunAsGroup: sc.RunAsGroup}
	if psc := n.pod.Spec.SecurityContext; psc != nil {
		if psc.FSGroup != nil {
			out.SupplementalGroups = append(out.SupplementalGroups, *psc.FSGroup)
		}
		out.SupplementalGroups = append(out.SupplementalGroups, psc.SupplementalGroups...)
		if p := psc.SupplementalGroupsPolicy; p != nil {
			switch *p {
			case corev1.SupplementalGroupsPolicyStrict:
				out.Strict = true
			case corev1.SupplementalGroupsPolicyMerge:
			default:
				return nil, fmt.Errorf("unsupported supplementalGroupsPolicy: %s", *p)
			}
		}
	}
	return out, nil
}

// noPluginResources is the admit handler's device-plugin resource update: this node has none.
func noPluginResources(*schedulerframework.NodeInfo, *lifecycle.PodAdmitAttributes) error { return nil }
