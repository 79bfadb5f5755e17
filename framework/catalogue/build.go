package catalogue

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
)

// fsGroup is the group of every fsGroup case: the blog's (seed 003) 2000.
const fsGroup int64 = 2000

func ptr[T any](v T) *T { return &v }

// octal writes a mode as a Go/YAML octal literal: 0750, 01777, 0000.
func octal[T int32 | uint32](m T) string { return fmt.Sprintf("0%03o", m) }

// gates sets gate on the apiserver and the kubelet.
func gates(gate string, apiserver, kubelet bool) framework.Gates {
	return framework.Gates{APIServer: map[string]bool{gate: apiserver}, Kubelet: map[string]bool{gate: kubelet}}
}

// onOff words a gate value in a case name.
func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

// gatePhrase words the gates of one feature in a case name: "both gates on", "apiserver gate on, kubelet gate off".
func gatePhrase(apiserver, kubelet bool) string {
	if apiserver == kubelet {
		return "both gates " + onOff(apiserver)
	}
	return fmt.Sprintf("apiserver gate %s, kubelet gate %s", onOff(apiserver), onOff(kubelet))
}

func podOf(vols ...corev1.Volume) *corev1.Pod {
	return &corev1.Pod{Spec: corev1.PodSpec{Volumes: vols}}
}

// withFSGroup sets the pod's fsGroup to gid.
func withFSGroup(p *corev1.Pod, gid int64) *corev1.Pod {
	if p.Spec.SecurityContext == nil {
		p.Spec.SecurityContext = &corev1.PodSecurityContext{}
	}
	p.Spec.SecurityContext.FSGroup = ptr(gid)
	return p
}

func volume(name string, src corev1.VolumeSource) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: src}
}
