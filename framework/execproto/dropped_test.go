package execproto

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// A field the apiserver cleared is named by its path, whatever the field; fields it defaulted
// (added) are not, and neither is a field it kept.
func TestDroppedFields(t *testing.T) {
	sent := []corev1.Volume{
		{Name: "a", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Mode: ptr.To[int32](0o750)}}},
		{Name: "b", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s",
			Items: []corev1.KeyToPath{{Key: "k", Path: "p", Mode: ptr.To[int32](0o400)}}}}},
		{Name: "c", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Mode: ptr.To[int32](0o700)}}},
	}
	stored := []corev1.Volume{
		{Name: "a", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "b", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s", DefaultMode: ptr.To[int32](0o644),
			Items: []corev1.KeyToPath{{Key: "k", Path: "p"}}}}},
		{Name: "c", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Mode: ptr.To[int32](0o700)}}},
	}
	mounts := func(opts []string) []corev1.Container {
		return []corev1.Container{{Name: "c", VolumeMounts: []corev1.VolumeMount{{Name: "a", MountPath: "/a"}, {Name: "b", MountPath: "/b", BindMountOptions: opts}}}}
	}
	sentSpec := &corev1.PodSpec{Volumes: sent, Containers: mounts([]string{"noexec"})}
	storedSpec := &corev1.PodSpec{Volumes: stored, Containers: mounts(nil)}
	got, err := DroppedFields(sentSpec, storedSpec)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"spec.containers[0].volumeMounts[1].bindMountOptions", "spec.volumes[0].emptyDir.mode", "spec.volumes[1].secret.items[0].mode"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("dropped %q, want %q", got, want)
	}
	if got, _ := DroppedFields(storedSpec, storedSpec); len(got) != 0 {
		t.Errorf("nothing dropped, got %q", got)
	}
}
