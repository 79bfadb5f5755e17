package admission

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestDownwardAPIFile pins v1.37 validateDownwardAPIVolumeFile's texts (items of downwardAPI
// volumes and of projected downwardAPI sources).
func TestDownwardAPIFile(t *testing.T) {
	ref := func(apiVersion, fieldPath string) *corev1.ObjectFieldSelector {
		return &corev1.ObjectFieldSelector{APIVersion: apiVersion, FieldPath: fieldPath}
	}
	res := func(resourceName, divisor string) *corev1.ResourceFieldSelector {
		r := &corev1.ResourceFieldSelector{ContainerName: "c", Resource: resourceName}
		if divisor != "" {
			r.Divisor = resource.MustParse(divisor)
		}
		return r
	}
	tests := []struct {
		name string
		file corev1.DownwardAPIVolumeFile
		want []string
	}{
		{"metadata.uid", corev1.DownwardAPIVolumeFile{Path: "a", FieldRef: ref("v1", "metadata.uid")}, nil},
		{"apiVersion required", corev1.DownwardAPIVolumeFile{Path: "a", FieldRef: ref("", "metadata.name")},
			[]string{"x.fieldRef.apiVersion: Required value"}},
		{"unsupported apiVersion", corev1.DownwardAPIVolumeFile{Path: "a", FieldRef: ref("v2", "metadata.name")},
			[]string{`x.fieldRef.fieldPath: Invalid value: "metadata.name": error converting fieldPath: unsupported pod version: v2`}},
		{"unknown field", corev1.DownwardAPIVolumeFile{Path: "a", FieldRef: ref("v1", "spec.foo")},
			[]string{`x.fieldRef.fieldPath: Invalid value: "spec.foo": error converting fieldPath: field label not supported: spec.foo`}},
		{"subscript on a plain field", corev1.DownwardAPIVolumeFile{Path: "a", FieldRef: ref("v1", "metadata.name['x']")},
			[]string{`x.fieldRef.fieldPath: Invalid value: "metadata.name['x']": error converting fieldPath: field label does not support subscript: metadata.name['x']`}},
		{"bad label key", corev1.DownwardAPIVolumeFile{Path: "a", FieldRef: ref("v1", "metadata.labels['bad key']")},
			[]string{`x.fieldRef: Invalid value: "bad key": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`}},
		{"unknown resource", corev1.DownwardAPIVolumeFile{Path: "a", ResourceFieldRef: res("limits.gpu", "")},
			[]string{`x.resourceFieldRef.resource: Unsupported value: "limits.gpu": supported values: "limits.cpu", "limits.ephemeral-storage", "limits.memory", "requests.cpu", "requests.ephemeral-storage", "requests.memory"`}},
		{"hugepages resource", corev1.DownwardAPIVolumeFile{Path: "a", ResourceFieldRef: res("limits.hugepages-2Mi", "1Mi")}, nil},
		{"cpu divisor", corev1.DownwardAPIVolumeFile{Path: "a", ResourceFieldRef: res("limits.cpu", "1Mi")},
			[]string{`x.resourceFieldRef.divisor: Invalid value: "limits.cpu": only divisor's values 1m and 1 are supported with the cpu resource`}},
		{"memory divisor", corev1.DownwardAPIVolumeFile{Path: "a", ResourceFieldRef: res("requests.memory", "2")},
			[]string{`x.resourceFieldRef.divisor: Invalid value: "requests.memory": only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are supported with the memory resource`}},
		{"hugepages divisor", corev1.DownwardAPIVolumeFile{Path: "a", ResourceFieldRef: res("requests.hugepages-2Mi", "3")},
			[]string{`x.resourceFieldRef.divisor: Invalid value: "requests.hugepages-2Mi": only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are supported with the hugepages resource`}},
		{"both refs", corev1.DownwardAPIVolumeFile{Path: "a", FieldRef: ref("v1", "metadata.name"), ResourceFieldRef: res("limits.cpu", "")},
			[]string{`x: Invalid value: "resource": fieldRef and resourceFieldRef can not be specified simultaneously`}},
		{"no ref", corev1.DownwardAPIVolumeFile{Path: "a"},
			[]string{"x: Required value: one of fieldRef and resourceFieldRef is required"}},
		{"bad user", corev1.DownwardAPIVolumeFile{Path: "a", FieldRef: ref("v1", "metadata.name"), User: i64(-1)},
			[]string{"x.user: Invalid value: -1: must be between 0 and 2147483647, inclusive"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			diffList(t, "errors", errorTexts(validateDownwardAPIFile(&tt.file, field.NewPath("x"))), tt.want)
		})
	}
}

// TestSourceDetails pins the remaining per-source texts of v1.37 validation.go.
func TestSourceDetails(t *testing.T) {
	neg := resource.MustParse("-1Mi")
	tests := []struct {
		name string
		src  corev1.VolumeSource
		want []string
	}{
		{"emptyDir negative sizeLimit", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: &neg}},
			[]string{"v.emptyDir.sizeLimit: Forbidden: SizeLimit field must be a valid resource quantity"}},
		{"secret bad defaultUser", corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s", DefaultUser: i64(-1)}},
			[]string{"v.secret.defaultUser: Invalid value: -1: must be between 0 and 2147483647, inclusive"}},
		{"configMap name required", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{}},
			[]string{"v.configMap.name: Required value"}},
		{"token expiration bounds and missing path", projected(
			corev1.VolumeProjection{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: i64(599)}},
			corev1.VolumeProjection{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: i64(1<<32 + 1), Path: "t"}},
		), []string{
			"v.projected.path: Required value",
			"v.projected.sources[0].serviceAccountToken.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes",
			"v.projected.sources[1].serviceAccountToken.expirationSeconds: Invalid value: 4294967297: may not specify a duration larger than 2^32 seconds",
		}},
		{"token expiration required (not defaulted here)", projected(
			corev1.VolumeProjection{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "t"}},
		), []string{"v.projected.sources[0].serviceAccountToken.expirationSeconds: Required value"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			diffList(t, "errors", errorTexts(validateVolumeSource(&tt.src, field.NewPath("v"))), tt.want)
		})
	}
}
