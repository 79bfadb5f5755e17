package atomicwriter

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// KEP-5936 file owners (docs/spec.md [atomicwriter.owner], [atomicwriter.token-owner]).

func keys(items ...corev1.KeyToPath) []corev1.KeyToPath { return items }

func ktp(key, path string, user *int64) corev1.KeyToPath {
	return corev1.KeyToPath{Key: key, Path: path, User: user}
}

func nameRef(name string) corev1.LocalObjectReference { return corev1.LocalObjectReference{Name: name} }

// TestPayloadOwners: v1.37 ResolvesFsUser through MakePayload, CollectData and collectData: the
// item's user, else the volume's defaultUser (every key of a secret or configMap without items),
// else none; nothing with the kubelet gate off.
func TestPayloadOwners(t *testing.T) {
	tests := []struct {
		name string
		gate bool
		src  corev1.VolumeSource
		want map[string]FileProjection
	}{
		{
			name: "secret without items: every key gets defaultUser",
			gate: true,
			src:  corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds", DefaultMode: mode(0400), DefaultUser: ptr[int64](1001)}},
			want: map[string]FileProjection{"user": owned("admin", 0400, 1001), "pass": owned("s3cret", 0400, 1001)},
		},
		{
			name: "secret without items, gate off: no owner",
			src:  corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds", DefaultMode: mode(0400), DefaultUser: ptr[int64](1001)}},
			want: map[string]FileProjection{"user": file("admin", 0400), "pass": file("s3cret", 0400)},
		},
		{
			name: "secret items: the item's user wins over defaultUser, the other item gets defaultUser",
			gate: true,
			src: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds", DefaultMode: mode(0440), DefaultUser: ptr[int64](1001),
				Items: keys(ktp("user", "u", nil), ktp("pass", "deep/p", ptr[int64](1002)))}},
			want: map[string]FileProjection{"u": owned("admin", 0440, 1001), "deep/p": owned("s3cret", 0440, 1002)},
		},
		{
			name: "secret items: user 0 is an owner and wins over defaultUser",
			gate: true,
			src: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds", DefaultMode: mode(0400), DefaultUser: ptr[int64](1001),
				Items: keys(ktp("user", "u", ptr[int64](0)))}},
			want: map[string]FileProjection{"u": owned("admin", 0400, 0)},
		},
		{
			name: "secret items without defaultUser: only the item with a user has an owner",
			gate: true,
			src: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds", DefaultMode: mode(0400),
				Items: keys(ktp("user", "u", ptr[int64](1002)), ktp("pass", "p", nil))}},
			want: map[string]FileProjection{"u": owned("admin", 0400, 1002), "p": file("s3cret", 0400)},
		},
		{
			name: "secret items, gate off: no owner",
			src: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds", DefaultMode: mode(0400), DefaultUser: ptr[int64](1001),
				Items: keys(ktp("user", "u", ptr[int64](1002)), ktp("pass", "p", nil))}},
			want: map[string]FileProjection{"u": file("admin", 0400), "p": file("s3cret", 0400)},
		},
		{
			name: "no defaultUser and no user: no owner",
			gate: true,
			src:  corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds", DefaultMode: mode(0400), Items: keys(ktp("user", "u", nil))}},
			want: map[string]FileProjection{"u": file("admin", 0400)},
		},
		{
			name: "configMap without items: every key gets defaultUser",
			gate: true,
			src: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: nameRef("conf"), DefaultMode: mode(0644),
				DefaultUser: ptr[int64](1001)}},
			want: map[string]FileProjection{"a.conf": owned("A", 0644, 1001), "b.conf": owned("B", 0644, 1001)},
		},
		{
			name: "configMap items: user, else defaultUser",
			gate: true,
			src: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: nameRef("conf"), DefaultMode: mode(0644),
				DefaultUser: ptr[int64](1001), Items: keys(ktp("a.conf", "a", ptr[int64](1002)), ktp("b.conf", "b", nil))}},
			want: map[string]FileProjection{"a": owned("A", 0644, 1002), "b": owned("B", 0644, 1001)},
		},
		{
			name: "downwardAPI: user, else defaultUser",
			gate: true,
			src: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{DefaultMode: mode(0644), DefaultUser: ptr[int64](1003),
				Items: []corev1.DownwardAPIVolumeFile{
					{Path: "name", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}, User: ptr[int64](1004)},
					{Path: "ns", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}},
				}}},
			want: map[string]FileProjection{"name": owned("web", 0644, 1004), "ns": owned("prod", 0644, 1003)},
		},
		{
			name: "downwardAPI, gate off: no owner",
			src: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{DefaultMode: mode(0644), DefaultUser: ptr[int64](1003),
				Items: []corev1.DownwardAPIVolumeFile{
					{Path: "name", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}, User: ptr[int64](1004)},
				}}},
			want: map[string]FileProjection{"name": file("web", 0644)},
		},
		{
			name: "projected: the volume's defaultUser for every source, items' and the token's user win",
			gate: true,
			src: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{DefaultMode: mode(0440), DefaultUser: ptr[int64](1005), Sources: []corev1.VolumeProjection{
				{Secret: &corev1.SecretProjection{LocalObjectReference: nameRef("creds"), Items: keys(ktp("user", "u", ptr[int64](1)), ktp("pass", "p", nil))}},
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: nameRef("conf")}},
				{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{
					{Path: "pod/name", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}},
					{Path: "pod/ns", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}, User: ptr[int64](3)},
				}}},
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", User: ptr[int64](4)}},
			}}},
			want: map[string]FileProjection{
				"u": owned("admin", 0440, 1), "p": owned("s3cret", 0440, 1005),
				"a.conf": owned("A", 0440, 1005), "b.conf": owned("B", 0440, 1005),
				"pod/name": owned("web", 0440, 1005), "pod/ns": owned("prod", 0440, 3),
				"token": owned(FakeServiceAccountToken, 0600, 4),
			},
		},
		{
			name: "projected: a token without user gets defaultUser (and 0600)",
			gate: true,
			src: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{DefaultMode: mode(0444), DefaultUser: ptr[int64](1005), Sources: []corev1.VolumeProjection{
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}},
			}}},
			want: map[string]FileProjection{"token": owned(FakeServiceAccountToken, 0600, 1005)},
		},
		{
			name: "projected without defaultUser: only the items with a user",
			gate: true,
			src: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{DefaultMode: mode(0444), Sources: []corev1.VolumeProjection{
				{Secret: &corev1.SecretProjection{LocalObjectReference: nameRef("creds"), Items: keys(ktp("user", "u", ptr[int64](1)), ktp("pass", "p", nil))}},
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}},
			}}},
			want: map[string]FileProjection{"u": owned("admin", 0444, 1), "p": file("s3cret", 0444), "token": file(FakeServiceAccountToken, 0444)},
		},
		{
			name: "projected, gate off: no owner, the token keeps defaultMode",
			src: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{DefaultMode: mode(0444), DefaultUser: ptr[int64](1005), Sources: []corev1.VolumeProjection{
				{Secret: &corev1.SecretProjection{LocalObjectReference: nameRef("creds"), Items: keys(ktp("user", "u", ptr[int64](1)))}},
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", User: ptr[int64](4)}},
			}}},
			want: map[string]FileProjection{"u": file("admin", 0444), "token": file(FakeServiceAccountToken, 0444)},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vol := &corev1.Volume{Name: "v", VolumeSource: tc.src}
			before := vol.DeepCopy()
			got, err := Payload(testPod, vol, testSources, tc.gate)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %s\nwant %s", render(got), render(tc.want))
			}
			// The owners are copies: changing the payload leaves the pod's fields alone.
			for k, fp := range got {
				if fp.FsUser != nil {
					*got[k].FsUser = 424242
				}
			}
			if !reflect.DeepEqual(vol, before) {
				t.Error("the payload's owners alias the volume's fields")
			}
		})
	}
}

