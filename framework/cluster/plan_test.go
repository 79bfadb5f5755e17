package cluster

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/needs"
	"github.com/volperm/volperm/nodeimpl/atomicwriter"
)

func TestPackPods(t *testing.T) {
	for _, tc := range []struct {
		name    string
		groups  []string
		volumes []int
		max     int
		want    [][]int
	}{
		{"one group shares a pod", []string{"a", "a", "a"}, []int{1, 2, 3}, 64, [][]int{{0, 1, 2}}},
		{"groups never share", []string{"a", "b", "a", "b"}, []int{1, 1, 1, 1}, 64, [][]int{{0, 2}, {1, 3}}},
		{"alone is alone", []string{"", "a", "", "a"}, []int{1, 1, 1, 1}, 64, [][]int{{0}, {1, 3}, {2}}},
		{"a full pod opens another", []string{"a", "a", "a", "a"}, []int{2, 2, 1, 2}, 4, [][]int{{0, 1}, {2, 3}}},
		{"exactly full fits", []string{"a", "a"}, []int{2, 2}, 4, [][]int{{0, 1}}},
		{"later cases join the pod last opened", []string{"a", "a", "a"}, []int{3, 3, 1}, 4, [][]int{{0}, {1, 2}}},
		{"a case larger than max gets a pod", []string{"a", "a"}, []int{9, 1}, 4, [][]int{{0}, {1}}},
		{"nothing", nil, nil, 4, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := packPods(tc.groups, tc.volumes, func(string) int { return tc.max }); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("packPods(%q, %v, %d) = %v, want %v", tc.groups, tc.volumes, tc.max, got, tc.want)
			}
		})
	}
}

func TestPodGroup(t *testing.T) {
	emptyDir := func(fsGroup *int64) *corev1.Pod {
		p := &corev1.Pod{}
		p.Spec.SecurityContext = &corev1.PodSecurityContext{FSGroup: fsGroup}
		p.Spec.Volumes = []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
		return p
	}
	hostPath := emptyDir(nil)
	hostPath.Spec.Volumes[0].VolumeSource = corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/x"}}
	secret := emptyDir(nil)
	secret.Spec.Volumes[0].VolumeSource = corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s", Items: []corev1.KeyToPath{{Key: "k", Path: "k"}}}}
	plain := &framework.Case{}
	for _, tc := range []struct {
		name       string
		c          *framework.Case
		pod        *corev1.Pod
		podPerCase bool
		alone      bool
	}{
		{"emptyDir", plain, emptyDir(nil), false, false},
		{"pod per case", plain, emptyDir(nil), true, true},
		{"steps", &framework.Case{After: []framework.Step{{RestartKubelet: true}}}, emptyDir(nil), false, true},
		{"hostPath", plain, hostPath, false, false},
		{"hostPath, pod per case", plain, hostPath, true, true},
		{"a key the source lacks", &framework.Case{Sources: map[string]map[string]string{"secret/s": {}}}, secret, false, true},
		{"a key the source has", &framework.Case{Sources: map[string]map[string]string{"secret/s": {"k": "v"}}}, secret, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := podGroup(tc.c, tc.pod, tc.podPerCase)
			if err != nil {
				t.Fatal(err)
			}
			if (g == "") != tc.alone {
				t.Errorf("group %q, want alone %v", g, tc.alone)
			}
		})
	}
	h1, _ := podGroup(plain, hostPath, false)
	h2, _ := podGroup(plain, emptyDir(nil), false)
	if h1 == h2 || !strings.HasPrefix(h1, hostPathGroup) {
		t.Errorf("a hostPath case shares pods with other hostPath cases only: groups %q and %q", h1, h2)
	}
	if max := podVolumes(64); max(h1) != hostPathPodVolumes || max(h2) != 64 {
		t.Errorf("a pod of hostPath cases holds %d volumes, another %d; want %d (the kubelet's FailedMount events of one pod) and 64", max(h1), max(h2), hostPathPodVolumes)
	}
	// A need of the node (here a user namespace: hostUsers false) keeps a case's pod apart.
	userns := emptyDir(nil)
	userns.Spec.HostUsers = ptr.To(false)
	u, _ := podGroup(&framework.Case{Pod: userns}, userns, false)
	if p, _ := podGroup(&framework.Case{Pod: emptyDir(nil)}, emptyDir(nil), false); u == p || !strings.Contains(u, "need="+needs.UserNamespaces) {
		t.Errorf("a pod in a user namespace shares its group with one that is not: %q and %q", u, p)
	}
	a, _ := podGroup(plain, emptyDir(ptr.To[int64](2000)), false)
	b, _ := podGroup(plain, emptyDir(ptr.To[int64](3000)), false)
	c, _ := podGroup(plain, emptyDir(ptr.To[int64](2000)), false)
	if a == b || a != c {
		t.Errorf("groups by security context: fsGroup 2000 %q, 3000 %q, 2000 again %q", a, b, c)
	}
}

