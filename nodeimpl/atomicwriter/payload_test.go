package atomicwriter

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func mode(m int32) *int32 { return &m }

func yes() *bool { b := true; return &b }

func ptr[T any](v T) *T { return &v }

func file(data string, m int32) FileProjection { return FileProjection{Data: []byte(data), Mode: m} }

// owned is file(data, m) owned by uid.
func owned(data string, m int32, uid int64) FileProjection {
	return FileProjection{Data: []byte(data), Mode: m, FsUser: &uid}
}

// render lists a payload sorted by path: `path: mode owner "data"` (owner "-" when none).
func render(p map[string]FileProjection) string {
	paths := make([]string, 0, len(p))
	for k := range p {
		paths = append(paths, k)
	}
	sort.Strings(paths)
	var b strings.Builder
	for _, k := range paths {
		owner := "-"
		if u := p[k].FsUser; u != nil {
			owner = strconv.FormatInt(*u, 10)
		}
		fmt.Fprintf(&b, "\n  %s: %04o %s %q", k, p[k].Mode, owner, p[k].Data)
	}
	return b.String()
}

var testPod = &corev1.Pod{
	ObjectMeta: metav1.ObjectMeta{
		Name: "web", Namespace: "prod", UID: "1234-abcd",
		Labels:      map[string]string{"app": "web", "tier": `fr"ont`},
		Annotations: map[string]string{"note": "hi"},
	},
	Spec: corev1.PodSpec{
		Containers: []corev1.Container{{
			Name: "main",
			Resources: corev1.ResourceRequirements{
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m"), corev1.ResourceMemory: resource.MustParse("64Mi"), "hugepages-2Mi": resource.MustParse("4Mi")},
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")},
			},
		}},
		InitContainers: []corev1.Container{{Name: "init"}},
	},
}

var testSources = map[string]map[string]string{
	"secret/creds":   {"user": "admin", "pass": "s3cret"},
	"configmap/conf": {"a.conf": "A", "b.conf": "B"},
	"secret/empty":   {},
}

