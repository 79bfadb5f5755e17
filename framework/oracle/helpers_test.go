package oracle

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/volperm/volperm/framework"
)

// Builders for the tests' cases.

func podWith(vols ...corev1.Volume) *corev1.Pod {
	return &corev1.Pod{Spec: corev1.PodSpec{Volumes: vols}}
}

func withFSGroup(p *corev1.Pod, gid int64) *corev1.Pod {
	if p.Spec.SecurityContext == nil {
		p.Spec.SecurityContext = &corev1.PodSecurityContext{}
	}
	p.Spec.SecurityContext.FSGroup = &gid
	return p
}

func withHugePages(p *corev1.Pod, size string) *corev1.Pod {
	p.Spec.Containers = []corev1.Container{{
		Name: "probe", Image: framework.ProbeImage,
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceName(corev1.ResourceHugePagesPrefix + size): resource.MustParse("2Mi"),
		}},
	}}
	for _, v := range p.Spec.Volumes {
		p.Spec.Containers[0].VolumeMounts = append(p.Spec.Containers[0].VolumeMounts, corev1.VolumeMount{Name: v.Name, MountPath: "/volumes/" + v.Name})
	}
	return p
}

func emptyDir(name string, medium corev1.StorageMedium, mode *int32) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: medium, Mode: mode}}}
}

func hostPath(name, p string, t corev1.HostPathType) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: p, Type: &t}}}
}

func secretVol(name, secret string, defaultMode *int32, items ...corev1.KeyToPath) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret, DefaultMode: defaultMode, Items: items}}}
}

func flexVol(name, driver string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{FlexVolume: &corev1.FlexVolumeSource{Driver: driver}}}
}

func i32(v int32) *int32 { return &v }

// both sets a gate on both components.
func both(gate string, on bool) framework.Gates {
	return framework.Gates{APIServer: map[string]bool{gate: on}, Kubelet: map[string]bool{gate: on}}
}

func entry(p, typ, mode string, uid, gid int64) framework.PathObservation {
	return framework.PathObservation{Path: p, Type: typ, Mode: mode, UID: uid, GID: gid}
}

func link(p, target string, gid int64) framework.PathObservation {
	return framework.PathObservation{Path: p, Type: "symlink", Mode: "0777", GID: gid, Link: target}
}

// allowed is the admission of an allowed pod with nothing dropped.
var allowed = framework.Admission{Allowed: true}

// expectObservation checks Expect(c) against want (Case and APIVersion filled in) and that
// Expect left c untouched.
func expectObservation(t *testing.T, c *framework.Case, want framework.Observation) {
	t.Helper()
	podBefore := ""
	if c.Pod != nil {
		podBefore = c.Pod.String()
	}
	got := Expect(c)
	want.Case, want.APIVersion, want.Source = c.Name, framework.ObservationVersion, Source
	want.Normalize()
	if d := framework.Diff(&want, got); len(d) > 0 {
		t.Errorf("case %q differs from the spec:\n  %s\ngot:\n%s", c.Name, strings.Join(d, "\n  "), got.JSON())
	}
	if got.Source != Source || got.Case != c.Name || got.APIVersion != framework.ObservationVersion {
		t.Errorf("case %q: header %q %q %q", c.Name, got.Source, got.Case, got.APIVersion)
	}
	if c.Pod != nil && c.Pod.String() != podBefore {
		t.Errorf("case %q: Expect changed the caller's pod", c.Name)
	}
}
