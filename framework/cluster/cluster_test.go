package cluster

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/volperm/volperm/framework"
)

func TestRunnable(t *testing.T) {
	pod := func(v corev1.VolumeSource) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{Volumes: []corev1.Volume{{Name: "v", VolumeSource: v}}}}
	}
	for _, tc := range []struct {
		name string
		c    framework.Case
		ok   bool
		why  string
	}{
		{"emptyDir", framework.Case{Pod: pod(corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: "Memory"}})}, true, ""},
		{"hostPath", framework.Case{Pod: pod(corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/x"}})}, true, ""},
		{"huge pages", framework.Case{Pod: pod(corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: "HugePages"}})}, false, "huge pages"},
		{"secret", framework.Case{Pod: pod(corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{}})}, true, ""},
		{"token projection", framework.Case{Pod: withServiceAccount(pod(corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{}}}}}))}, true, ""},
		{"token projection, pod runAsUser 1000, probed as 1001", framework.Case{Pod: withRunAsUser(withServiceAccount(pod(corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{}}}}})), 1000),
			Probes: []framework.Probe{{Name: "p", As: framework.User{UID: 1001, GID: 1001}}}}, false, "FsUser 1000"},
		{"token projection, pod runAsUser 1000, probed as 1000", framework.Case{Pod: withRunAsUser(withServiceAccount(pod(corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{}}}}})), 1000),
			Probes: []framework.Probe{{Name: "p", As: framework.User{UID: 1000, GID: 1000}}}}, true, ""},
		{"clusterTrustBundle projection", framework.Case{Pod: pod(corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			Sources: []corev1.VolumeProjection{{ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{}}}}})}, false, "ClusterTrustBundle object"},
		{"podCertificate projection", framework.Case{Pod: pod(corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			Sources: []corev1.VolumeProjection{{PodCertificate: &corev1.PodCertificateProjection{}}}}})}, false, "signer"},
		{"token projection without serviceAccountName at admission", framework.Case{AdmissionOnly: true, Pod: pod(corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{}}}}})}, false, "ServiceAccount admission plugin"},
		{"flexVolume of another driver", framework.Case{Pod: pod(corev1.VolumeSource{FlexVolume: &corev1.FlexVolumeSource{Driver: "example/nfs"}})}, false, `driver "example/nfs"`},
		{"fixture flexVolume without the driver", framework.Case{Pod: pod(corev1.VolumeSource{FlexVolume: &corev1.FlexVolumeSource{Driver: "volperm/fixture"}})}, false, "the kind target installs it"},
		{"fixture flexVolume with the driver", framework.Case{Pod: pod(corev1.VolumeSource{FlexVolume: &corev1.FlexVolumeSource{Driver: "volperm/fixture"}})}, true, ""},
		{"no source (defaulted to emptyDir)", framework.Case{Pod: pod(corev1.VolumeSource{})}, true, ""},
		{"iscsi", framework.Case{Pod: pod(corev1.VolumeSource{ISCSI: &corev1.ISCSIVolumeSource{}})}, false, "only emptyDir"},
		{"flexVolume at admission only", framework.Case{AdmissionOnly: true, Pod: pod(corev1.VolumeSource{FlexVolume: &corev1.FlexVolumeSource{}})}, true, ""},
		{"preservePermissions", framework.Case{PreservePermissions: []string{"v"}}, false, "not a field of the v1 API"},
		{"policy at admission", framework.Case{AdmissionOnly: true, FlexVolumePolicy: &framework.FlexVolumePolicy{}}, true, ""},
	} {
		ok, why := Runnable(&tc.c, tc.name == "fixture flexVolume with the driver")
		if ok != tc.ok || !strings.Contains(why, tc.why) {
			t.Errorf("%s: (%v, %q), want (%v, containing %q)", tc.name, ok, why, tc.ok, tc.why)
		}
	}
}

