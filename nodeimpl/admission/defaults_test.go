package admission

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func i64(v int64) *int64 { return &v }

// TestResultPod pins the admitted pod: defaults applied (v1.37 defaults.go), fields dropped, and
// the request left untouched.
func TestResultPod(t *testing.T) {
	unset := corev1.HostPathUnset
	file := corev1.HostPathFile
	tests := []struct {
		name string
		in   corev1.VolumeSource
		req  func(*corev1.Pod) Request
		want corev1.VolumeSource
	}{
		{"secret defaultMode 0644", secret("s", nil), nil, secret("s", i32(0644))},
		{"secret defaultMode kept", secret("s", i32(0400)), nil, secret("s", i32(0400))},
		{"configMap defaultMode 0644", configMap("c"),
			nil, corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "c"}, DefaultMode: i32(0644)}}},
		{"downwardAPI defaultMode 0644, fieldRef apiVersion v1", downwardAPI(), nil,
			corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{DefaultMode: i32(0644), Items: []corev1.DownwardAPIVolumeFile{
				{Path: "name", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}},
			}}}},
		{"projected defaultMode 0644, token expiration one hour",
			projected(corev1.VolumeProjection{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "t"}}),
			func(p *corev1.Pod) Request {
				q := p.DeepCopy() // a pod with a token needs a service account (ValidatePodCreate)
				q.Spec.ServiceAccountName = "default"
				return Request{Pod: q}
			},
			corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{DefaultMode: i32(0644), Sources: []corev1.VolumeProjection{
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "t", ExpirationSeconds: i64(3600)}},
			}}}},
		{"hostPath type nil -> unset", hostPath("/a", nil), nil, hostPath("/a", &unset)},
		{"hostPath type kept", hostPath("/a", &file), nil, hostPath("/a", &file)},
		{"emptyDir mode stays nil", emptyDir(nil), nil, emptyDir(nil)},
		{"emptyDir mode dropped with the gate off", emptyDir(i32(0750)), nil, emptyDir(nil)},
		{"emptyDir mode kept with the gate on", emptyDir(i32(0750)),
			func(p *corev1.Pod) Request { return Request{Pod: p, Gates: modeOn} }, emptyDir(i32(0750))},
		{"emptyDir mode kept on update of a spec using it", emptyDir(i32(0750)),
			func(p *corev1.Pod) Request { return Request{Pod: p, OldPod: pod(vol("v", emptyDir(i32(0700))))} }, emptyDir(i32(0750))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := pod(vol("v", tt.in))
			before := in.DeepCopy()
			req := Request{Pod: in}
			if tt.req != nil {
				req = tt.req(in)
			}
			got := Admit(req)
			if !got.Allowed {
				t.Fatalf("rejected: %q", got.Errors)
			}
			if !reflect.DeepEqual(got.Pod.Spec.Volumes[0].VolumeSource, tt.want) {
				t.Errorf("volume source:\n got  %+v\n want %+v", got.Pod.Spec.Volumes[0].VolumeSource, tt.want)
			}
			if !reflect.DeepEqual(in, before) {
				t.Error("Admit changed the request's pod")
			}
		})
	}
}

func TestValidateFlexVolumePolicy(t *testing.T) {
	tests := []struct {
		name   string
		policy *FlexVolumePolicy
		want   []string
	}{
		{"nil", nil, nil},
		{"empty", &FlexVolumePolicy{}, nil},
		{"drivers, all types", &FlexVolumePolicy{AllowedDrivers: []string{"a/b"}}, nil},
		{"drivers with flexVolume allowed", &FlexVolumePolicy{AllowedVolumeTypes: []string{"emptyDir", "flexVolume"}, AllowedDrivers: []string{"a/b"}}, nil},
		{"drivers with *", &FlexVolumePolicy{AllowedVolumeTypes: []string{"*"}, AllowedDrivers: []string{"a/b"}}, nil},
		{"no drivers, flexVolume not allowed", &FlexVolumePolicy{AllowedVolumeTypes: []string{"emptyDir"}}, nil},
		{"empty driver names", &FlexVolumePolicy{AllowedDrivers: []string{"", "a/b", ""}}, []string{
			"flexVolumePolicy.allowedDrivers[0]: Required value: driver name must be non-empty",
			"flexVolumePolicy.allowedDrivers[2]: Required value: driver name must be non-empty",
		}},
		{"drivers while flexVolume not allowed", &FlexVolumePolicy{AllowedVolumeTypes: []string{"emptyDir", "hostPath"}, AllowedDrivers: []string{"a/b"}}, []string{
			"flexVolumePolicy.allowedDrivers: Forbidden: must be empty when flexVolume is not an allowed volume type",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			diffList(t, "errors", ValidateFlexVolumePolicy(tt.policy), tt.want)
		})
	}
}

// TestSourceTables checks that the one-type tables name every member of the v1 unions exactly
// once and that the allowlist's type names are the v1 JSON names.
func TestSourceTables(t *testing.T) {
	tests := []struct {
		name  string
		union reflect.Type
		srcs  []source
	}{
		{"VolumeSource", reflect.TypeOf(corev1.VolumeSource{}), podSources(&corev1.VolumeSource{})},
		{"PersistentVolumeSource", reflect.TypeOf(corev1.PersistentVolumeSource{}), persistentVolumeSources(&corev1.PersistentVolumeSource{})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			jsonNames := map[string]bool{}
			for i := 0; i < tt.union.NumField(); i++ {
				jsonNames[strings.Split(tt.union.Field(i).Tag.Get("json"), ",")[0]] = true
			}
			seen := map[string]bool{}
			for _, s := range tt.srcs {
				n := apiName(s.name)
				if !jsonNames[n] {
					t.Errorf("table entry %q (API name %q) is not a member of %s", s.name, n, tt.name)
				}
				if seen[n] {
					t.Errorf("table names %q twice", n)
				}
				seen[n] = true
			}
			if len(seen) != len(jsonNames) {
				t.Errorf("table has %d members, %s has %d", len(seen), tt.name, len(jsonNames))
			}
		})
	}
}

// TestValidateUnion pins the one-type rule on every member pair position: the first set member
// is checked, every later one is "may not specify more than 1 volume type".
func TestValidateUnion(t *testing.T) {
	srcs := []source{{"a", true, nil}, {"b", false, nil}, {"c", true, nil}, {"d", true, nil}}
	got := errorTexts(validateUnion(srcs, field.NewPath("x"), "d"))
	want := []string{"x.c: Forbidden: may not specify more than 1 volume type"}
	diffList(t, "errors", got, want)
}
