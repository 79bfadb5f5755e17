package admission

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/nodeimpl/gates"
)

// KEP-5936: defaultUser and user (docs/spec.md [dropping.atomic-user], [validation.user]).

var userOn = gates.Set{gates.AtomicWriteVolumeUserFields: true}

// userText is v1.37 validateUserField's text (IsValidUserID) at path for value v.
func userText(path, v string) string {
	return path + ": Invalid value: " + v + ": must be between 0 and 2147483647, inclusive"
}

func fieldRef(path string, user *int64) corev1.DownwardAPIVolumeFile {
	return corev1.DownwardAPIVolumeFile{Path: path, FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}, User: user}
}

func ref(name string) corev1.LocalObjectReference { return corev1.LocalObjectReference{Name: name} }

// withSA is p with a service account, so that a token projection is valid (ValidatePodCreate).
func withSA(p *corev1.Pod) *corev1.Pod {
	p.Spec.ServiceAccountName = "default"
	return p
}

// everyUserField is a valid pod that sets every kind of KEP-5936 field once (and an emptyDir
// mode, dropped by its own gate), with the paths upstream's dropping clears, sorted.
func everyUserField() (*corev1.Pod, []string) {
	p := withSA(pod(
		vol("s", corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s", DefaultUser: i64(1001),
			Items: []corev1.KeyToPath{{Key: "a", Path: "a"}, {Key: "b", Path: "b", User: i64(1002)}}}}),
		vol("c", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: ref("c"),
			Items: []corev1.KeyToPath{{Key: "a", Path: "a", User: i64(0)}}}}),
		vol("d", corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{DefaultUser: i64(1003),
			Items: []corev1.DownwardAPIVolumeFile{fieldRef("n", i64(1004)), fieldRef("m", nil)}}}),
		vol("p", corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{DefaultUser: i64(1005), Sources: []corev1.VolumeProjection{
			{Secret: &corev1.SecretProjection{LocalObjectReference: ref("s"), Items: []corev1.KeyToPath{{Key: "a", Path: "s", User: i64(1)}}}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: ref("c"), Items: []corev1.KeyToPath{{Key: "a", Path: "c", User: i64(2)}}}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{fieldRef("d", i64(3))}}},
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", User: i64(4)}},
			{ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{Name: ptrTo("b"), Path: "ca.crt", User: i64(5)}},
			{PodCertificate: &corev1.PodCertificateProjection{SignerName: "a.b/c", KeyType: "ED25519", CredentialBundlePath: "cred", User: i64(6)}},
		}}}),
		vol("e", emptyDir(i32(0700))),
	))
	return p, []string{
		"spec.volumes[0].secret.defaultUser",
		"spec.volumes[0].secret.items[1].user",
		"spec.volumes[1].configMap.items[0].user",
		"spec.volumes[2].downwardAPI.defaultUser",
		"spec.volumes[2].downwardAPI.items[0].user",
		"spec.volumes[3].projected.defaultUser",
		"spec.volumes[3].projected.sources[0].secret.items[0].user",
		"spec.volumes[3].projected.sources[1].configMap.items[0].user",
		"spec.volumes[3].projected.sources[2].downwardAPI.items[0].user",
		"spec.volumes[3].projected.sources[3].serviceAccountToken.user",
		"spec.volumes[3].projected.sources[4].clusterTrustBundle.user",
		"spec.volumes[3].projected.sources[5].podCertificate.user",
		"spec.volumes[4].emptyDir.mode",
	}
}

func ptrTo[T any](v T) *T { return &v }

// oldUsing is a stored pod whose only KEP-5936 field is the one set by src.
func oldUsing(src corev1.VolumeSource) *corev1.Pod {
	return withSA(pod(vol("e", emptyDir(nil)), vol("x", src)))
}

