package catalogue

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/volperm/volperm/framework"
)

// medium is one emptyDir medium of the KEP's test plan (seed 000 "Test Plan": every medium).
type medium struct {
	value  corev1.StorageMedium
	phrase string // how a case name says it
}

var media = []medium{
	{corev1.StorageMediumDefault, "the default medium"},
	{corev1.StorageMediumMemory, "medium Memory"},
	{corev1.StorageMediumHugePagesPrefix + "2Mi", "medium HugePages-2Mi"},
}

// maxEmptyDirMode is the largest valid emptyDir mode (seed 000 "Validation": 0..01777).
const maxEmptyDirMode = 01777

// emptyDirVolume is the name of the one volume of a generated emptyDir pod.
const emptyDirVolume = "scratch"

// emptyDirPod is a pod with one emptyDir "scratch" on m with mode (nil = unset).
func emptyDirPod(m medium, mode *int32) *corev1.Pod {
	p := podOf(volume(emptyDirVolume, corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: m.value, Mode: mode}}))
	if strings.HasPrefix(string(m.value), string(corev1.StorageMediumHugePages)) {
		// v1.37 pkg/volume/emptydir getPageSizeMountOption: the page size comes from the
		// container's hugepages-<size> request; a hugepages request also needs a memory request.
		res := corev1.ResourceList{
			corev1.ResourceHugePagesPrefix + "2Mi": resource.MustParse("2Mi"),
			corev1.ResourceMemory:                  resource.MustParse("64Mi"),
		}
		p.Spec.Containers = []corev1.Container{{
			Name: "probe", Image: framework.ProbeImage, ImagePullPolicy: corev1.PullNever,
			VolumeMounts: []corev1.VolumeMount{{Name: emptyDirVolume, MountPath: "/volumes/" + emptyDirVolume}},
			Resources:    corev1.ResourceRequirements{Limits: res, Requests: res.DeepCopy()},
		}}
	}
	return p
}

// modePhrase words an emptyDir mode in a case name.
func modePhrase(mode *int32) string {
	if mode == nil {
		return "emptyDir without mode"
	}
	return "emptyDir mode " + octal(*mode)
}

// profileFor is alpha when the KEP's gate is on anywhere, conformance (GA behaviour) otherwise.
func profileFor(g framework.Gates) framework.Profile {
	if g.APIServer[framework.GateEmptyDirVolumeMode] || g.Kubelet[framework.GateEmptyDirVolumeMode] {
		return framework.ProfileAlpha
	}
	return framework.ProfileConformance
}

func emptyDirCases() []*framework.Case {
	cases := emptyDirSweep()
	cases = append(cases, emptyDirUnset()...)
	cases = append(cases, emptyDirValidation()...)
	return append(cases, emptyDirFSGroup()...)
}

// emptyDirSweep is every valid mode on every medium with both gates on: the pod sees exactly the
// mode at the mount root (seed 000 "Test Plan").
func emptyDirSweep() []*framework.Case {
	var cases []*framework.Case
	for _, m := range media {
		for mode := int32(0); mode <= maxEmptyDirMode; mode++ {
			cases = append(cases, &framework.Case{
				Name:        fmt.Sprintf("%s on %s, both gates on", modePhrase(&mode), m.phrase),
				Area:        framework.AreaEmptyDir,
				Profile:     framework.ProfileAlpha,
				Description: "KEP-5502 test plan: with the gate on, the pod sees exactly the mode at the mount root, on every medium.",
				Labels:      []string{"sweep"},
				Gates:       gates(framework.GateEmptyDirVolumeMode, true, true),
				Pod:         emptyDirPod(m, ptr(mode)),
			})
		}
	}
	return cases
}

// emptyDirUnset is mode nil on every medium, gates off (GA behaviour) and on (the KEP's
// non-goal: the default does not change).
func emptyDirUnset() []*framework.Case {
	var cases []*framework.Case
	for _, on := range []bool{false, true} {
		for _, m := range media {
			g := gates(framework.GateEmptyDirVolumeMode, on, on)
			cases = append(cases, &framework.Case{
				Name:        fmt.Sprintf("%s on %s, %s", modePhrase(nil), m.phrase, gatePhrase(on, on)),
				Area:        framework.AreaEmptyDir,
				Profile:     profileFor(g),
				Description: "Without mode the root keeps the medium's GA mode: 0777 on disk, tmpfs' 1777, hugetlbfs' 0755 (KEP-5502 non-goals).",
				Gates:       g,
				Pod:         emptyDirPod(m, nil),
			})
		}
	}
	return cases
}

// emptyDirValidation is the API validation of mode (seed 000 "Validation"), with the apiserver
// gate on (validated) and off (dropped before validation, v1.37 dropDisabledFields).
func emptyDirValidation() []*framework.Case {
	modes := []struct {
		mode   int32
		phrase string
	}{{-1, "-1"}, {02000, "02000"}, {04000, "04000"}, {07777, "07777"}, {1 << 20, "1<<20"}, {0, "0000"}, {maxEmptyDirMode, "01777"}}
	var cases []*framework.Case
	for _, on := range []bool{true, false} {
		for _, m := range modes {
			g := gates(framework.GateEmptyDirVolumeMode, on, on)
			cases = append(cases, &framework.Case{
				Name:          fmt.Sprintf("emptyDir mode %s at admission, %s", m.phrase, gatePhrase(on, on)),
				Area:          framework.AreaEmptyDir,
				Profile:       framework.ProfileAlpha,
				Description:   "KEP-5502 validation: 0..01777 inclusive, independent of the gate; with the apiserver gate off the field is dropped first.",
				Gates:         g,
				Pod:           emptyDirPod(media[0], ptr(m.mode)),
				AdmissionOnly: true,
			})
		}
	}
	return cases
}

// emptyDirFSGroup is the ownership walk after the mode (seed 000: 0750 + fsGroup -> 02770).
func emptyDirFSGroup() []*framework.Case {
	var cases []*framework.Case
	for _, mode := range []*int32{ptr[int32](0750), ptr[int32](01777), nil} {
		g := gates(framework.GateEmptyDirVolumeMode, mode != nil, mode != nil)
		for _, m := range media[:2] {
			cases = append(cases, &framework.Case{
				Name:        fmt.Sprintf("%s with fsGroup %d on %s, %s", modePhrase(mode), fsGroup, m.phrase, gatePhrase(mode != nil, mode != nil)),
				Area:        framework.AreaEmptyDir,
				Profile:     profileFor(g),
				Description: "The fsGroup ownership walk runs after the mode is set: gid fsGroup, setgid, group bits ORed in.",
				Gates:       g,
				Pod:         withFSGroup(emptyDirPod(m, mode), fsGroup),
			})
		}
	}
	return cases
}
