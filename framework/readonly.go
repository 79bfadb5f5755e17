package framework

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

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

// UsesBindMountOptions says whether a volumeMount of pod's init containers or containers carries
// bindMountOptions (docs/spec.md [mounts.bind-mount-options]: the pod then requires the node
// feature VolumeBindMountOptions). The harness's question; the oracle and the reference node
// answer it their own way.
func UsesBindMountOptions(pod *corev1.Pod) bool {
	return slices.ContainsFunc(slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers), func(c corev1.Container) bool {
		return slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return len(m.BindMountOptions) > 0 })
	})
}

// MustMountRO is v1.37 kubelet_pods.go makeMounts' `mustMountRO :=
// vol.Mounter.GetAttributes().ReadOnly`: secret, configMap, downwardAPI and projected volumes
// are always mounted read-only, and image volumes (v1.37 pkg/volume/image GetAttributes
// ReadOnly: true); a flexVolume when its source says readOnly.
func MustMountRO(v corev1.Volume) bool {
	switch {
	case v.Secret != nil, v.ConfigMap != nil, v.DownwardAPI != nil, v.Projected != nil, v.Image != nil:
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
	case OpRead, OpList, OpExec:
		return false
	}
	return true
}

// RecursiveReadOnly is v1.37 kubelet_pods.go resolveRecursiveReadOnly: whether the runtime is
// asked to make mount m read-only all the way down, given whether it can (the default runtime
// handler's recursive_read_only_mounts); the error texts are upstream's.
func RecursiveReadOnly(m corev1.VolumeMount, runtimeSupports bool) (bool, error) {
	if m.RecursiveReadOnly == nil || *m.RecursiveReadOnly == corev1.RecursiveReadOnlyDisabled {
		return false, nil
	}
	if !m.ReadOnly {
		return false, fmt.Errorf("volume %q requested recursive read-only mode, but it is not read-only", m.Name)
	}
	if m.MountPropagation != nil && *m.MountPropagation != corev1.MountPropagationNone {
		return false, fmt.Errorf("volume %q requested recursive read-only mode, but it is not compatible with propagation %q", m.Name, *m.MountPropagation)
	}
	switch mode := *m.RecursiveReadOnly; mode {
	case corev1.RecursiveReadOnlyIfPossible:
		return runtimeSupports, nil
	case corev1.RecursiveReadOnlyEnabled:
		if !runtimeSupports {
			return false, fmt.Errorf("volume %q requested recursive read-only mode, but it is not supported by the runtime", m.Name)
		}
		return true, nil
	default:
		return false, fmt.Errorf("unknown recursive read-only mode %q", mode)
	}
}

// RecursiveReadOnlyStatus is the container status's recursiveReadOnly of volume's probe mount
// (v1.37 kubelet_pods.go convertToAPIContainerStatuses): for a readOnly volumeMount, Enabled when
// RecursiveReadOnly says so, else Disabled (an error too); "" for a read-write volumeMount (a
// secret's mount shows "" though the kubelet mounts it read-only: the status reads the
// volumeMount, not the volume) or a volume no container mounts.
func RecursiveReadOnlyStatus(pod *corev1.Pod, volume string, runtimeSupports bool) string {
	m, ok := ProbeMount(pod, volume)
	if !ok || !m.ReadOnly {
		return ""
	}
	if b, err := RecursiveReadOnly(m, runtimeSupports); err == nil && b {
		return string(corev1.RecursiveReadOnlyEnabled)
	}
	return string(corev1.RecursiveReadOnlyDisabled)
}

// ContainerConfigError is the kubelet's error creating the probe container of pod, from its
// volumes' probe mounts in the pod's order (v1.37 makeMounts: "failed to resolve recursive
// read-only mode: " and resolveRecursiveReadOnly's error); "" when it can be created.
func ContainerConfigError(pod *corev1.Pod, runtimeSupports bool) string {
	for _, v := range pod.Spec.Volumes {
		m, ok := ProbeMount(pod, v.Name)
		if !ok {
			continue
		}
		if _, err := RecursiveReadOnly(m, runtimeSupports); err != nil {
			return "failed to resolve recursive read-only mode: " + err.Error()
		}
	}
	return ""
}