// TestDropAtomicWriteVolumeUserFields: v1.37 dropDisabledAtomicWriteVolumeUserFields with
// atomicWriteVolumeUserFieldsInUse over the old pod spec.
func TestDropAtomicWriteVolumeUserFields(t *testing.T) {
	_, all := everyUserField()
	users := all[:len(all)-1]
	mode := all[len(all)-1:]
	tests := []struct {
		name    string
		gates   gates.Set
		old     *corev1.Pod
		dropped []string
		inUse   bool // the admitted pod still carries KEP-5936 fields
	}{
		{"gate off, create: every set field dropped, sorted with the others", nil, nil, all, false},
		{"gate on: kept", userOn, nil, mode, true},
		{"gate off, update of a spec without any: dropped", nil, pod(vol("e", emptyDir(nil))), all, false},
		{"gate off, old pod used emptyDir mode only: users dropped, mode kept", nil, pod(vol("e", emptyDir(i32(0750)))), users, false},
		{"gate off, old secret defaultUser", nil, oldUsing(corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s", DefaultUser: i64(7)}}), mode, true},
		{"gate off, old secret item user", nil, oldUsing(corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s",
			Items: []corev1.KeyToPath{{Key: "k", Path: "k"}, {Key: "l", Path: "l", User: i64(7)}}}}), mode, true},
		{"gate off, old configMap defaultUser", nil, oldUsing(corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: ref("c"), DefaultUser: i64(0)}}), mode, true},
		{"gate off, old configMap item user", nil, oldUsing(corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: ref("c"),
			Items: []corev1.KeyToPath{{Key: "k", Path: "k", User: i64(7)}}}}), mode, true},
		{"gate off, old downwardAPI defaultUser", nil, oldUsing(corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{DefaultUser: i64(7)}}), mode, true},
		{"gate off, old downwardAPI item user", nil, oldUsing(corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{
			Items: []corev1.DownwardAPIVolumeFile{fieldRef("n", i64(7))}}}), mode, true},
		{"gate off, old projected defaultUser", nil, oldUsing(projectedWithUser(i64(7))), mode, true},
		{"gate off, old projected secret item user", nil, oldUsing(projected(corev1.VolumeProjection{Secret: &corev1.SecretProjection{
			LocalObjectReference: ref("s"), Items: []corev1.KeyToPath{{Key: "k", Path: "k", User: i64(7)}}}})), mode, true},
		{"gate off, old projected configMap item user", nil, oldUsing(projected(corev1.VolumeProjection{ConfigMap: &corev1.ConfigMapProjection{
			LocalObjectReference: ref("c"), Items: []corev1.KeyToPath{{Key: "k", Path: "k", User: i64(7)}}}})), mode, true},
		{"gate off, old projected downwardAPI item user", nil, oldUsing(projected(corev1.VolumeProjection{DownwardAPI: &corev1.DownwardAPIProjection{
			Items: []corev1.DownwardAPIVolumeFile{fieldRef("n", i64(7))}}})), mode, true},
		{"gate off, old token user", nil, oldUsing(projected(corev1.VolumeProjection{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{
			Path: "t", User: i64(7)}})), mode, true},
		{"gate off, old clusterTrustBundle user", nil, oldUsing(projected(corev1.VolumeProjection{ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{
			Path: "ca", User: i64(7)}})), mode, true},
		{"gate off, old podCertificate user", nil, oldUsing(projected(corev1.VolumeProjection{PodCertificate: &corev1.PodCertificateProjection{
			KeyPath: "k", User: i64(7)}})), mode, true},
		{"gate off, old pod with the same volumes but no user fields: dropped", nil, func() *corev1.Pod {
			p, _ := everyUserField()
			q := p.DeepCopy()
			dropAtomicWriteVolumeUserFields(q)
			return q
		}(), users, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, _ := everyUserField()
			before := in.DeepCopy()
			got := Admit(Request{Pod: in, OldPod: tt.old, Gates: tt.gates})
			if !got.Allowed {
				t.Fatalf("rejected: %q", got.Errors)
			}
			diffList(t, "Dropped", got.Dropped, tt.dropped)
			if inUse := atomicWriteVolumeUserFieldsInUse(got.Pod); inUse != tt.inUse {
				t.Errorf("admitted pod carries KEP-5936 fields: %v, want %v", inUse, tt.inUse)
			}
			if tt.inUse {
				// Kept means kept as they were: the admitted volumes are the request's, defaulted.
				for i := range before.Spec.Volumes {
					if b, g := userOf(&before.Spec.Volumes[i]), userOf(&got.Pod.Spec.Volumes[i]); !reflect.DeepEqual(b, g) {
						t.Errorf("volume %d users %v, want %v", i, g, b)
					}
				}
			}
			if !reflect.DeepEqual(in, before) {
				t.Error("Admit changed the request's pod")
			}
		})
	}
}

func projectedWithUser(u *int64) corev1.VolumeSource {
	return corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{DefaultUser: u}}
}