// A pod of hostPath cases that did not run is split by the FailedMount texts: a case with any
// failed volume has its answer, the others run again.
func TestSplitFailed(t *testing.T) {
	run := func(id int, vols ...string) *caseRun {
		r := &caseRun{id: id}
		for _, v := range vols {
			r.vols = append(r.vols, batchVolume{run: r, unique: v})
		}
		return r
	}
	a, b, c := run(0, "c0-v0"), run(1, "c1-v0", "c1-v1"), run(2, "c2-v0")
	p := &probePod{runs: []*caseRun{a, b, c}, setUp: map[string]string{"c1-v1": "hostPath type check failed"}}
	failed, rest := p.splitFailed()
	if !reflect.DeepEqual(failed, []*caseRun{b}) || !reflect.DeepEqual(rest, []*caseRun{a, c}) {
		t.Errorf("failed %v, rest %v; want case 1 failed, 0 and 2 again", ids(failed), ids(rest))
	}
}

func ids(runs []*caseRun) []int {
	var out []int
	for _, r := range runs {
		out = append(out, r.id)
	}
	return out
}

// A probe pod holding a token gets the case pod's FsUser (v1.37 FsUserFrom): none through a
// second container of another uid, 0 as the probe container runs, another uid by running the
// probe container as it; token cases of different FsUsers never share a pod.
func TestShapeFsUser(t *testing.T) {
	token := func(podUser *int64, containers ...*int64) *corev1.Pod {
		p := &corev1.Pod{}
		p.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: podUser}
		for _, u := range containers {
			c := corev1.Container{Name: "c"}
			if u != nil {
				c.SecurityContext = &corev1.SecurityContext{RunAsUser: u}
			}
			p.Spec.Containers = append(p.Spec.Containers, c)
		}
		p.Spec.Volumes = []corev1.Volume{{Name: "t", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}}}}}}}
		return p
	}
	u := func(v int64) *int64 { return &v }
	target := &Target{opts: Options{ProbeImage: "probe"}}
	for _, tc := range []struct {
		name string
		c    *corev1.Pod
		want *int64 // FsUserFrom of the probe pod
	}{
		{"no runAsUser", token(nil, nil), nil},
		{"two uids", token(nil, u(1000), u(1001)), nil},
		{"root", token(u(0), nil), u(0)},
		{"uid 1000", token(u(1000), nil, nil), u(1000)},
	} {
		p := target.probePodSpec("p", "ns", tc.c.Spec.SecurityContext)
		shapeFsUser(p, tc.c)
		got := atomicwriter.FsUserFrom(p)
		if (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want {
			t.Errorf("%s: the probe pod's FsUser is %v, want %v", tc.name, fsUserWord(got), fsUserWord(tc.want))
		}
	}
	groups := map[string]bool{}
	for _, c := range []*corev1.Pod{token(nil, nil), token(u(0), nil), token(u(1000), nil)} {
		g, err := podGroup(&framework.Case{}, c, false)
		if err != nil {
			t.Fatal(err)
		}
		groups[g] = true
	}
	if len(groups) != 3 {
		t.Errorf("token cases of three FsUsers fall in %d pod groups, want 3", len(groups))
	}
}
