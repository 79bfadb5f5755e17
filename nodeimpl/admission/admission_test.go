package admission

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/nodeimpl/gates"
)

func i32(v int32) *int32 { return &v }

func vol(name string, src corev1.VolumeSource) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: src}
}

func emptyDir(mode *int32) corev1.VolumeSource {
	return corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Mode: mode}}
}

func hostPath(p string, typ *corev1.HostPathType) corev1.VolumeSource {
	return corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: p, Type: typ}}
}

func secret(name string, defaultMode *int32) corev1.VolumeSource {
	return corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: name, DefaultMode: defaultMode}}
}

func configMap(name string) corev1.VolumeSource {
	return corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}}
}

func downwardAPI() corev1.VolumeSource {
	return corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
		{Path: "name", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}},
	}}}
}

func projected(sources ...corev1.VolumeProjection) corev1.VolumeSource {
	return corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: sources}}
}

func flex(driver string) corev1.VolumeSource {
	return corev1.VolumeSource{FlexVolume: &corev1.FlexVolumeSource{Driver: driver}}
}

// pod is what the harness admits (framework Case.Complete): one container mounting every volume.
func pod(vols ...corev1.Volume) *corev1.Pod {
	ctr := corev1.Container{Name: "probe", Image: "volperm/probe:latest"}
	for _, v := range vols {
		ctr.VolumeMounts = append(ctr.VolumeMounts, corev1.VolumeMount{Name: v.Name, MountPath: "/volumes/" + v.Name})
	}
	return &corev1.Pod{Spec: corev1.PodSpec{Volumes: vols, Containers: []corev1.Container{ctr}}}
}

func flexPV(driver string) *corev1.PersistentVolume {
	return &corev1.PersistentVolume{Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{
		FlexVolume: &corev1.FlexPersistentVolumeSource{Driver: driver},
	}}}
}

var (
	modeOn  = gates.Set{gates.EmptyDirVolumeMode: true}
	ppOn    = gates.Set{gates.PreservePermissions: true}
	dirType = corev1.HostPathType("Dir")
)

// Texts the tests pin (the oracle must produce the same).
const (
	notFoundV      = `spec.containers[0].volumeMounts[0].name: Not found: "v"`
	emptyDirMode   = `spec.volumes[0].emptyDir.mode: Invalid value: %s: must be a number between 0 and 01777 (octal), both inclusive`
	fileMode512    = `: Invalid value: 512: must be a number between 0 and 0777 (octal), both inclusive`
	hostPathTypes  = `supported values: "", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket"`
	dnsLabelDetail = `a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`
	policyEmpty    = `flexVolumePolicy.allowedDrivers[%s]: Required value: driver name must be non-empty`
	policyNoFlex   = `flexVolumePolicy.allowedDrivers: Forbidden: must be empty when flexVolume is not an allowed volume type`
)

func modeErr(v string) string { return strings.Replace(emptyDirMode, "%s", v, 1) }

type want struct {
	allowed  bool
	errors   []string
	dropped  []string
	preserve []string
}