// userOf lists the KEP-5936 values of v in field order (nil entries kept).
func userOf(v *corev1.Volume) []*int64 {
	var out []*int64
	keys := func(items []corev1.KeyToPath) {
		for _, it := range items {
			out = append(out, it.User)
		}
	}
	files := func(items []corev1.DownwardAPIVolumeFile) {
		for _, it := range items {
			out = append(out, it.User)
		}
	}
	switch {
	case v.Secret != nil:
		out = append(out, v.Secret.DefaultUser)
		keys(v.Secret.Items)
	case v.ConfigMap != nil:
		out = append(out, v.ConfigMap.DefaultUser)
		keys(v.ConfigMap.Items)
	case v.DownwardAPI != nil:
		out = append(out, v.DownwardAPI.DefaultUser)
		files(v.DownwardAPI.Items)
	case v.Projected != nil:
		out = append(out, v.Projected.DefaultUser)
		for _, s := range v.Projected.Sources {
			switch {
			case s.Secret != nil:
				keys(s.Secret.Items)
			case s.ConfigMap != nil:
				keys(s.ConfigMap.Items)
			case s.DownwardAPI != nil:
				files(s.DownwardAPI.Items)
			case s.ServiceAccountToken != nil:
				out = append(out, s.ServiceAccountToken.User)
			case s.ClusterTrustBundle != nil:
				out = append(out, s.ClusterTrustBundle.User)
			case s.PodCertificate != nil:
				out = append(out, s.PodCertificate.User)
			}
		}
	}
	return out
}

