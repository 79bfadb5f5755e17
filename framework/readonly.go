package framework

import corev1 "k8s.io/api/core/v1"

// ProbeMount is the mount of volume that the probes act through (docs/spec.md
// [probes.read-only]): the first volumeMount naming it across the pod's containers, in order;
// false when no container mounts it (then the default probe container's, read-write:
// Complete).
func ProbeMount(pod *corev1.Pod, volume string) (corev1.VolumeMount, bool) {
	for _, c := range pod.Spec.Containers {
		for _, m := range c.VolumeMounts {
			if m.Name == volume {
				return m, true
			}
		}
	}
	return corev1.VolumeMount{}, false
}

// MustMountRO is v1.37 kubelet_pods.go makeMounts' `mustMountRO :=
// vol.Mounter.GetAttributes().ReadOnly`: secret, configMap, downwardAPI and projected volumes
// are always mounted read-only; a flexVolume when its source says readOnly.
func MustMountRO(v corev1.Volume) bool {
	switch {
	case v.Secret != nil, v.ConfigMap != nil, v.DownwardAPI != nil, v.Projected != nil:
		return true
	case v.FlexVolume != nil:
		return v.FlexVolume.ReadOnly
	}
	return false
}

// ReadOnlyMount reports whether the probes of volume v of pod act through a read-only mount
// (docs/spec.md [probes.read-only]): v1.37 makeMounts' `ReadOnly: mount.ReadOnly ||
// mustMountRO` for the mount ProbeMount picks. A plain read-only bind: mounts below it keep
// their own flags (recursiveReadOnly is another rule).
func ReadOnlyMount(pod *corev1.Pod, v corev1.Volume) bool {
	m, _ := ProbeMount(pod, v.Name)
	return m.ReadOnly || MustMountRO(v)
}

// MakesChange says whether op changes the volume: what a read-only mount refuses (EROFS).
func MakesChange(op ProbeOp) bool {
	switch op {
	case OpRead, OpList:
		return false
	}
	return true
}