func TestAdmit(t *testing.T) {
	tests := []struct {
		name string
		req  Request
		want want
	}{
		// emptyDir mode: validation (v1.37 validateVolumeSource), with the gate on so nothing is dropped.
		{"mode -1 rejected", Request{Pod: pod(vol("v", emptyDir(i32(-1)))), Gates: modeOn},
			want{errors: []string{notFoundV, modeErr("-1")}}},
		{"mode 0 allowed", Request{Pod: pod(vol("v", emptyDir(i32(0)))), Gates: modeOn}, want{allowed: true}},
		{"mode 0777 allowed", Request{Pod: pod(vol("v", emptyDir(i32(0777)))), Gates: modeOn}, want{allowed: true}},
		{"mode 01777 allowed", Request{Pod: pod(vol("v", emptyDir(i32(01777)))), Gates: modeOn}, want{allowed: true}},
		{"mode 01000 allowed", Request{Pod: pod(vol("v", emptyDir(i32(01000)))), Gates: modeOn}, want{allowed: true}},
		{"mode 02000 rejected, printed in decimal", Request{Pod: pod(vol("v", emptyDir(i32(02000)))), Gates: modeOn},
			want{errors: []string{notFoundV, modeErr("1024")}}},
		{"mode nil allowed, nothing dropped with the gate off", Request{Pod: pod(vol("v", emptyDir(nil)))}, want{allowed: true}},

		// emptyDir mode: dropping (v1.37 dropDisabledFields) happens before validation.
		{"gate off: create drops mode", Request{Pod: pod(vol("a", emptyDir(nil)), vol("b", emptyDir(i32(0750))))},
			want{allowed: true, dropped: []string{"spec.volumes[1].emptyDir.mode"}}},
		{"gate off: 1024 dropped, then valid", Request{Pod: pod(vol("v", emptyDir(i32(1024))))},
			want{allowed: true, dropped: []string{"spec.volumes[0].emptyDir.mode"}}},
		{"gate off: update of a spec without mode drops", Request{
			Pod:    pod(vol("v", emptyDir(i32(0750)))),
			OldPod: pod(vol("v", emptyDir(nil))),
		}, want{allowed: true, dropped: []string{"spec.volumes[0].emptyDir.mode"}}},
		{"gate off: update of a spec with mode on any emptyDir keeps a changed mode", Request{
			Pod:    pod(vol("v", emptyDir(i32(0700))), vol("w", emptyDir(i32(0750)))),
			OldPod: pod(vol("v", emptyDir(nil)), vol("w", emptyDir(i32(0777)))),
		}, want{allowed: true}},
		{"gate off: kept mode is validated", Request{
			Pod:    pod(vol("v", emptyDir(i32(1024)))),
			OldPod: pod(vol("v", emptyDir(i32(0750)))),
		}, want{errors: []string{notFoundV, modeErr("1024")}}},
		{"gate on: create keeps mode", Request{Pod: pod(vol("v", emptyDir(i32(0750)))), Gates: modeOn}, want{allowed: true}},

		// secret / configMap / downwardAPI / projected modes (v1.37 fileModeErrorMsg).
		{"secret defaultMode 0777 allowed", Request{Pod: pod(vol("v", secret("s", i32(0777))))}, want{allowed: true}},
		{"secret defaultMode 512 rejected", Request{Pod: pod(vol("v", secret("s", i32(512))))},
			want{errors: []string{notFoundV, "spec.volumes[0].secret.defaultMode" + fileMode512}}},
		{"configMap item mode 512 rejected", Request{Pod: pod(vol("v", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "c"},
			Items:                []corev1.KeyToPath{{Key: "k", Path: "k", Mode: i32(512)}},
		}}))}, want{errors: []string{notFoundV, "spec.volumes[0].configMap.items[0].mode" + fileMode512}}},
		{"downwardAPI item mode names the source, not the item (upstream)", Request{Pod: pod(vol("v", corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{
			Items: []corev1.DownwardAPIVolumeFile{{Path: "n", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}, Mode: i32(512)}},
		}}))}, want{errors: []string{notFoundV, "spec.volumes[0].downwardAPI.mode" + fileMode512}}},
		{"projected defaultMode and item mode", Request{Pod: pod(vol("v", corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			DefaultMode: i32(512),
			Sources: []corev1.VolumeProjection{{Secret: &corev1.SecretProjection{
				LocalObjectReference: corev1.LocalObjectReference{Name: "s"},
				Items:                []corev1.KeyToPath{{Key: "k", Path: "k", Mode: i32(512)}},
			}}},
		}}))}, want{errors: []string{
			notFoundV,
			"spec.volumes[0].projected.defaultMode" + fileMode512,
			"spec.volumes[0].projected.sources[0].secret.items[0].mode" + fileMode512,
		}}},
		{"key path rules", Request{Pod: pod(vol("v", corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: "s",
			Items:      []corev1.KeyToPath{{Key: "a", Path: "/abs"}, {Key: "b", Path: "x/../y"}, {Key: "c", Path: "..d"}, {Path: ""}},
		}}))}, want{errors: []string{
			notFoundV,
			`spec.volumes[0].secret.items[0].path: Invalid value: "/abs": must be a relative path`,
			`spec.volumes[0].secret.items[1].path: Invalid value: "x/../y": must not contain '..'`,
			`spec.volumes[0].secret.items[2].path: Invalid value: "..d": must not start with '..'`,
			`spec.volumes[0].secret.items[3].key: Required value`,
			`spec.volumes[0].secret.items[3].path: Required value`,
		}}},
		{"secret name required", Request{Pod: pod(vol("v", secret("", nil)))},
			want{errors: []string{notFoundV, "spec.volumes[0].secret.secretName: Required value"}}},
		{"projected sources: duplicate paths and two types in one source", Request{Pod: pod(vol("v", projected(
			corev1.VolumeProjection{ConfigMap: &corev1.ConfigMapProjection{
				LocalObjectReference: corev1.LocalObjectReference{Name: "c"},
				Items:                []corev1.KeyToPath{{Key: "k", Path: "p"}},
			}},
			corev1.VolumeProjection{
				Secret: &corev1.SecretProjection{
					LocalObjectReference: corev1.LocalObjectReference{Name: "s"},
					Items:                []corev1.KeyToPath{{Key: "k", Path: "p"}},
				},
				DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{
					{Path: "n", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}},
				}},
			},
		)))}, want{errors: []string{
			notFoundV,
			`spec.volumes[0].projected.sources[1].downwardAPI.fieldRef.fieldPath: Unsupported value: "spec.nodeName": supported values: "metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace", "metadata.uid"`,
			`spec.volumes[0].projected.sources[1]: Forbidden: may not specify more than 1 volume type per source`,
			`spec.volumes[0].projected: Invalid value: "s": conflicting duplicate paths`,
		}}},
		{"serviceAccountToken: defaulted expiration, path checked on the volume's path (upstream)", Request{Pod: pod(vol("v", projected(
			corev1.VolumeProjection{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "../token"}},
		)))}, want{errors: []string{notFoundV, `spec.volumes[0].projected.path: Invalid value: "../token": must not contain '..'`,
			"spec.volumes[0].projected.sources[0].serviceAccountToken: Forbidden: must not be specified when serviceAccountName is not set"}}},
		{"downwardAPI resourceFieldRef needs containerName", Request{Pod: pod(vol("v", corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{
			Items: []corev1.DownwardAPIVolumeFile{{Path: "cpu", ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.cpu"}}},
		}}))}, want{errors: []string{notFoundV, "spec.volumes[0].downwardAPI.resourceFieldRef.containerName: Required value"}}},
		{"downwardAPI label subscript allowed", Request{Pod: pod(vol("v", corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{
			Items: []corev1.DownwardAPIVolumeFile{{Path: "l", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels['app']"}}},
		}}))}, want{allowed: true}},

		// hostPath (v1.37 validateHostPathVolumeSource, validatePathNoBacksteps, validateHostPathType).
		{"hostPath empty path", Request{Pod: pod(vol("v", hostPath("", nil)))},
			want{errors: []string{notFoundV, "spec.volumes[0].hostPath.path: Required value"}}},
		{"hostPath .. element", Request{Pod: pod(vol("v", hostPath("/a/../b", nil)))},
			want{errors: []string{notFoundV, `spec.volumes[0].hostPath.path: Invalid value: "/a/../b": must not contain '..'`}}},
		{"hostPath .. alone", Request{Pod: pod(vol("v", hostPath("..", nil)))},
			want{errors: []string{notFoundV, `spec.volumes[0].hostPath.path: Invalid value: "..": must not contain '..'`}}},
		{"hostPath ..x is not a backstep", Request{Pod: pod(vol("v", hostPath("/a/..x", nil)))}, want{allowed: true}},
		{"hostPath bad type", Request{Pod: pod(vol("v", hostPath("/a", &dirType)))},
			want{errors: []string{notFoundV, `spec.volumes[0].hostPath.type: Unsupported value: "Dir": ` + hostPathTypes}}},

		// flexVolume, names, the one-type rule, volumeMounts.
		{"flexVolume driver required", Request{Pod: pod(vol("v", flex("")))},
			want{errors: []string{notFoundV, "spec.volumes[0].flexVolume.driver: Required value"}}},
		{"flexVolume reserved option namespace", Request{Pod: pod(vol("v", corev1.VolumeSource{FlexVolume: &corev1.FlexVolumeSource{
			Driver: "a/b", Options: map[string]string{"kubernetes.io/x": "1", "example.com/y": "2"},
		}}))}, want{errors: []string{notFoundV, `spec.volumes[0].flexVolume.options[kubernetes.io/x]: Invalid value: "kubernetes.io/x": kubernetes.io and k8s.io namespaces are reserved`}}},
		{"two types in one volume", Request{Pod: pod(vol("v", corev1.VolumeSource{
			EmptyDir: &corev1.EmptyDirVolumeSource{}, HostPath: &corev1.HostPathVolumeSource{Path: "/a"},
		}))}, want{errors: []string{notFoundV, "spec.volumes[0].hostPath: Forbidden: may not specify more than 1 volume type"}}},
		{"downwardAPI second type: upstream's path spelling", Request{Pod: pod(vol("v", corev1.VolumeSource{
			Secret: &corev1.SecretVolumeSource{SecretName: "s"}, DownwardAPI: &corev1.DownwardAPIVolumeSource{},
		}))}, want{errors: []string{notFoundV, "spec.volumes[0].downwarAPI: Forbidden: may not specify more than 1 volume type"}}},
		{"no type: defaulted to an emptyDir (SetDefaults_Volume)", Request{Pod: pod(vol("v", corev1.VolumeSource{}))},
			want{allowed: true}},
		{"bad name", Request{Pod: pod(vol("Bad_Name", emptyDir(nil)))}, want{errors: []string{
			`spec.containers[0].volumeMounts[0].name: Not found: "Bad_Name"`,
			`spec.volumes[0].name: Invalid value: "Bad_Name": ` + dnsLabelDetail,
		}}},
		{"empty name", Request{Pod: pod(vol("", emptyDir(nil)))}, want{errors: []string{
			`spec.containers[0].volumeMounts[0].name: Not found: ""`,
			`spec.containers[0].volumeMounts[0].name: Required value`,
			`spec.volumes[0].name: Required value`,
		}}},
		{"duplicate name", Request{Pod: pod(vol("v", emptyDir(nil)), vol("v", configMap("c")))},
			want{errors: []string{`spec.volumes[1].name: Duplicate value: "v"`}}},
		{"mount of a missing volume", Request{Pod: &corev1.Pod{Spec: corev1.PodSpec{
			Volumes:    []corev1.Volume{vol("v", emptyDir(nil))},
			Containers: []corev1.Container{{Name: "c", VolumeMounts: []corev1.VolumeMount{{Name: "v"}, {Name: "missing"}}}},
		}}}, want{errors: []string{`spec.containers[0].volumeMounts[1].name: Not found: "missing"`}}},
		{"init container mounts are checked too", Request{Pod: &corev1.Pod{Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "i", VolumeMounts: []corev1.VolumeMount{{Name: "missing"}}}},
		}}}, want{errors: []string{`spec.initContainers[0].volumeMounts[0].name: Not found: "missing"`}}},
		{"other volume types accepted unchecked", Request{Pod: pod(vol("v", corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{}}))}, want{allowed: true}},

		// preservePermissions (docs/spec.md "Field dropping", same pattern as emptyDir mode).
		{"preservePermissions gate off: create drops on every type", Request{
			Pod:                 pod(vol("a", secret("s", nil)), vol("b", configMap("c")), vol("c", downwardAPI()), vol("d", projected()), vol("e", emptyDir(nil))),
			PreservePermissions: []string{"a", "b", "c", "d"},
		}, want{allowed: true, dropped: []string{
			"spec.volumes[0].secret.preservePermissions",
			"spec.volumes[1].configMap.preservePermissions",
			"spec.volumes[2].downwardAPI.preservePermissions",
			"spec.volumes[3].projected.preservePermissions",
		}}},
		{"preservePermissions gate on: kept", Request{
			Pod: pod(vol("b", secret("s", nil)), vol("a", configMap("c"))), PreservePermissions: []string{"b", "a"}, Gates: ppOn,
		}, want{allowed: true, preserve: []string{"a", "b"}}},
		{"preservePermissions gate off: kept when the old pod had it on any volume", Request{
			Pod:                    pod(vol("a", secret("s", nil)), vol("b", configMap("c"))),
			OldPod:                 pod(vol("a", secret("s", nil)), vol("b", configMap("c"))),
			PreservePermissions:    []string{"a", "b"},
			OldPreservePermissions: []string{"b"},
		}, want{allowed: true, preserve: []string{"a", "b"}}},
		{"preservePermissions gate off: dropped when the old pod had none", Request{
			Pod:                 pod(vol("a", secret("s", nil))),
			OldPod:              pod(vol("a", secret("s", nil))),
			PreservePermissions: []string{"a"},
		}, want{allowed: true, dropped: []string{"spec.volumes[0].secret.preservePermissions"}}},
		{"preservePermissions only on AtomicWriter volumes of the pod", Request{
			Pod: pod(vol("a", secret("s", nil)), vol("e", emptyDir(nil))), PreservePermissions: []string{"a", "e", "nope"}, Gates: ppOn,
		}, want{allowed: true, preserve: []string{"a"}}},
		{"both gates off: both fields dropped, sorted", Request{
			Pod: pod(vol("a", secret("s", nil)), vol("e", emptyDir(i32(0700)))), PreservePermissions: []string{"a"},
		}, want{allowed: true, dropped: []string{"spec.volumes[0].secret.preservePermissions", "spec.volumes[1].emptyDir.mode"}}},

		// flexVolume allowlist (seed 004).
		{"policy: empty allowlist allows any driver", Request{
			Pod: pod(vol("v", flex("example/nfs"))), FlexPolicy: &FlexVolumePolicy{},
		}, want{allowed: true}},
		{"policy: exact match allowed", Request{
			Pod: pod(vol("v", flex("c/d"))), FlexPolicy: &FlexVolumePolicy{AllowedDrivers: []string{"a/b", "c/d"}},
		}, want{allowed: true}},
		{"policy: driver not listed", Request{
			Pod: pod(vol("e", emptyDir(nil)), vol("v", flex("example/nfs"))), FlexPolicy: &FlexVolumePolicy{AllowedDrivers: []string{"a/b", "c/d"}},
		}, want{errors: []string{`spec.volumes[1].flexVolume.driver: Forbidden: driver "example/nfs" is not in the allowed flexVolume drivers [a/b, c/d]`}}},
		{"policy: a prefix is not a match", Request{
			Pod: pod(vol("v", flex("example/nfs"))), FlexPolicy: &FlexVolumePolicy{AllowedDrivers: []string{"example"}},
		}, want{errors: []string{`spec.volumes[0].flexVolume.driver: Forbidden: driver "example/nfs" is not in the allowed flexVolume drivers [example]`}}},
		{"policy: every violation reported, sorted", Request{
			Pod:        pod(vol("v", flex("x/1")), vol("w", hostPath("/a", nil)), vol("x", flex("x/2"))),
			FlexPolicy: &FlexVolumePolicy{AllowedVolumeTypes: []string{"flexVolume", "emptyDir"}, AllowedDrivers: []string{"a/b"}},
		}, want{errors: []string{
			`spec.volumes[0].flexVolume.driver: Forbidden: driver "x/1" is not in the allowed flexVolume drivers [a/b]`,
			`spec.volumes[1]: Forbidden: hostPath volumes are not allowed by the policy`,
			`spec.volumes[2].flexVolume.driver: Forbidden: driver "x/2" is not in the allowed flexVolume drivers [a/b]`,
		}}},
		{"policy: flexVolume not an allowed type", Request{
			Pod: pod(vol("e", emptyDir(nil)), vol("v", flex("a/b"))), FlexPolicy: &FlexVolumePolicy{AllowedVolumeTypes: []string{"emptyDir"}},
		}, want{errors: []string{`spec.volumes[1]: Forbidden: flexVolume volumes are not allowed by the policy`}}},
		{"policy: * allows every type", Request{
			Pod: pod(vol("h", hostPath("/a", nil)), vol("v", flex("a/b"))), FlexPolicy: &FlexVolumePolicy{AllowedVolumeTypes: []string{"*"}, AllowedDrivers: []string{"a/b"}},
		}, want{allowed: true}},
		{"policy: empty driver name rejects a valid pod", Request{
			Pod: pod(vol("v", flex("a/b"))), FlexPolicy: &FlexVolumePolicy{AllowedDrivers: []string{"a/b", "c/d", ""}},
		}, want{errors: []string{strings.Replace(policyEmpty, "%s", "2", 1)}}},
		{"policy: allowlist while flexVolume not allowed", Request{
			Pod: pod(vol("e", emptyDir(nil))), FlexPolicy: &FlexVolumePolicy{AllowedVolumeTypes: []string{"emptyDir"}, AllowedDrivers: []string{"a/b"}},
		}, want{errors: []string{policyNoFlex}}},
		{"policy errors only, not the pod's", Request{
			Pod:        pod(vol("v", emptyDir(i32(-1)))),
			Gates:      modeOn,
			FlexPolicy: &FlexVolumePolicy{AllowedVolumeTypes: []string{"emptyDir"}, AllowedDrivers: []string{""}},
		}, want{errors: []string{policyNoFlex, strings.Replace(policyEmpty, "%s", "0", 1)}}},
		{"invalid policy: dropping is still reported", Request{
			Pod:        pod(vol("v", emptyDir(i32(0700)))),
			FlexPolicy: &FlexVolumePolicy{AllowedDrivers: []string{""}},
		}, want{errors: []string{strings.Replace(policyEmpty, "%s", "0", 1)}, dropped: []string{"spec.volumes[0].emptyDir.mode"}}},
		{"validation errors stop before the allowlist", Request{
			Pod:        pod(vol("v", flex("x/y")), vol("w", hostPath("", nil))),
			FlexPolicy: &FlexVolumePolicy{AllowedDrivers: []string{"a/b"}},
		}, want{errors: []string{`spec.containers[0].volumeMounts[1].name: Not found: "w"`, "spec.volumes[1].hostPath.path: Required value"}}},

		// PersistentVolumes: paths are spec.<type>... (v1.37 ValidatePersistentVolumeSpec).
		{"PV: driver not listed", Request{PersistentVolume: flexPV("example/nfs"), FlexPolicy: &FlexVolumePolicy{AllowedDrivers: []string{"a/b", "c/d"}}},
			want{errors: []string{`spec.flexVolume.driver: Forbidden: driver "example/nfs" is not in the allowed flexVolume drivers [a/b, c/d]`}}},
		{"PV: listed driver", Request{PersistentVolume: flexPV("a/b"), FlexPolicy: &FlexVolumePolicy{AllowedDrivers: []string{"a/b"}}},
			want{allowed: true}},
		{"PV: flexVolume not an allowed type", Request{PersistentVolume: flexPV("a/b"), FlexPolicy: &FlexVolumePolicy{AllowedVolumeTypes: []string{"nfs"}}},
			want{errors: []string{`spec.flexVolume: Forbidden: flexVolume volumes are not allowed by the policy`}}},
		{"PV: invalid policy", Request{PersistentVolume: flexPV("a/b"), FlexPolicy: &FlexVolumePolicy{AllowedVolumeTypes: []string{"nfs"}, AllowedDrivers: []string{"a/b"}}},
			want{errors: []string{policyNoFlex}}},
		{"PV: driver required", Request{PersistentVolume: flexPV("")},
			want{errors: []string{"spec.flexVolume.driver: Required value"}}},
		{"PV: hostPath path required", Request{PersistentVolume: &corev1.PersistentVolume{Spec: corev1.PersistentVolumeSpec{
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{}},
		}}}, want{errors: []string{"spec.hostPath.path: Required value"}}},
		{"PV: no type", Request{PersistentVolume: &corev1.PersistentVolume{}},
			want{errors: []string{"spec: Required value: must specify a volume type"}}},
		{"PV: two types", Request{PersistentVolume: &corev1.PersistentVolume{Spec: corev1.PersistentVolumeSpec{
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/a"}, NFS: &corev1.NFSVolumeSource{}},
		}}}, want{errors: []string{"spec.nfs: Forbidden: may not specify more than 1 volume type"}}},
		{"PV: flexVolume is never the second type (upstream)", Request{PersistentVolume: &corev1.PersistentVolume{Spec: corev1.PersistentVolumeSpec{
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/a"}, FlexVolume: &corev1.FlexPersistentVolumeSource{}},
		}}}, want{errors: []string{"spec.flexVolume.driver: Required value"}}},

		{"nothing to admit", Request{FlexPolicy: &FlexVolumePolicy{AllowedDrivers: []string{""}}}, want{allowed: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Admit(tt.req)
			if got.Allowed != tt.want.allowed {
				t.Errorf("Allowed = %v, want %v", got.Allowed, tt.want.allowed)
			}
			diffList(t, "Errors", got.Errors, tt.want.errors)
			diffList(t, "Dropped", got.Dropped, tt.want.dropped)
			diffList(t, "PreservePermissions", got.PreservePermissions, tt.want.preserve)
			if (got.Pod == nil) != (tt.req.Pod == nil) {
				t.Errorf("Pod = %v, want a copy exactly when the request has a pod", got.Pod)
			}
			if got.Pod != nil && got.Pod == tt.req.Pod {
				t.Error("Pod is the request's pod, want a deep copy")
			}
		})
	}
}