// TestAdmissionErrorsAreFieldErrorTexts: the apiserver's Invalid status carries one cause per
// field.Error; joined back they are field.Error.Error(), the spec's texts.
func TestAdmissionErrorsAreFieldErrorTexts(t *testing.T) {
	errs := field.ErrorList{
		field.Invalid(field.NewPath("spec", "volumes").Index(0).Child("emptyDir", "mode"), int32(1024),
			"must be a number between 0 and 01777 (octal), both inclusive"),
		field.Required(field.NewPath("spec", "volumes").Index(1).Child("hostPath", "path"), ""),
	}
	err := apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "p", errs)
	want := []string{errs[0].Error(), errs[1].Error()}
	if got := admissionErrors(err); !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestPolicyErrorsSplitTheDenial(t *testing.T) {
	for _, tc := range []struct {
		msg  string
		want []string
	}{
		{`pods "x" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: spec.volumes[1]: Forbidden: hostPath volumes are not allowed by the policy | spec.volumes[2].flexVolume.driver: Forbidden: driver "e/n" is not in the allowed flexVolume drivers [a/b, c/d]`,
			[]string{"spec.volumes[1]: Forbidden: hostPath volumes are not allowed by the policy",
				`spec.volumes[2].flexVolume.driver: Forbidden: driver "e/n" is not in the allowed flexVolume drivers [a/b, c/d]`}},
		{`pods "x" is forbidden: error looking up service account`, nil},
	} {
		if got := policyErrors(tc.msg); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("policyErrors(%q) = %q, want %q", tc.msg, got, tc.want)
		}
	}
}