// TestTokenOwnerMode: v1.37 projected.go collectData for the token: owner from resolveFsUser
// (user, else defaultUser, gate on), mode 0600 when it has an owner or fsGroup is set.
func TestTokenOwnerMode(t *testing.T) {
	tests := []struct {
		name        string
		gate        bool
		fsGroup     *int64
		user        *int64
		defaultUser *int64
		wantMode    int32
		wantOwner   *int64
	}{
		{"nothing: defaultMode", true, nil, nil, nil, 0444, nil},
		{"user: 0600", true, nil, ptr[int64](1001), nil, 0600, ptr[int64](1001)},
		{"user 0: an owner, 0600", true, nil, ptr[int64](0), nil, 0600, ptr[int64](0)},
		{"defaultUser: 0600", true, nil, nil, ptr[int64](1005), 0600, ptr[int64](1005)},
		{"user wins over defaultUser", true, nil, ptr[int64](1001), ptr[int64](1005), 0600, ptr[int64](1001)},
		{"gate off: no owner, defaultMode", false, nil, ptr[int64](1001), ptr[int64](1005), 0444, nil},
		{"gate off, fsGroup: no owner, 0600", false, ptr[int64](2000), ptr[int64](1001), nil, 0600, nil},
		{"fsGroup and user: 0600, owner", true, ptr[int64](2000), ptr[int64](1001), nil, 0600, ptr[int64](1001)},
		{"fsGroup alone: 0600, no owner", true, ptr[int64](2000), nil, nil, 0600, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := testPod.DeepCopy()
			pod.Spec.SecurityContext = &corev1.PodSecurityContext{FSGroup: tc.fsGroup}
			vol := &corev1.Volume{Name: "v", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				DefaultMode: mode(0444), DefaultUser: tc.defaultUser, Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", User: tc.user}},
				},
			}}}
			got, err := Payload(pod, vol, testSources, tc.gate)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]FileProjection{"token": {Data: []byte(FakeServiceAccountToken), Mode: tc.wantMode, FsUser: tc.wantOwner}}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got %s\nwant %s", render(got), render(want))
			}
		})
	}
}

