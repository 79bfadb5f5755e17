package catalogue

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
)

// mountCase is an admission case of the mounts area: an emptyDir mounted by the probe container
// (or an init container) with the changes of set applied to its mount (docs/spec.md
// [validation.mount-propagation], [validation.recursive-read-only]).
func mountCase(name, desc string, init bool, set ...func(*corev1.VolumeMount)) *framework.Case {
	m := corev1.VolumeMount{Name: emptyDirVolume, MountPath: "/volumes/" + emptyDirVolume}
	for _, s := range set {
		s(&m)
	}
	c := corev1.Container{Name: "probe", Image: framework.ProbeImage, ImagePullPolicy: corev1.PullNever, VolumeMounts: []corev1.VolumeMount{m}}
	pod := podOf(volume(emptyDirVolume, corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}))
	if init {
		c.Name = "init"
		pod.Spec.InitContainers = []corev1.Container{c}
		pod.Spec.Containers = []corev1.Container{{Name: "probe", Image: framework.ProbeImage, ImagePullPolicy: corev1.PullNever}}
	} else {
		pod.Spec.Containers = []corev1.Container{c}
	}
	return &framework.Case{Name: "volumeMount " + name, Area: framework.AreaMounts, Profile: framework.ProfileConformance,
		AdmissionOnly: true, Description: desc, Pod: pod}
}

func propagation(p corev1.MountPropagationMode) func(*corev1.VolumeMount) {
	return func(m *corev1.VolumeMount) { m.MountPropagation = &p }
}

func rro(r corev1.RecursiveReadOnlyMode) func(*corev1.VolumeMount) {
	return func(m *corev1.VolumeMount) { m.RecursiveReadOnly = &r }
}

func readOnly(m *corev1.VolumeMount) { m.ReadOnly = true }

