package knowndiff

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
)

// The hostPath text difference is a difference of the releases before v1.37 only, and only of
// pods with a hostPath type to check.
func TestHostPathTextsBefore137(t *testing.T) {
	typed := func(release string, ty corev1.HostPathType) *framework.Case {
		return &framework.Case{Releases: framework.Releases{APIServer: release, Kubelet: release}, Pod: &corev1.Pod{Spec: corev1.PodSpec{Volumes: []corev1.Volume{{
			Name: "h", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/x", Type: &ty}}}}}}}
	}
	for _, tc := range []struct {
		c    *framework.Case
		want bool
	}{
		{typed("v1.34", corev1.HostPathDirectory), true},
		{typed("v1.36", corev1.HostPathSocket), true},
		{typed("v1.37", corev1.HostPathDirectory), false},
		{typed("", corev1.HostPathDirectory), false},
		{typed("v1.36", corev1.HostPathUnset), false},
	} {
		why, ok := Explain(tc.c)
		if got := ok && strings.Contains(why, "v1.34 to v1.36"); got != tc.want {
			t.Errorf("Explain(kubelet %q, type %q) = %q, %v; want the hostPath text difference %v", tc.c.Releases.Kubelet, *tc.c.Pod.Spec.Volumes[0].HostPath.Type, why, ok, tc.want)
		}
	}
}