func TestPayload(t *testing.T) {
	tests := []struct {
		name    string
		src     corev1.VolumeSource
		want    map[string]FileProjection
		wantErr string
	}{
		{
			name: "secret, all keys with defaultMode",
			src:  corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds", DefaultMode: mode(0400)}},
			want: map[string]FileProjection{"user": file("admin", 0400), "pass": file("s3cret", 0400)},
		},
		{
			name: "secret items: item mode beats defaultMode, nested path",
			src: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds", DefaultMode: mode(0644), Items: []corev1.KeyToPath{
				{Key: "user", Path: "u"}, {Key: "pass", Path: "deep/p", Mode: mode(0600)},
			}}},
			want: map[string]FileProjection{"u": file("admin", 0644), "deep/p": file("s3cret", 0600)},
		},
		{
			name: "secret missing key",
			src: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds", DefaultMode: mode(0644), Items: []corev1.KeyToPath{
				{Key: "user", Path: "u"}, {Key: "token", Path: "t"},
			}}},
			wantErr: "references non-existent secret key: token",
		},
		{
			name: "optional secret skips a missing key",
			src: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds", DefaultMode: mode(0644), Optional: yes(), Items: []corev1.KeyToPath{
				{Key: "user", Path: "u"}, {Key: "token", Path: "t"},
			}}},
			want: map[string]FileProjection{"u": file("admin", 0644)},
		},
		{
			name:    "absent secret object fails with the kubelet's NotFound",
			src:     corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "absent", DefaultMode: mode(0644)}},
			wantErr: `secret "absent" not found`,
		},
		{
			name: "absent optional secret object is empty",
			src:  corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "absent", DefaultMode: mode(0644), Optional: ptr(true)}},
			want: map[string]FileProjection{},
		},
		{
			name:    "absent configMap object fails with the kubelet's NotFound",
			src:     corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "absent"}, DefaultMode: mode(0644)}},
			wantErr: `configmap "absent" not found`,
		},
		{
			name: "absent projected sources: every text, optional ones empty",
			src: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{DefaultMode: mode(0644), Sources: []corev1.VolumeProjection{
				{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "gone"}}},
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "gone"}}},
				{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "maybe"}, Optional: ptr(true)}},
			}}},
			wantErr: `[secret "gone" not found, configmap "gone" not found]`,
		},
		{
			name:    "empty secret object, item not optional",
			src:     corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "empty", DefaultMode: mode(0644), Items: []corev1.KeyToPath{{Key: "k", Path: "k"}}}},
			wantErr: "references non-existent secret key: k",
		},
		{
			name:    "secret without defaultMode",
			src:     corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds"}},
			wantErr: "no defaultMode used, not even the default value for it",
		},
		{
			name: "configMap, all keys",
			src:  corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "conf"}, DefaultMode: mode(0644)}},
			want: map[string]FileProjection{"a.conf": file("A", 0644), "b.conf": file("B", 0644)},
		},
		{
			name: "configMap items",
			src: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "conf"}, DefaultMode: mode(0640), Items: []corev1.KeyToPath{
				{Key: "a.conf", Path: "etc/a", Mode: mode(0400)}, {Key: "b.conf", Path: "b"},
			}}},
			want: map[string]FileProjection{"etc/a": file("A", 0400), "b": file("B", 0640)},
		},
		{
			name: "configMap missing key",
			src: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "conf"}, DefaultMode: mode(0644), Items: []corev1.KeyToPath{
				{Key: "c.conf", Path: "c"},
			}}},
			wantErr: "configmap references non-existent config key: c.conf",
		},
		{
			name: "downwardAPI fields and resources",
			src: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{DefaultMode: mode(0644), Items: []corev1.DownwardAPIVolumeFile{
				{Path: "name", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}},
				{Path: "ns", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}, Mode: mode(0400)},
				{Path: "uid", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.uid"}},
				{Path: "meta/labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}},
				{Path: "./annotations", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations"}},
				{Path: "app", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels['app']"}},
				{Path: "cpu", ResourceFieldRef: &corev1.ResourceFieldSelector{ContainerName: "main", Resource: "limits.cpu"}},
				{Path: "cpu-m", ResourceFieldRef: &corev1.ResourceFieldSelector{ContainerName: "main", Resource: "requests.cpu", Divisor: resource.MustParse("1m")}},
				{Path: "mem-mi", ResourceFieldRef: &corev1.ResourceFieldSelector{ContainerName: "main", Resource: "limits.memory", Divisor: resource.MustParse("1Mi")}},
				{Path: "huge", ResourceFieldRef: &corev1.ResourceFieldSelector{ContainerName: "main", Resource: "limits.hugepages-2Mi", Divisor: resource.MustParse("1Mi")}},
				{Path: "init-mem", ResourceFieldRef: &corev1.ResourceFieldSelector{ContainerName: "init", Resource: "requests.memory"}},
			}}},
			want: map[string]FileProjection{
				"name": file("web", 0644), "ns": file("prod", 0400), "uid": file("1234-abcd", 0644),
				"meta/labels": file("app=\"web\"\ntier=\"fr\\\"ont\"", 0644), "annotations": file(`note="hi"`, 0644),
				"app": file("web", 0644), "cpu": file("2", 0644), "cpu-m": file("250", 0644), "mem-mi": file("64", 0644),
				"huge": file("4", 0644), "init-mem": file("0", 0644),
			},
		},
		{
			name: "downwardAPI errors are collected",
			src: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{DefaultMode: mode(0644), Items: []corev1.DownwardAPIVolumeFile{
				{Path: "node", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}},
				{Path: "x", ResourceFieldRef: &corev1.ResourceFieldSelector{ContainerName: "nope", Resource: "limits.cpu"}},
			}}},
			wantErr: "[unsupported fieldPath: spec.nodeName, container nope not found]",
		},
		{
			name: "downwardAPI bad subscript",
			src: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{DefaultMode: mode(0644), Items: []corev1.DownwardAPIVolumeFile{
				{Path: "n", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name['x']"}},
			}}},
			wantErr: `fieldPath "metadata.name['x']" does not support subscript`,
		},
		{
			name: "projected: sources in order, later wins, projected defaultMode",
			src: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{DefaultMode: mode(0440), Sources: []corev1.VolumeProjection{
				{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}, Items: []corev1.KeyToPath{{Key: "user", Path: "same"}, {Key: "pass", Path: "p", Mode: mode(0400)}}}},
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "conf"}, Items: []corev1.KeyToPath{{Key: "a.conf", Path: "same"}}}},
				{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "pod/name", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}},
			}}},
			want: map[string]FileProjection{"same": file("A", 0440), "p": file("s3cret", 0400), "pod/name": file("web", 0440)},
		},
		{
			name: "projected: failures of several sources",
			src: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{DefaultMode: mode(0644), Sources: []corev1.VolumeProjection{
				{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}, Items: []corev1.KeyToPath{{Key: "yyy", Path: "y"}}}},
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}},
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "conf"}, Items: []corev1.KeyToPath{{Key: "zzz", Path: "z"}}}},
			}}},
			wantErr: "[references non-existent secret key: yyy, configmap references non-existent config key: zzz]",
		},
		{
			name: "projected: serviceAccountToken without fsGroup has defaultMode",
			src: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{DefaultMode: mode(0444), Sources: []corev1.VolumeProjection{
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}},
			}}},
			want: map[string]FileProjection{"token": file(FakeServiceAccountToken, 0444)},
		},
		{
			name: "projected: the token beside a configMap and a downwardAPI item (kube-api-access)",
			src: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{DefaultMode: mode(0644), Sources: []corev1.VolumeProjection{
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr[int64](3607)}},
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "conf"}, Items: []corev1.KeyToPath{{Key: "a.conf", Path: "ca.crt"}}}},
				{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}}}},
			}}},
			want: map[string]FileProjection{"token": file(FakeServiceAccountToken, 0644), "ca.crt": file("A", 0644), "namespace": file("prod", 0644)},
		},
		{
			name: "projected: optional missing configMap",
			src: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{DefaultMode: mode(0644), Sources: []corev1.VolumeProjection{
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "absent"}, Optional: yes(), Items: []corev1.KeyToPath{{Key: "k", Path: "k"}}}},
			}}},
			want: map[string]FileProjection{},
		},
		{
			name:    "not an AtomicWriter volume",
			src:     corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}},
			wantErr: `volume "v" is not a secret, configMap, downwardAPI or projected volume`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vol := &corev1.Volume{Name: "v", VolumeSource: tc.src}
			// No case sets defaultUser or user: the KEP-5936 gate changes nothing.
			for _, userFields := range []bool{false, true} {
				got, err := Payload(testPod, vol, testSources, userFields)
				if tc.wantErr != "" {
					if err == nil || err.Error() != tc.wantErr {
						t.Fatalf("gate %v: got error %v, want %q", userFields, err, tc.wantErr)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, tc.want) {
					t.Errorf("gate %v: got %s\nwant %s", userFields, render(got), render(tc.want))
				}
			}
		})
	}
}