// ownersPayload is a payload with owners on files at the top, nested, and under a top-level
// directory whose first path in sorted order has no owner.
var ownersPayload = map[string]FileProjection{
	"top":     {Data: []byte("t"), Mode: 0400, FsUser: ptr[int64](1001)},
	"dir/a":   {Data: []byte("a"), Mode: 0644, FsUser: ptr[int64](1002)},
	"dir/b/c": {Data: []byte("c"), Mode: 0600},
	"plain":   {Data: []byte("p"), Mode: 0644},
	"sub/a":   {Data: []byte("sa"), Mode: 0644},
	"sub/b":   {Data: []byte("sb"), Mode: 0640, FsUser: ptr[int64](1003)},
	"zero":    {Data: []byte("z"), Mode: 0444, FsUser: ptr[int64](0)},
}

// TestWriteOwners: v1.37 writePayloadToDir lchown(file, uid, -1) after the chmod, and
// createUserVisibleFiles lchown(link, uid, -1); directories, the timestamp dir and ..data stay
// root's. With the fsGroup walk, owners stay and the group becomes fsGroup.
func TestWriteOwners(t *testing.T) {
	requireRoot(t)
	tests := []struct {
		name     string
		setPerms func(root string) func() error
		want     []entry
	}{
		{
			name:     "no setPerms: the group stays root",
			setPerms: func(string) func() error { return nil },
			want: []entry{
				{Path: ".", Type: "d", Mode: "0777"},
				{Path: "..TS", Type: "d", Mode: "0755"},
				{Path: "..TS/dir", Type: "d", Mode: "0755"},
				{Path: "..TS/dir/a", Type: "f", Mode: "0644", UID: 1002, Data: "a"},
				{Path: "..TS/dir/b", Type: "d", Mode: "0755"},
				{Path: "..TS/dir/b/c", Type: "f", Mode: "0600", Data: "c"},
				{Path: "..TS/plain", Type: "f", Mode: "0644", Data: "p"},
				{Path: "..TS/sub", Type: "d", Mode: "0755"},
				{Path: "..TS/sub/a", Type: "f", Mode: "0644", Data: "sa"},
				{Path: "..TS/sub/b", Type: "f", Mode: "0640", UID: 1003, Data: "sb"},
				{Path: "..TS/top", Type: "f", Mode: "0400", UID: 1001, Data: "t"},
				{Path: "..TS/zero", Type: "f", Mode: "0444", Data: "z"},
				{Path: "..data", Type: "l", Mode: "0777", Link: "..TS"},
				// dir/a comes first in sorted order under dir, sub/a (no owner) under sub.
				{Path: "dir", Type: "l", Mode: "0777", UID: 1002, Link: "..data/dir"},
				{Path: "plain", Type: "l", Mode: "0777", Link: "..data/plain"},
				{Path: "sub", Type: "l", Mode: "0777", Link: "..data/sub"},
				{Path: "top", Type: "l", Mode: "0777", UID: 1001, Link: "..data/top"},
				{Path: "zero", Type: "l", Mode: "0777", Link: "..data/zero"},
			},
		},
		{
			name:     "fsGroup walk, read-only mask: owners kept, group fsGroup",
			setPerms: func(root string) func() error { return walkWith(root, true) },
			want: []entry{
				{Path: ".", Type: "d", Mode: "2777", GID: 2000},
				{Path: "..TS", Type: "d", Mode: "2755", GID: 2000},
				{Path: "..TS/dir", Type: "d", Mode: "2755", GID: 2000},
				{Path: "..TS/dir/a", Type: "f", Mode: "0644", UID: 1002, GID: 2000, Data: "a"},
				{Path: "..TS/dir/b", Type: "d", Mode: "2755", GID: 2000},
				{Path: "..TS/dir/b/c", Type: "f", Mode: "0640", GID: 2000, Data: "c"},
				{Path: "..TS/plain", Type: "f", Mode: "0644", GID: 2000, Data: "p"},
				{Path: "..TS/sub", Type: "d", Mode: "2755", GID: 2000},
				{Path: "..TS/sub/a", Type: "f", Mode: "0644", GID: 2000, Data: "sa"},
				{Path: "..TS/sub/b", Type: "f", Mode: "0640", UID: 1003, GID: 2000, Data: "sb"},
				{Path: "..TS/top", Type: "f", Mode: "0440", UID: 1001, GID: 2000, Data: "t"},
				{Path: "..TS/zero", Type: "f", Mode: "0444", GID: 2000, Data: "z"},
				{Path: "..data", Type: "l", Mode: "0777", GID: 2000, Link: "..TS"},
				{Path: "dir", Type: "l", Mode: "0777", UID: 1002, GID: 2000, Link: "..data/dir"},
				{Path: "plain", Type: "l", Mode: "0777", GID: 2000, Link: "..data/plain"},
				{Path: "sub", Type: "l", Mode: "0777", GID: 2000, Link: "..data/sub"},
				{Path: "top", Type: "l", Mode: "0777", UID: 1001, GID: 2000, Link: "..data/top"},
				{Path: "zero", Type: "l", Mode: "0777", GID: 2000, Link: "..data/zero"},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := volumeRoot(t)
			if err := Write(root, ownersPayload, tc.setPerms(root)); err != nil {
				t.Fatal(err)
			}
			if diff := diffTrees(tc.want, tree(t, root)); diff != "" {
				t.Errorf("layout\n%s", diff)
			}
		})
	}
}

