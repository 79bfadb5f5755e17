package atomicwriter

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// FsUserFrom against v1.37 pkg/volume/util FsUserFrom's cases (util_test.go TestFsUserFrom) and
// the shapes it must tell apart: pod and container level, init and ephemeral containers, uid 0.
func TestFsUserFrom(t *testing.T) {
	u := func(v int64) *int64 { return &v }
	sc := func(v *int64) *corev1.SecurityContext {
		if v == nil {
			return nil
		}
		return &corev1.SecurityContext{RunAsUser: v}
	}
	for _, tc := range []struct {
		name              string
		pod               *int64
		inits, containers []*int64
		ephemeral         []*int64
		want              *int64
	}{
		{name: "no containers"},
		{name: "no runAsUser anywhere", containers: []*int64{nil, nil}},
		{name: "pod level", pod: u(1000), containers: []*int64{nil, nil}, want: u(1000)},
		{name: "container level, all the same", containers: []*int64{u(1000), u(1000)}, want: u(1000)},
		{name: "container over pod", pod: u(0), containers: []*int64{u(1000), u(1000)}, want: u(1000)},
		{name: "one container overrides to another uid", pod: u(1000), containers: []*int64{nil, u(1001)}},
		{name: "one container without", containers: []*int64{u(1000), nil}},
		{name: "init container differs", pod: u(1000), inits: []*int64{u(1001)}, containers: []*int64{nil}},
		{name: "init container without", inits: []*int64{nil}, containers: []*int64{u(1000)}},
		{name: "init container the same", inits: []*int64{u(1000)}, containers: []*int64{u(1000)}, want: u(1000)},
		{name: "ephemeral container without", containers: []*int64{u(1000)}, ephemeral: []*int64{nil}},
		{name: "ephemeral container the same", containers: []*int64{u(1000)}, ephemeral: []*int64{u(1000)}, want: u(1000)},
		{name: "uid 0 counts", pod: u(0), containers: []*int64{nil}, want: u(0)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{}
			if tc.pod != nil {
				pod.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: tc.pod}
			}
			for _, v := range tc.inits {
				pod.Spec.InitContainers = append(pod.Spec.InitContainers, corev1.Container{SecurityContext: sc(v)})
			}
			for _, v := range tc.containers {
				pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{SecurityContext: sc(v)})
			}
			for _, v := range tc.ephemeral {
				pod.Spec.EphemeralContainers = append(pod.Spec.EphemeralContainers, corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon{SecurityContext: sc(v)}})
			}
			got := FsUserFrom(pod)
			switch {
			case (got == nil) != (tc.want == nil):
				t.Fatalf("FsUserFrom = %v, want %v", got, tc.want)
			case got != nil && *got != *tc.want:
				t.Fatalf("FsUserFrom = %d, want %d", *got, *tc.want)
			}
		})
	}
}

// A clusterTrustBundle's and a podCertificate's files follow the token's rule: owner FsUser,
// 0600 with an owner or fsGroup, else defaultMode; the KEP-5936 user wins with the gate on.
func TestCredentialPayload(t *testing.T) {
	u := func(v int64) *int64 { return &v }
	dm := int32(0444)
	ctb := corev1.VolumeProjection{ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{Name: u2s("b"), Path: "ca.pem", User: u(3000)}}
	pc := corev1.VolumeProjection{PodCertificate: &corev1.PodCertificateProjection{CredentialBundlePath: "b.pem", KeyPath: "k.pem"}}
	pod := &corev1.Pod{Spec: corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{RunAsUser: u(1000)}, Containers: []corev1.Container{{}}}}
	vol := &corev1.Volume{VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{DefaultMode: &dm, Sources: []corev1.VolumeProjection{ctb, pc}}}}
	for _, gate := range []bool{false, true} {
		got, err := Payload(pod, vol, nil, gate)
		if err != nil {
			t.Fatal(err)
		}
		bundleOwner := int64(1000)
		if gate {
			bundleOwner = 3000
		}
		want := map[string]struct {
			data  string
			owner int64
		}{"ca.pem": {FakeTrustAnchors, bundleOwner}, "b.pem": {FakeCertificateKey + FakeCertificateChain, 1000}, "k.pem": {FakeCertificateKey, 1000}}
		if len(got) != len(want) {
			t.Fatalf("gate %v: files %v, want %v", gate, got, want)
		}
		for name, w := range want {
			f := got[name]
			if string(f.Data) != w.data || f.Mode != 0600 || f.FsUser == nil || *f.FsUser != w.owner {
				t.Errorf("gate %v: %s = %q %o %v, want %q 0600 owner %d", gate, name, f.Data, f.Mode, f.FsUser, w.data, w.owner)
			}
		}
	}
}

func u2s(s string) *string { return &s }
