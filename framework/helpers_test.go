package framework

import corev1 "k8s.io/api/core/v1"

func podWithVolumes(names ...string) *corev1.Pod {
	p := &corev1.Pod{}
	for _, n := range names {
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: n, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	}
	return p
}