// The owners are written with the files: an unchanged payload writes nothing, whatever owners
// it now carries (v1.37 shouldWritePayload compares the data); a changed payload writes new
// files with their owners, and only links this write creates are chowned.
func TestWriteOwnersUpdate(t *testing.T) {
	requireRoot(t)
	root := volumeRoot(t)
	write := func(p map[string]FileProjection) {
		t.Helper()
		if err := Write(root, p, nil); err != nil {
			t.Fatal(err)
		}
	}
	write(map[string]FileProjection{"a": {Data: []byte("1"), Mode: 0400, FsUser: ptr[int64](1001)}})
	first := []entry{
		{Path: ".", Type: "d", Mode: "0777"},
		{Path: "..TS", Type: "d", Mode: "0755"},
		{Path: "..TS/a", Type: "f", Mode: "0400", UID: 1001, Data: "1"},
		{Path: "..data", Type: "l", Mode: "0777", Link: "..TS"},
		{Path: "a", Type: "l", Mode: "0777", UID: 1001, Link: "..data/a"},
	}
	if diff := diffTrees(first, tree(t, root)); diff != "" {
		t.Fatalf("first write\n%s", diff)
	}
	// Same data without an owner (the kubelet gate turned off), then with another owner.
	write(map[string]FileProjection{"a": {Data: []byte("1"), Mode: 0400}})
	if diff := diffTrees(first, tree(t, root)); diff != "" {
		t.Errorf("unchanged payload, owner gone\n%s", diff)
	}
	write(map[string]FileProjection{"a": {Data: []byte("1"), Mode: 0400, FsUser: ptr[int64](1002)}})
	if diff := diffTrees(first, tree(t, root)); diff != "" {
		t.Errorf("unchanged payload, other owner\n%s", diff)
	}
	// New data: the new file has its new owner, the existing link keeps its owner, a new link
	// gets its file's owner.
	write(map[string]FileProjection{
		"a": {Data: []byte("2"), Mode: 0400, FsUser: ptr[int64](1002)},
		"b": {Data: []byte("3"), Mode: 0400, FsUser: ptr[int64](1003)},
	})
	want := []entry{
		{Path: ".", Type: "d", Mode: "0777"},
		{Path: "..TS", Type: "d", Mode: "0755"},
		{Path: "..TS/a", Type: "f", Mode: "0400", UID: 1002, Data: "2"},
		{Path: "..TS/b", Type: "f", Mode: "0400", UID: 1003, Data: "3"},
		{Path: "..data", Type: "l", Mode: "0777", Link: "..TS"},
		{Path: "a", Type: "l", Mode: "0777", UID: 1001, Link: "..data/a"},
		{Path: "b", Type: "l", Mode: "0777", UID: 1003, Link: "..data/b"},
	}
	if diff := diffTrees(want, tree(t, root)); diff != "" {
		t.Errorf("changed payload\n%s", diff)
	}
}

