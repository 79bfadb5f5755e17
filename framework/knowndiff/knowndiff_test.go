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
		k, ok := Explain(tc.c)
		if got := ok && strings.Contains(k.Why, "v1.34 to v1.36"); got != tc.want {
			t.Errorf("Explain(kubelet %q, type %q) = %q, %v; want the hostPath text difference %v", tc.c.Releases.Kubelet, *tc.c.Pod.Spec.Volumes[0].HostPath.Type, k.Why, ok, tc.want)
		}
	}
}

// A known difference explains a failure only when it makes every line of the failure's Diff:
// the lines about what it changes, of the volumes it is about. A case it matches that also
// differs elsewhere (another volume, a path below the root, admission) is not explained.
func TestKnownDifferencesMakeOnlyTheirLines(t *testing.T) {
	mode := int32(0o750)
	on := map[string]bool{framework.GateEmptyDirVolumeMode: true}
	memory := &framework.Case{Gates: framework.Gates{APIServer: on, Kubelet: on}, Pod: &corev1.Pod{Spec: corev1.PodSpec{Volumes: []corev1.Volume{
		{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, Mode: &mode}}},
		{Name: "other", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Mode: &mode}}},
	}}}, Probes: []framework.Probe{{Name: "write-scratch", Volume: "scratch"}, {Name: "write-other", Volume: "other"}}}
	obs := func(scratchRoot, scratchSub, otherRoot string, scratchProbe, otherProbe, allowed bool) *framework.Observation {
		return &framework.Observation{Admission: framework.Admission{Allowed: allowed}, Volumes: []framework.VolumeObservation{
			{Name: "scratch", Type: "emptyDir", Medium: "Memory", SetUp: framework.SetUpOK, Paths: []framework.PathObservation{
				{Path: ".", Type: "dir", Mode: scratchRoot}, {Path: "a", Type: "file", Mode: scratchSub}}},
			{Name: "other", Type: "emptyDir", SetUp: framework.SetUpOK, Paths: []framework.PathObservation{{Path: ".", Type: "dir", Mode: otherRoot}}},
		}, Probes: []framework.ProbeResult{{Name: "write-scratch", Allowed: scratchProbe}, {Name: "write-other", Allowed: otherProbe}}}
	}
	expected := obs("0750", "0644", "0750", false, false, true)
	for _, tc := range []struct {
		name        string
		observed    *framework.Observation
		unexplained int
	}{
		{"tmpfs' root mode and what it lets a probe do", obs("1777", "0644", "0750", true, false, true), 0},
		{"and the other volume's root too", obs("1777", "0644", "0777", true, false, true), 1},
		{"and an entry below the root", obs("1777", "0600", "0750", true, false, true), 1},
		{"and a probe of the other volume", obs("1777", "0644", "0750", true, true, true), 1},
		{"and admission", obs("1777", "0644", "0750", true, false, false), 1},
	} {
		k, ok := Explain(memory)
		if !ok || !strings.Contains(k.Why, "Memory") {
			t.Fatalf("Explain(the Memory case) = %q, %v", k.Why, ok)
		}
		diff := framework.Diff(expected, tc.observed)
		if got := k.Unexplained(diff); len(got) != tc.unexplained {
			t.Errorf("%s: unexplained %q of %q, want %d line(s)", tc.name, got, diff, tc.unexplained)
		}
	}

	// The token's top-level symlink of a kubelet before v1.36: that entry only.
	fsUser := int64(1000)
	token := &framework.Case{Releases: framework.Releases{APIServer: "v1.35", Kubelet: "v1.35"}, Pod: &corev1.Pod{Spec: corev1.PodSpec{
		SecurityContext: &corev1.PodSecurityContext{RunAsUser: &fsUser}, Containers: []corev1.Container{{Name: "app"}},
		Volumes: []corev1.Volume{{Name: "tok", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}}}}}}}}}}
	k, ok := Explain(token)
	if !ok {
		t.Fatal("Explain(a v1.35 token case): no known difference")
	}
	tokenObs := func(linkUID, fileUID int64) *framework.Observation {
		return &framework.Observation{Volumes: []framework.VolumeObservation{{Name: "tok", Type: "projected", SetUp: framework.SetUpOK, Paths: []framework.PathObservation{
			{Path: "token", Type: "symlink", Mode: "0777", UID: linkUID, Link: "..data/token"},
			{Path: "..TIMESTAMP/token", Type: "file", Mode: "0600", UID: fileUID}}}}}
	}
	if got := k.Unexplained(framework.Diff(tokenObs(1000, 1000), tokenObs(0, 1000))); len(got) != 0 {
		t.Errorf("the token link root's: unexplained %q", got)
	}
	if got := k.Unexplained(framework.Diff(tokenObs(1000, 1000), tokenObs(0, 0))); len(got) != 1 {
		t.Errorf("the token file root's too: unexplained %q, want that line", got)
	}
	if got := (framework.KnownDifference{}).Unexplained([]string{"x"}); len(got) != 1 {
		t.Errorf("no known difference explains nothing: %q", got)
	}
}