func TestPolicyParams(t *testing.T) {
	got := policyParams(&framework.FlexVolumePolicy{AllowedVolumeTypes: []string{"flexVolume", "*"}, AllowedDrivers: []string{"a/b", ""}})
	want := map[string]string{"type.0": "flexVolume", "type.1": "*", "driver.0": "a/b", "driver.1": "", "allowedDriversDisplay": "a/b, "}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestKubeletStepsNeedNodeControl(t *testing.T) {
	target := &Target{version: "v1.37.1", kubeletVersion: "v1.37.1"}
	for _, tc := range []struct {
		name  string
		steps []framework.Step
		ok    bool
	}{
		{"chmod", []framework.Step{{Chmod: &framework.Chmod{Volume: "v", Path: ".", Mode: 0o755}}}, true},
		{"apiserver gate flip", []framework.Step{{SetGates: &framework.Gates{APIServer: map[string]bool{"EmptyDirVolumeMode": true}}}}, true},
		{"kubelet gate flip", []framework.Step{{SetGates: &framework.Gates{Kubelet: map[string]bool{"EmptyDirVolumeMode": true}}}}, false},
		{"kubelet restart", []framework.Step{{RestartKubelet: true}}, false},
	} {
		c := &framework.Case{Pod: &corev1.Pod{}, After: tc.steps}
		if ok, why := (kubeletHalf{target}).SupportsNode(c, framework.Admitted{}); ok != tc.ok {
			t.Errorf("%s: supported %v (%s), want %v", tc.name, ok, why, tc.ok)
		}
	}
}

func withServiceAccount(p *corev1.Pod) *corev1.Pod {
	p.Spec.ServiceAccountName = "default"
	return p
}

// A cluster runs the cells of the releases its apiserver and the node's kubelet report, and
// says which it runs otherwise (kind@matrix pins a target to a worker of each release).
func TestReleasesMismatch(t *testing.T) {
	for _, tc := range []struct {
		releases           framework.Releases
		apiserver, kubelet string
		ok                 bool
	}{
		{framework.Releases{}, "v1.37.1", "v1.37.1", true},
		{framework.Releases{Kubelet: "v1.34"}, "v1.37.1", "v1.34.4", true},
		{framework.Releases{Kubelet: "v1.34"}, "v1.37.1", "v1.37.1", false},
		{framework.Releases{}, "v1.37.1", "v1.35.4", false},
		{framework.Releases{APIServer: "v1.36", Kubelet: "v1.36"}, "v1.36.3-gke.100", "v1.36.3", true},
	} {
		c := &framework.Case{Releases: tc.releases}
		why := ReleasesMismatch(c, tc.apiserver, tc.kubelet)
		if (why == "") != tc.ok {
			t.Errorf("%+v on %s/%s: %q", tc.releases, tc.apiserver, tc.kubelet, why)
		}
		if why != "" && !strings.Contains(why, "the cluster runs kube-apiserver "+tc.apiserver+" and kubelet "+tc.kubelet) {
			t.Errorf("reason %q does not name what the cluster runs", why)
		}
	}
}

// The kubelet's own wait for its secret or configMap cache (a sync, or the pod's objects not yet
// registered) is retried by it: not a SetUp answer.
func TestTransientMountFailure(t *testing.T) {
	for text, want := range map[string]bool{
		"failed to sync secret cache: timed out waiting for the condition":    true,
		"failed to sync configmap cache: timed out waiting for the condition": true,
		`hostPath type check failed: /x is not a directory`:                   false,
		`object "volperm-0f1e"/"app" not registered`:                          true,
		`configmap "volperm-0f1e"/"app" not registered`:                       true,
		`secret "s" not found`:                                                false,
		`configmap "app" not found`:                                           false,
	} {
		if got := transientMountFailure(text); got != want {
			t.Errorf("transientMountFailure(%q) = %v, want %v", text, got, want)
		}
	}
}

// TestParseLabels: --namespace-labels takes KEY=VALUE,... and refuses what is not a label,
// naming the flag and the bad part.
func TestParseLabels(t *testing.T) {
	got, err := ParseLabels("e2e-run=0f1e,e2e-framework=volperm")
	if err != nil || len(got) != 2 || got["e2e-run"] != "0f1e" || got["e2e-framework"] != "volperm" {
		t.Errorf("ParseLabels: %v, %v", got, err)
	}
	if got, err := ParseLabels(""); err != nil || got != nil {
		t.Errorf("ParseLabels(\"\"): %v, %v; want none", got, err)
	}
	for _, bad := range []string{"novalue", "a=b=c", "bad key=x", "k=" + strings.Repeat("v", 64), "k=-x"} {
		if _, err := ParseLabels(bad); err == nil || !strings.Contains(err.Error(), "--namespace-labels") {
			t.Errorf("ParseLabels(%q): %v; want an error naming --namespace-labels", bad, err)
		}
	}
}

// A kubelet that has just joined refuses proxied requests with "Authorization error" for a
// moment: retried until it answers, within the grace; any other error is returned at once.
func TestRetryKubeletAuthz(t *testing.T) {
	authz := errors.New(`an error on the server ("Authorization error (user=kube-apiserver-kubelet-client, verb=get, resource=nodes, subresource=metrics)") has prevented the request from succeeding`)
	attempts := 0
	err := retryKubeletAuthz(context.Background(), 10*time.Second, func() error {
		attempts++
		if attempts < 3 {
			return authz
		}
		return nil
	})
	if err != nil || attempts != 3 {
		t.Errorf("refused twice, then answered: %v after %d attempts", err, attempts)
	}
	other := errors.New("connection refused")
	attempts = 0
	if err := retryKubeletAuthz(context.Background(), 10*time.Second, func() error { attempts++; return other }); err != other || attempts != 1 {
		t.Errorf("another error: %v after %d attempts; want it at once", err, attempts)
	}
	attempts = 0
	if err := retryKubeletAuthz(context.Background(), 0, func() error { attempts++; return authz }); err != authz || attempts != 1 {
		t.Errorf("past the grace: %v after %d attempts", err, attempts)
	}
}

// withRunAsUser gives p one container and the pod-level runAsUser uid.
func withRunAsUser(p *corev1.Pod, uid int64) *corev1.Pod {
	p.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: &uid}
	p.Spec.Containers = []corev1.Container{{Name: "app"}}
	return p
}