// mountCases: v1.37 validation.go validateMountPropagation and validateMountRecursiveReadOnly,
// each value allowed and refused, with upstream's quirk that both errors name
// `...volumeMounts.FIELD` without the mount's index (ValidateVolumeMounts passes its own fldPath).
// Upstream e2e_node mount_rro_linux_test.go rejects the invalid ones on a node; these check the
// apiserver's texts. Bidirectional in a privileged container is not a case: whether a
// privileged container is admitted at all is the apiserver's --allow-privileged (false by
// default, true on kubeadm and kind clusters), "Forbidden: disallowed by cluster policy".
func mountCases() []*framework.Case {
	const prop = "[validation.mount-propagation] "
	const rroRule = "[validation.recursive-read-only] "
	cases := []*framework.Case{
		mountCase("mountPropagation None is allowed", prop+"None is a mode.", false, propagation(corev1.MountPropagationNone)),
		mountCase("mountPropagation HostToContainer is allowed", prop+"HostToContainer is a mode; any container may have it.", false, propagation(corev1.MountPropagationHostToContainer)),
		mountCase("mountPropagation Bidirectional in a container that is not privileged is rejected (spec.containers[0].volumeMounts.mountPropagation: Forbidden)",
			prop+"Bidirectional only in a privileged container; the path has no mount index.", false, propagation(corev1.MountPropagationBidirectional)),
		mountCase("mountPropagation Bidirectional in an init container that is not privileged is rejected (spec.initContainers[0].volumeMounts.mountPropagation: Forbidden)",
			prop+"init containers alike.", true, propagation(corev1.MountPropagationBidirectional)),
		mountCase(`mountPropagation "Shared" is rejected (spec.containers[0].volumeMounts.mountPropagation: Unsupported value)`,
			prop+"the API's names only (Bidirectional, HostToContainer, None); not Docker's.", false, propagation("Shared")),
		mountCase("recursiveReadOnly Disabled on a writable mount is allowed", rroRule+"Disabled needs nothing.", false, rro(corev1.RecursiveReadOnlyDisabled)),
		mountCase("recursiveReadOnly Enabled on a readOnly mount is allowed", rroRule+"Enabled with readOnly.", false, readOnly, rro(corev1.RecursiveReadOnlyEnabled)),
		mountCase("recursiveReadOnly IfPossible on a readOnly mount with mountPropagation None is allowed", rroRule+"None is the one propagation it allows.", false, readOnly, rro(corev1.RecursiveReadOnlyIfPossible), propagation(corev1.MountPropagationNone)),
		mountCase("recursiveReadOnly Enabled on a writable mount is rejected (spec.containers[0].volumeMounts.recursiveReadOnly: Forbidden)",
			rroRule+"\"may only be specified when readOnly is true\"; the path has no mount index.", false, rro(corev1.RecursiveReadOnlyEnabled)),
		mountCase("recursiveReadOnly IfPossible on a readOnly mount with mountPropagation HostToContainer is rejected (spec.containers[0].volumeMounts.recursiveReadOnly: Forbidden)",
			rroRule+"\"may only be specified when mountPropagation is None or not specified\".", false, readOnly, rro(corev1.RecursiveReadOnlyIfPossible), propagation(corev1.MountPropagationHostToContainer)),
		mountCase("recursiveReadOnly IfPossible on a writable mount with mountPropagation HostToContainer is rejected twice at one path",
			rroRule+"both Forbidden errors, one field path.", false, rro(corev1.RecursiveReadOnlyIfPossible), propagation(corev1.MountPropagationHostToContainer)),
		mountCase("recursiveReadOnly IfPossible on a readOnly mount with mountPropagation Bidirectional in a container that is not privileged is rejected at both fields",
			prop+rroRule+"the propagation's Forbidden and the recursive read-only's, each at its own path.", false, readOnly, rro(corev1.RecursiveReadOnlyIfPossible), propagation(corev1.MountPropagationBidirectional)),
		mountCase("recursiveReadOnly Enabled on a writable mount with mountPropagation Bidirectional is rejected three times",
			prop+rroRule+"Bidirectional without privilege, then both recursive read-only errors.", false, rro(corev1.RecursiveReadOnlyEnabled), propagation(corev1.MountPropagationBidirectional)),
		mountCase("recursiveReadOnly Enabled on a readOnly mount with mountPropagation HostToContainer of an init container is rejected (spec.initContainers[0].volumeMounts.recursiveReadOnly: Forbidden)",
			rroRule+"init containers alike.", true, readOnly, rro(corev1.RecursiveReadOnlyEnabled), propagation(corev1.MountPropagationHostToContainer)),
		mountCase("recursiveReadOnly Enabled on a writable mount with mountPropagation HostToContainer of an init container is rejected twice at one path",
			rroRule+"both Forbidden errors, one field path.", true, rro(corev1.RecursiveReadOnlyEnabled), propagation(corev1.MountPropagationHostToContainer)),
		mountCase("mountPropagation Bidirectional on a readOnly mount in a container that is not privileged is rejected (spec.containers[0].volumeMounts.mountPropagation: Forbidden)",
			prop+"readOnly changes nothing.", false, readOnly, propagation(corev1.MountPropagationBidirectional)),
		mountCase(`recursiveReadOnly "Always" is rejected (spec.containers[0].volumeMounts.recursiveReadOnly: Unsupported value)`,
			rroRule+"NotSupported with the three modes, sorted.", false, readOnly, rro("Always")),
		mountCase("recursiveReadOnly Enabled on a writable mount of an init container is rejected (spec.initContainers[0].volumeMounts.recursiveReadOnly: Forbidden)",
			rroRule+"init containers alike.", true, rro(corev1.RecursiveReadOnlyEnabled)),
	}
	// Two bad mounts of one container: two errors with the same path (no index tells them apart).
	two := mountCase("recursiveReadOnly Enabled on two writable mounts of one container is rejected once",
		rroRule+"ValidateVolumeMounts' fldPath for every mount: two identical errors, one text in the apiserver's answer (ToAggregate drops repeats).", false, rro(corev1.RecursiveReadOnlyEnabled))
	two.Pod.Spec.Volumes = append(two.Pod.Spec.Volumes, volume("other", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}))
	second := two.Pod.Spec.Containers[0].VolumeMounts[0]
	second.Name, second.MountPath = "other", "/volumes/other"
	two.Pod.Spec.Containers[0].VolumeMounts = append(two.Pod.Spec.Containers[0].VolumeMounts, second)
	cases = append(cases, two)
	for _, c := range cases {
		c.Description = fmt.Sprintf("%s (v1.37 validation.go ValidateVolumeMounts)", c.Description)
	}
	return cases
}