// TestDropUserOnlySetFields: only fields that were set are reported; a pod without any
// reports nothing; dropping comes before validation ([dropping.before-validation]).
func TestDropUserOnlySetFields(t *testing.T) {
	tests := []struct {
		name string
		req  Request
		want want
	}{
		{"no user fields: nothing dropped", Request{Pod: pod(
			vol("s", corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s", Items: []corev1.KeyToPath{{Key: "k", Path: "k"}}}}),
			vol("d", downwardAPI()),
		)}, want{allowed: true}},
		{"gate off: an invalid defaultUser is dropped, then valid", Request{Pod: pod(
			vol("s", corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s", DefaultUser: i64(-1)}}),
		)}, want{allowed: true, dropped: []string{"spec.volumes[0].secret.defaultUser"}}},
		{"gate on: the same pod is rejected", Request{Pod: pod(
			vol("s", corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s", DefaultUser: i64(-1)}}),
		), Gates: userOn}, want{errors: []string{
			`spec.containers[0].volumeMounts[0].name: Not found: "s"`,
			userText("spec.volumes[0].secret.defaultUser", "-1"),
		}}},
		{"gate off, in use: a kept invalid user is validated", Request{
			Pod: pod(vol("s", corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s",
				Items: []corev1.KeyToPath{{Key: "k", Path: "k", User: i64(2147483648)}}}})),
			OldPod: pod(vol("s", corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s", DefaultUser: i64(1)}})),
		}, want{errors: []string{
			`spec.containers[0].volumeMounts[0].name: Not found: "s"`,
			userText("spec.volumes[0].secret.items[0].user", "2147483648"),
		}}},
		{"downwardAPI items are dropped at their item path (not the validation quirk)", Request{Pod: pod(
			vol("d", corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
				fieldRef("a", nil), fieldRef("b", nil), fieldRef("c", i64(-5)),
			}}}),
		)}, want{allowed: true, dropped: []string{"spec.volumes[0].downwardAPI.items[2].user"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Admit(tt.req)
			if got.Allowed != tt.want.allowed {
				t.Errorf("Allowed = %v, want %v", got.Allowed, tt.want.allowed)
			}
			diffList(t, "Errors", got.Errors, tt.want.errors)
			diffList(t, "Dropped", got.Dropped, tt.want.dropped)
		})
	}
}

// TestValidateUser pins v1.37 validateUserField's texts at every path kind (the gate on, so
// nothing is dropped), including the downwardAPI quirk: an item's user is reported at its
// source's path, as its mode is.
func TestValidateUser(t *testing.T) {
	secretDefault := func(u int64) corev1.VolumeSource {
		return corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s", DefaultUser: &u}}
	}
	token := func(u int64) corev1.VolumeSource {
		return projected(
			corev1.VolumeProjection{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: ref("c")}},
			corev1.VolumeProjection{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "t", User: &u}},
		)
	}
	dapiItem := func(u int64) corev1.VolumeSource {
		return corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{fieldRef("n", &u)}}}
	}
	tests := []struct {
		name string
		src  corev1.VolumeSource
		want string // "" = valid
	}{
		// Boundaries (IsValidUserID: 0..2147483647), value in decimal.
		{"secret defaultUser -1", secretDefault(-1), userText("spec.volumes[0].secret.defaultUser", "-1")},
		{"secret defaultUser 0", secretDefault(0), ""},
		{"secret defaultUser 2147483647", secretDefault(2147483647), ""},
		{"secret defaultUser 2147483648", secretDefault(2147483648), userText("spec.volumes[0].secret.defaultUser", "2147483648")},
		{"token user -1", token(-1), userText("spec.volumes[0].projected.sources[1].serviceAccountToken.user", "-1")},
		{"token user 0", token(0), ""},
		{"token user 2147483647", token(2147483647), ""},
		{"token user 2147483648", token(2147483648), userText("spec.volumes[0].projected.sources[1].serviceAccountToken.user", "2147483648")},
		{"downwardAPI item user -1: the source's path", dapiItem(-1), userText("spec.volumes[0].downwardAPI.user", "-1")},
		{"downwardAPI item user 0", dapiItem(0), ""},
		{"downwardAPI item user 2147483647", dapiItem(2147483647), ""},
		{"downwardAPI item user 2147483648: the source's path", dapiItem(2147483648), userText("spec.volumes[0].downwardAPI.user", "2147483648")},

		// Every other path kind.
		{"secret item user", corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s",
			Items: []corev1.KeyToPath{{Key: "a", Path: "a"}, {Key: "b", Path: "b", User: i64(-1)}}}},
			userText("spec.volumes[0].secret.items[1].user", "-1")},
		{"configMap defaultUser", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: ref("c"), DefaultUser: i64(-2)}},
			userText("spec.volumes[0].configMap.defaultUser", "-2")},
		{"configMap item user", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: ref("c"),
			Items: []corev1.KeyToPath{{Key: "a", Path: "a"}, {Key: "b", Path: "b", User: i64(-1)}}}},
			userText("spec.volumes[0].configMap.items[1].user", "-1")},
		{"downwardAPI defaultUser", corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{DefaultUser: i64(-1)}},
			userText("spec.volumes[0].downwardAPI.defaultUser", "-1")},
		{"projected defaultUser", projectedWithUser(i64(-1)), userText("spec.volumes[0].projected.defaultUser", "-1")},
		{"projected secret item user", projected(corev1.VolumeProjection{Secret: &corev1.SecretProjection{LocalObjectReference: ref("s"),
			Items: []corev1.KeyToPath{{Key: "a", Path: "a", User: i64(-1)}}}}),
			userText("spec.volumes[0].projected.sources[0].secret.items[0].user", "-1")},
		{"projected configMap item user", projected(corev1.VolumeProjection{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: ref("c"),
			Items: []corev1.KeyToPath{{Key: "a", Path: "a", User: i64(-1)}}}}),
			userText("spec.volumes[0].projected.sources[0].configMap.items[0].user", "-1")},
		{"projected downwardAPI item user: the source's path", projected(corev1.VolumeProjection{DownwardAPI: &corev1.DownwardAPIProjection{
			Items: []corev1.DownwardAPIVolumeFile{fieldRef("n", i64(-1))}}}),
			userText("spec.volumes[0].projected.sources[0].downwardAPI.user", "-1")},
		{"clusterTrustBundle user", projected(
			corev1.VolumeProjection{ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{Name: ptrTo("b"), Path: "ca", User: i64(-1)}}),
			userText("spec.volumes[0].projected.sources[0].clusterTrustBundle.user", "-1")},
		{"podCertificate user", projected(
			corev1.VolumeProjection{PodCertificate: &corev1.PodCertificateProjection{SignerName: "a.b/c", KeyType: "ED25519", KeyPath: "k", User: i64(-1)}}),
			userText("spec.volumes[0].projected.sources[0].podCertificate.user", "-1")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Admit(Request{Pod: withSA(pod(vol("v", tt.src))), Gates: userOn})
			var wantErrs []string
			if tt.want != "" {
				wantErrs = []string{notFoundV, tt.want}
			}
			diffList(t, "Errors", got.Errors, wantErrs)
			diffList(t, "Dropped", got.Dropped, nil)
			if got.Allowed != (tt.want == "") {
				t.Errorf("Allowed = %v", got.Allowed)
			}
		})
	}
}