// A payload from Payload with the gate on is what Write publishes: owners on files and links,
// the token 0600 with its owner.
func TestPayloadOwnersWritten(t *testing.T) {
	requireRoot(t)
	secretVol := &corev1.Volume{Name: "v", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName: "creds", DefaultMode: mode(0400), DefaultUser: ptr[int64](1001),
		Items: keys(ktp("user", "user", nil), ktp("pass", "sub/pass", ptr[int64](1002))),
	}}}
	tokenVol := &corev1.Volume{Name: "v", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		DefaultMode: mode(0644), Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", User: ptr[int64](1001)}}},
	}}}
	tests := []struct {
		name string
		vol  *corev1.Volume
		gate bool
		want []entry
	}{
		{"secret, gate on", secretVol, true, []entry{
			{Path: ".", Type: "d", Mode: "0777"},
			{Path: "..TS", Type: "d", Mode: "0755"},
			{Path: "..TS/sub", Type: "d", Mode: "0755"},
			{Path: "..TS/sub/pass", Type: "f", Mode: "0400", UID: 1002, Data: "s3cret"},
			{Path: "..TS/user", Type: "f", Mode: "0400", UID: 1001, Data: "admin"},
			{Path: "..data", Type: "l", Mode: "0777", Link: "..TS"},
			{Path: "sub", Type: "l", Mode: "0777", UID: 1002, Link: "..data/sub"},
			{Path: "user", Type: "l", Mode: "0777", UID: 1001, Link: "..data/user"},
		}},
		{"secret, gate off", secretVol, false, []entry{
			{Path: ".", Type: "d", Mode: "0777"},
			{Path: "..TS", Type: "d", Mode: "0755"},
			{Path: "..TS/sub", Type: "d", Mode: "0755"},
			{Path: "..TS/sub/pass", Type: "f", Mode: "0400", Data: "s3cret"},
			{Path: "..TS/user", Type: "f", Mode: "0400", Data: "admin"},
			{Path: "..data", Type: "l", Mode: "0777", Link: "..TS"},
			{Path: "sub", Type: "l", Mode: "0777", Link: "..data/sub"},
			{Path: "user", Type: "l", Mode: "0777", Link: "..data/user"},
		}},
		{"token with user, gate on: 0600", tokenVol, true, []entry{
			{Path: ".", Type: "d", Mode: "0777"},
			{Path: "..TS", Type: "d", Mode: "0755"},
			{Path: "..TS/token", Type: "f", Mode: "0600", UID: 1001, Data: FakeServiceAccountToken},
			{Path: "..data", Type: "l", Mode: "0777", Link: "..TS"},
			{Path: "token", Type: "l", Mode: "0777", UID: 1001, Link: "..data/token"},
		}},
		{"token with user, gate off: defaultMode", tokenVol, false, []entry{
			{Path: ".", Type: "d", Mode: "0777"},
			{Path: "..TS", Type: "d", Mode: "0755"},
			{Path: "..TS/token", Type: "f", Mode: "0644", Data: FakeServiceAccountToken},
			{Path: "..data", Type: "l", Mode: "0777", Link: "..TS"},
			{Path: "token", Type: "l", Mode: "0777", Link: "..data/token"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := diffTrees(tc.want, written(t, testPod, tc.vol, tc.gate)); diff != "" {
				t.Errorf("layout:\n%s", diff)
			}
		})
	}
}
