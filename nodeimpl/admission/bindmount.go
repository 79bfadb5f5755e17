package admission

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/volperm/volperm/nodeimpl/gates"
	"github.com/volperm/volperm/nodeimpl/mutant"
)

// supportedBindMountOptions is v1.37 validation.go supportedBindMountOptions, sorted.
var supportedBindMountOptions = []string{"nodev", "noexec", "nosuid"}

// eachMount calls visit with every volumeMount of pod's init containers, containers and
// ephemeral containers, with its path (spec.containers[0].volumeMounts[1]).
func eachMount(pod *corev1.Pod, visit func(m *corev1.VolumeMount, at *field.Path)) {
	spec := field.NewPath("spec")
	for _, group := range []struct {
		cs []corev1.Container
		at *field.Path
	}{{pod.Spec.InitContainers, spec.Child("initContainers")}, {pod.Spec.Containers, spec.Child("containers")}} {
		for i := range group.cs {
			for j := range group.cs[i].VolumeMounts {
				visit(&group.cs[i].VolumeMounts[j], group.at.Index(i).Child("volumeMounts").Index(j))
			}
		}
	}
	for i := range pod.Spec.EphemeralContainers {
		ec := &pod.Spec.EphemeralContainers[i]
		for j := range ec.VolumeMounts {
			visit(&ec.VolumeMounts[j], spec.Child("ephemeralContainers").Index(i).Child("volumeMounts").Index(j))
		}
	}
}

// validateBindMountOptions is v1.37 validation.go ValidateVolumeMounts' bindMountOptions
// checks for every mount of pod: validateBindMountOptions (NotSupported, Duplicate) and the
// image volume's Invalid.
func validateBindMountOptions(pod *corev1.Pod) field.ErrorList {
	image := map[string]bool{}
	for _, v := range pod.Spec.Volumes {
		image[v.Name] = v.Image != nil
	}
	var errs field.ErrorList
	eachMount(pod, func(m *corev1.VolumeMount, at *field.Path) {
		fld := at.Child("bindMountOptions")
		for i, o := range m.BindMountOptions {
			if !slices.Contains(supportedBindMountOptions, o) {
				errs = append(errs, field.NotSupported(fld.Index(i), o, supportedBindMountOptions))
				if mutant.On(mutant.BlindBindUnsupportedNoDuplicate) {
					continue
				}
			}
			if slices.Contains(m.BindMountOptions[:i], o) {
				errs = append(errs, field.Duplicate(fld.Index(i), o))
			}
		}
		if len(m.BindMountOptions) > 0 && image[m.Name] {
			errs = append(errs, field.Invalid(fld, m.BindMountOptions, "bindMountOptions may not be used with image volumes"))
		}
	})
	return errs
}

// bindMountOptionsInUse is v1.37 pkg/api/pod/util.go bindMountOptionsInUse.
func bindMountOptionsInUse(pod *corev1.Pod) bool {
	in := false
	if pod != nil {
		eachMount(pod, func(m *corev1.VolumeMount, _ *field.Path) { in = in || len(m.BindMountOptions) > 0 })
	}
	return in
}

// dropBindMountOptions is v1.37 pkg/api/pod/util.go dropDisabledFields' rule for
// VolumeBindMountOptions: off, and the old pod using none, clears every mount's options; it
// returns the paths cleared.
func dropBindMountOptions(g gates.Set, pod, old *corev1.Pod) []string {
	if g.Enabled(gates.VolumeBindMountOptions) || bindMountOptionsInUse(old) {
		return nil
	}
	var dropped []string
	eachMount(pod, func(m *corev1.VolumeMount, at *field.Path) {
		if len(m.BindMountOptions) > 0 && !(strings.HasPrefix(at.String(), "spec.initContainers") && mutant.On(mutant.BlindBindDropSkipsInit)) {
			m.BindMountOptions = nil
			dropped = append(dropped, at.Child("bindMountOptions").String())
		}
	})
	return dropped
}
