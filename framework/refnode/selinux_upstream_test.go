package refnode

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/oracle"
	"github.com/volperm/volperm/nodeimpl/release"
	"github.com/volperm/volperm/nodeimpl/selinux"
)

// TestSELinuxUpstreamTable checks the oracle and the reference node against upstream's own
// table of two pods on one volume: v1.37.1 pkg/kubelet/volumemanager/cache/
// desired_state_of_world_test.go Test_AddPodToVolume_SELinux_MultiplePods, every row with
// SELinuxChangePolicy on ("RWOP+ChangePolicy" is a kubelet with SELinuxMount off, v1.36;
// "+Mount" is v1.37), its plugin one whose SupportsSELinuxContextMount is true (a CSIDriver with
// seLinuxMount). want is upstream's expectedSELinuxLabel, the volume's label for the second pod
// when it is added; wantErr its expectError (the conflict fails the second pod's volume).
func TestSELinuxUpstreamTable(t *testing.T) {
	complete := &corev1.SELinuxOptions{User: "system_u", Role: "object_r", Type: "container_t", Level: "s0:c1,c2"}
	conflicting := &corev1.SELinuxOptions{User: "system_u", Role: "object_r", Type: "container_t", Level: "s0:c98,c99"}
	const label = "system_u:object_r:container_file_t:s0:c1,c2"
	rec, mo := corev1.SELinuxChangePolicyRecursive, corev1.SELinuxChangePolicyMountOption
	rwop, rwx := corev1.ReadWriteOncePod, corev1.ReadWriteMany
	for _, tc := range []struct {
		name          string
		kubelet       string
		mode          corev1.PersistentVolumeAccessMode
		first, second *corev1.SELinuxOptions
		policy1, pol2 corev1.PodSELinuxChangePolicy
		wantErr       bool
		want          string
	}{
		{"RWOP+ChangePolicy: ReadWriteOncePod with the same SELinux options", "v1.36", rwop, complete, complete, "", "", false, label},
		{"RWOP+ChangePolicy: ReadWriteOncePod with the same SELinux options and same Recursive policy", "v1.36", rwop, complete, complete, rec, rec, false, ""},
		{"RWOP+ChangePolicy: ReadWriteOncePod with the same SELinux options and conflicting policies", "v1.36", rwop, complete, complete, rec, "", true, ""},
		{"RWOP+ChangePolicy: ReadWriteMany with the same SELinux options with Recursive policy", "v1.36", rwx, complete, complete, rec, rec, false, ""},
		{"RWOP+ChangePolicy: ReadWriteMany with the same SELinux options with MountOption policy", "v1.36", rwx, complete, complete, mo, mo, false, ""},
		{"RWOP+ChangePolicy: ReadWriteMany with the same SELinux options with conflicting policies", "v1.36", rwx, complete, complete, mo, rec, false, ""},
		{"RWOP+ChangePolicy: ReadWriteMany with conflicting SELinux options and Recursive policy", "v1.36", rwx, complete, conflicting, rec, rec, false, ""},
		{"RWOP+ChangePolicy: ReadWriteMany with conflicting SELinux options and MountOption policy", "v1.36", rwx, complete, conflicting, mo, mo, false, ""},
		{"RWOP+ChangePolicy+Mount: ReadWriteOncePod with the same SELinux options", "v1.37", rwop, complete, complete, "", "", false, label},
		{"RWOP+ChangePolicy+Mount: ReadWriteOncePod with the same SELinux options and same Recursive policy", "v1.37", rwop, complete, complete, rec, rec, false, ""},
		{"RWOP+ChangePolicy+Mount: ReadWriteOncePod with the same SELinux options and conflicting policies", "v1.37", rwop, complete, complete, rec, "", true, ""},
		{"RWOP+ChangePolicy+Mount: ReadWriteMany with the same SELinux options with Recursive policy", "v1.37", rwx, complete, complete, rec, rec, false, ""},
		{"RWOP+ChangePolicy+Mount: ReadWriteMany with the same SELinux options with MountOption policy", "v1.37", rwx, complete, complete, mo, mo, false, label},
		{"RWOP+ChangePolicy+Mount: ReadWriteMany with the same SELinux options with default and MountOption policy", "v1.37", rwx, complete, complete, "", mo, false, label},
		{"RWOP+ChangePolicy+Mount: ReadWriteMany with the same SELinux options with conflicting policies", "v1.37", rwx, complete, complete, mo, rec, true, label},
		{"RWOP+ChangePolicy+Mount: ReadWriteMany with conflicting SELinux options and Recursive policy", "v1.37", rwx, complete, conflicting, rec, rec, false, ""},
		{"RWOP+ChangePolicy+Mount: ReadWriteMany with conflicting SELinux options and MountOption policy", "v1.37", rwx, complete, conflicting, mo, mo, true, label},
	} {
		pod := func(name string, o *corev1.SELinuxOptions, p corev1.PodSELinuxChangePolicy) *corev1.Pod {
			out := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: framework.Namespace, UID: types.UID("uid-" + name)}, Spec: corev1.PodSpec{
				SecurityContext: &corev1.PodSecurityContext{SELinuxOptions: o},
				Volumes:         []corev1.Volume{{Name: "volume-name", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "myClaim"}}}},
				Containers:      []corev1.Container{{Name: "c", Image: framework.ProbeImage, VolumeMounts: []corev1.VolumeMount{{Name: "volume-name", MountPath: "/v"}}}},
			}}
			if p != "" {
				out.Spec.SecurityContext.SELinuxChangePolicy = &p
			}
			return out
		}
		pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "basicPV"}, Spec: corev1.PersistentVolumeSpec{AccessModes: []corev1.PersistentVolumeAccessMode{tc.mode},
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "basic", VolumeHandle: "basicPV"}}}}
		c := &framework.Case{Name: "upstream: " + tc.name, Area: framework.AreaSELinux, Profile: framework.ProfileConformance,
			Releases: framework.Releases{APIServer: "v1.37", Kubelet: tc.kubelet}, Pod: pod("pod2", tc.second, tc.pol2),
			SELinux: &framework.SELinux{Claims: map[string]*corev1.PersistentVolume{"myClaim": pv}, CSIDrivers: map[string]bool{"basic": true},
				Running: []*corev1.Pod{pod("pod1", tc.first, tc.policy1)}}}
		if tc.kubelet == "v1.37" {
			c.Releases = framework.Releases{}
		}
		check := func(who, setUp, got string) {
			if tc.wantErr != strings.HasPrefix(setUp, "conflicting SELinux labels of volume basicPV: ") {
				t.Errorf("%s, %s: set-up %q, upstream expects an error: %v", who, tc.name, setUp, tc.wantErr)
			}
			if !tc.wantErr && got != tc.want {
				t.Errorf("%s, %s: label %q, upstream expects %q", who, tc.name, got, tc.want)
			}
		}
		obs := oracle.Expect(c)
		if !obs.Admission.Allowed || len(obs.Volumes) != 1 {
			t.Fatalf("oracle, %s: %s", tc.name, obs.JSON())
		}
		check("oracle", obs.Volumes[0].SetUp, obs.Volumes[0].SELinuxMount)

		n := SELinuxNode(c.SELinux)
		n.MountGate = release.SELinuxMount(tc.kubelet)
		d := selinux.Decide(n, c.Pod)["volume-name"]
		setUp := "ok"
		if d.Err != nil {
			setUp = d.Err.Error()
		}
		check("reference node", setUp, d.Label)
	}
}