func diffList(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got  %q\n want %q", what, got, want)
	}
}

// docs/spec.md "Releases": an apiserver of a release without emptyDir.mode warns and admits the
// pod without it (Warn), or rejects the request (Strict); the newest release knows the field.
func TestAdmitRelease(t *testing.T) {
	mode := int32(0750)
	in := pod(corev1.Volume{Name: "a", VolumeSource: emptyDir(&mode)}, corev1.Volume{Name: "b", VolumeSource: emptyDir(nil)}, corev1.Volume{Name: "c", VolumeSource: emptyDir(&mode)})
	warn := Admit(Request{Pod: in, Release: "v1.36"})
	if want := []string{`unknown field "spec.volumes[0].emptyDir.mode"`, `unknown field "spec.volumes[2].emptyDir.mode"`}; !warn.Allowed || !reflect.DeepEqual(warn.Warnings, want) || len(warn.Dropped) > 0 {
		t.Errorf("Warn: allowed %v, warnings %q, dropped %q; want allowed, %q, nothing dropped", warn.Allowed, warn.Warnings, warn.Dropped, want)
	}
	if warn.Pod.Spec.Volumes[0].EmptyDir.Mode != nil || in.Spec.Volumes[0].EmptyDir.Mode == nil {
		t.Error("Warn: the admitted pod must lack the field, the request keep it")
	}
	strict := Admit(Request{Pod: in, Release: "v1.34", Strict: true})
	if want := []string{`Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "spec.volumes[0].emptyDir.mode", unknown field "spec.volumes[2].emptyDir.mode"`}; strict.Allowed || !reflect.DeepEqual(strict.Errors, want) {
		t.Errorf("Strict: allowed %v, errors %q; want %q", strict.Allowed, strict.Errors, want)
	}
	newest := Admit(Request{Pod: in, Release: "v1.37", Strict: true, Gates: gates.Set{gates.EmptyDirVolumeMode: true}})
	if !newest.Allowed || len(newest.Warnings) > 0 || newest.Pod.Spec.Volumes[0].EmptyDir.Mode == nil {
		t.Errorf("v1.37 knows the field: allowed %v, warnings %q", newest.Allowed, newest.Warnings)
	}
}