// An image volume of the probe image is not run where the probe pods run the runner image
// (volperm runner in the cluster without --probe-image): its files are not the probe image's.
func TestRunnerAsImageVolume(t *testing.T) {
	c := &framework.Case{Pod: &corev1.Pod{Spec: corev1.PodSpec{Volumes: []corev1.Volume{{Name: "img", VolumeSource: corev1.VolumeSource{Image: &corev1.ImageVolumeSource{Reference: framework.ProbeImage}}}}}}}
	for ref, refused := range map[string]bool{
		"volperm/volperm:abc":                       true,
		"registry.example:5000/volperm/volperm:abc": true,
		"volperm/probe:abc":                         false,
		"registry.example:5000/volperm/probe":       false,
	} {
		target := &Target{opts: Options{ProbeImage: ref}}
		if why := target.runnerAsImageVolume(c); (why != "") != refused {
			t.Errorf("probe image %s: %q, want refused %v", ref, why, refused)
		}
	}
	if why := (&Target{opts: Options{ProbeImage: "volperm/volperm:abc"}}).runnerAsImageVolume(&framework.Case{Pod: &corev1.Pod{}}); why != "" {
		t.Errorf("a pod without an image volume: %q", why)
	}
}

// A cluster of two pools: a case is not applicable when it is no case of either pool (a kubelet
// restart, which volperm cannot give a node it does not control), and applicable when one pool
// is its kind of node (user namespaces on one pool's runtime only).
// refusingAPI is an apiserver half that supports no case.
type refusingAPI struct{}

func (refusingAPI) SupportsAdmission(*framework.Case) (bool, string) { return false, "refuses" }
func (refusingAPI) Admit(context.Context, *framework.Case) (framework.Admitted, error) {
	return framework.Admitted{}, errors.New("refuses")
}
func (refusingAPI) Info() framework.TargetInfo { return framework.TargetInfo{Name: "refusing"} }

// refusingNode is a kubelet half that supports no case.
type refusingNode struct{}

func (refusingNode) SupportsNode(*framework.Case, framework.Admitted) (bool, string) {
	return false, "refuses"
}
func (refusingNode) ObserveNode(context.Context, *framework.Case, framework.Admitted) framework.NodeResult {
	return framework.NodeResult{Err: errors.New("refuses")}
}
func (refusingNode) Info() framework.TargetInfo { return framework.TargetInfo{Name: "refusing"} }
func (refusingNode) Close() error               { return nil }

func TestSpreadNotApplicable(t *testing.T) {
	// Both nodes' apiserver supports nothing: framework.Reasons asks it after NotApplicable.
	stub := framework.NewPair(Name, refusingAPI{}, refusingNode{})
	withUserns := &Target{runtime: map[string]bool{string(framework.RuntimeUserNamespaces): true}, pair: stub}
	without := &Target{runtime: map[string]bool{}, pair: stub}
	s := &Spread{pools: [][]*Target{{withUserns}, {without}}, infos: [][]NodeInfo{{{Name: "a"}}, {{Name: "b"}}}}
	userns := &framework.Case{Pod: &corev1.Pod{Spec: corev1.PodSpec{HostUsers: ptrTo(false)}}}
	if why := without.NotApplicable(userns); why == "" {
		t.Fatal("a pod with hostUsers: false is applicable on a node without user namespaces")
	}
	if why := framework.Reasons(s, userns).NotApplicable; why != "" {
		t.Errorf("a pod with hostUsers: false on a cluster one of whose pools has user namespaces: not applicable (%s)", why)
	}
	restart := &framework.Case{Pod: &corev1.Pod{}, After: []framework.Step{{RestartKubelet: true}}}
	if why := framework.Reasons(s, restart).NotApplicable; !strings.HasPrefix(why, "node-control: ") {
		t.Errorf("a kubelet restart on a cluster volperm does not control: %q, want not applicable (node-control)", why)
	}
}