// The token's mode follows v1.37 projected.go collectData: defaultMode without fsGroup, 0600 with
// it whatever defaultMode says (kubernetes issue 82573); the other sources keep defaultMode.
func TestTokenPayloadFSGroup(t *testing.T) {
	pod := testPod.DeepCopy()
	src := &corev1.ProjectedVolumeSource{DefaultMode: mode(0444), Sources: []corev1.VolumeProjection{
		{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "run/token"}},
		{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}, Items: []corev1.KeyToPath{{Key: "user", Path: "user"}}}},
	}}
	vol := &corev1.Volume{Name: "v", VolumeSource: corev1.VolumeSource{Projected: src}}
	for _, tc := range []struct {
		name      string
		sc        *corev1.PodSecurityContext
		tokenMode int32
	}{
		{"no securityContext", nil, 0444},
		{"securityContext without fsGroup", &corev1.PodSecurityContext{SupplementalGroups: []int64{2000}}, 0444},
		{"fsGroup 2000", &corev1.PodSecurityContext{FSGroup: ptr[int64](2000)}, 0600},
		{"fsGroup 0", &corev1.PodSecurityContext{FSGroup: ptr[int64](0)}, 0600},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod.Spec.SecurityContext = tc.sc
			got, err := Payload(pod, vol, testSources, false)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]FileProjection{"run/token": file(FakeServiceAccountToken, tc.tokenMode), "user": file("admin", 0444)}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got %s\nwant %s", render(got), render(want))
			}
		})
	}
}

