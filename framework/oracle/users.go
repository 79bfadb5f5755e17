package oracle

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/rule"
)

// KEP-5936's fields (docs/spec.md [dropping.atomic-user], [validation.user], [atomicwriter.owner]):
// defaultUser on secret, configMap, downwardAPI and projected sources, user on their items and on
// projected token, clusterTrustBundle and podCertificate sources.

// Where an owner comes from (rule.UserFrom).
const (
	userFromDefault = "defaultUser"
	userFromItem    = "item"
	userFromToken   = "token"
	// userFromRunAsUser: the pod's FsUser (every container's runAsUser), the owner of a token,
	// clusterTrustBundle or podCertificate file no KEP-5936 field overrides.
	userFromRunAsUser = "runAsUser"
	userFromNone      = "none"
)

// userField is one KEP-5936 field of a pod: its volume's index, its path, a pointer to it,
// where it sits.
type userField struct {
	vol  int
	path string
	ptr  **int64
	from string
}

// userFields lists every KEP-5936 field of pod's volumes, set or not (the fields v1.37
// pkg/api/pod/util.go dropDisabledAtomicWriteVolumeUserFields clears), in the order a JSON
// decoder meets them: volume order, and within a volume the items before defaultUser, as the
// v1 types declare them.
func userFields(vols []corev1.Volume) []userField {
	var out []userField
	var vol int
	add := func(p string, ptr **int64, from string) { out = append(out, userField{vol, p, ptr, from}) }
	keys := func(at string, items []corev1.KeyToPath) {
		for j := range items {
			add(fmt.Sprintf("%s.items[%d].user", at, j), &items[j].User, userFromItem)
		}
	}
	files := func(at string, items []corev1.DownwardAPIVolumeFile) {
		for j := range items {
			add(fmt.Sprintf("%s.items[%d].user", at, j), &items[j].User, userFromItem)
		}
	}
	for i := range vols {
		vol = i
		s := &vols[i].VolumeSource
		at := fmt.Sprintf("spec.volumes[%d]", i)
		switch {
		case s.Secret != nil:
			keys(at+".secret", s.Secret.Items)
			add(at+".secret.defaultUser", &s.Secret.DefaultUser, userFromDefault)
		case s.ConfigMap != nil:
			keys(at+".configMap", s.ConfigMap.Items)
			add(at+".configMap.defaultUser", &s.ConfigMap.DefaultUser, userFromDefault)
		case s.DownwardAPI != nil:
			files(at+".downwardAPI", s.DownwardAPI.Items)
			add(at+".downwardAPI.defaultUser", &s.DownwardAPI.DefaultUser, userFromDefault)
		case s.Projected != nil:
			for j := range s.Projected.Sources {
				src := &s.Projected.Sources[j]
				sat := fmt.Sprintf("%s.projected.sources[%d]", at, j)
				switch {
				case src.Secret != nil:
					keys(sat+".secret", src.Secret.Items)
				case src.DownwardAPI != nil:
					files(sat+".downwardAPI", src.DownwardAPI.Items)
				case src.ConfigMap != nil:
					keys(sat+".configMap", src.ConfigMap.Items)
				case src.ServiceAccountToken != nil:
					add(sat+".serviceAccountToken.user", &src.ServiceAccountToken.User, userFromToken)
				case src.ClusterTrustBundle != nil:
					add(sat+".clusterTrustBundle.user", &src.ClusterTrustBundle.User, userFromToken)
				case src.PodCertificate != nil:
					add(sat+".podCertificate.user", &src.PodCertificate.User, userFromToken)
				}
			}
			add(at+".projected.defaultUser", &s.Projected.DefaultUser, userFromDefault)
		}
	}
	return out
}

// userFieldType is the volume type of a userFields path ("spec.volumes[0].secret.defaultUser").
func userFieldType(p string) string {
	_, rest, _ := strings.Cut(p, "].")
	typ, _, _ := strings.Cut(rest, ".")
	return typ
}

// setUserFields is userFields, only those set.
func setUserFields(vols []corev1.Volume) []userField {
	var out []userField
	for _, f := range userFields(vols) {
		if *f.ptr != nil {
			out = append(out, f)
		}
	}
	return out
}

// userFieldsInUse is v1.37 pkg/api/pod/util.go atomicWriteVolumeUserFieldsInUse.
func userFieldsInUse(old *corev1.Pod) bool {
	return old != nil && len(setUserFields(old.Spec.Volumes)) > 0
}

// userRangeMsg is the text of apimachinery validation.IsValidUserID (InclusiveRangeError).
const userRangeMsg = "must be between 0 and 2147483647, inclusive"

// validateUser is v1.37 validation.go validateUserField: a uid within 0..2147483647.
func validateUser(u *int64, fld *field.Path) field.ErrorList {
	if u != nil && (*u < 0 || *u > maxUserID) {
		return field.ErrorList{field.Invalid(fld, *u, userRangeMsg)}
	}
	return nil
}

// maxUserID is apimachinery's maxUserID (math.MaxInt32).
const maxUserID = 1<<31 - 1

// fileOwner is ResolvesFsUser (v1.37 atomic_writer.go) with the kubelet's gate: the item's user,
// else defaultUser, else none; nil with the gate off.
func fileOwner(gateOn bool, defaultUser, itemUser *int64) *int64 {
	switch {
	case !gateOn:
		return nil
	case itemUser != nil:
		return itemUser
	}
	return defaultUser
}

// ownerFrom is rule.UserFrom for an owner resolved from defaultUser and itemUser.
func ownerFrom(gateOn bool, defaultUser, itemUser *int64, item string) string {
	switch {
	case !gateOn:
		return userFromNone
	case itemUser != nil:
		return item
	case defaultUser != nil:
		return userFromDefault
	}
	return userFromNone
}

// traceOwners records [atomicwriter.owner] for an AtomicWriter volume that carries a KEP-5936
// field or is set up with the kubelet gate on: where each file's owner came from (payload nil:
// a later SetUp that wrote nothing, so no owner changed).
func (k *kubelet) traceOwners(v *volume, payload map[string]fileSpec) {
	on := gateOn(k.gates, framework.GateAtomicWriteVolumeUserFields)
	if k.tr == nil || (!on && len(setUserFields([]corev1.Volume{*v.spec})) == 0) {
		return
	}
	preserve := "none"
	if k.preserve[v.spec.Name] {
		preserve = "field-gate-" + onOff(gateOn(k.gates, framework.GatePreservePermissions))
	}
	conds := []rule.Cond{cond(rule.Type, v.typ), cond(rule.Gate, onOff(on)), k.fsGroupCond(), cond(rule.Preserve, preserve), setUpValue(k.setups)}
	for _, f := range payload {
		if f.from != userFromToken && f.from != userFromRunAsUser {
			conds = append(conds, cond(rule.UserFrom, f.from))
		}
	}
	k.tr.hit(rule.AtomicOwner, conds...)
}