// Written with fsGroup, the token is 0600 in the timestamp directory before the walk: the
// layout and the exact bytes of the fake token.
func TestTokenPayloadWritten(t *testing.T) {
	requireRoot(t)
	pod := testPod.DeepCopy()
	pod.Spec.SecurityContext = &corev1.PodSecurityContext{FSGroup: ptr[int64](2000)}
	vol := &corev1.Volume{Name: "v", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		DefaultMode: mode(0644), Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}}},
	}}}
	got := written(t, pod, vol, false)
	want := []entry{
		{Path: ".", Type: "d", Mode: "0777"},
		{Path: "..TS", Type: "d", Mode: "0755"},
		{Path: "..TS/token", Type: "f", Mode: "0600", Data: FakeServiceAccountToken},
		{Path: "..data", Type: "l", Mode: "0777", Link: "..TS"},
		{Path: "token", Type: "l", Mode: "0777", Link: "..data/token"},
	}
	if diff := diffTrees(want, got); diff != "" {
		t.Errorf("layout:\n%s", diff)
	}
}

// A payload from Payload is what Write publishes: item modes and defaultMode, exactly.
func TestPayloadWritten(t *testing.T) {
	requireRoot(t)
	vol := &corev1.Volume{Name: "v", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName: "creds", DefaultMode: mode(0400), Items: []corev1.KeyToPath{{Key: "user", Path: "user"}, {Key: "pass", Path: "sub/pass", Mode: mode(0640)}},
	}}}
	got := written(t, testPod, vol, false)
	want := []entry{
		{Path: ".", Type: "d", Mode: "0777"},
		{Path: "..TS", Type: "d", Mode: "0755"},
		{Path: "..TS/sub", Type: "d", Mode: "0755"},
		{Path: "..TS/sub/pass", Type: "f", Mode: "0640", Data: "s3cret"},
		{Path: "..TS/user", Type: "f", Mode: "0400", Data: "admin"},
		{Path: "..data", Type: "l", Mode: "0777", Link: "..TS"},
		{Path: "sub", Type: "l", Mode: "0777", Link: "..data/sub"},
		{Path: "user", Type: "l", Mode: "0777", Link: "..data/user"},
	}
	if diff := diffTrees(want, got); diff != "" {
		t.Errorf("layout:\n%s", diff)
	}
}

// written is the tree Write makes in a fresh volume root of Payload(pod, vol, userFields).
func written(t *testing.T, pod *corev1.Pod, vol *corev1.Volume, userFields bool) []entry {
	t.Helper()
	payload, err := Payload(pod, vol, testSources, userFields)
	if err != nil {
		t.Fatal(err)
	}
	root := volumeRoot(t)
	if err := Write(root, payload, nil); err != nil {
		t.Fatal(err)
	}
	return tree(t, root)
}
