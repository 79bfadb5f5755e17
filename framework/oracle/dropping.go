package oracle

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/rule"
)

// dropDisabledFields clears the fields of disabled apiserver gates (v1.37 pkg/api/pod/util.go
// dropDisabledFields) and returns the dropped field paths and the volumes that still carry
// preservePermissions. old is the old pod of an update (nil on create).
func dropDisabledFields(pod, old *corev1.Pod, preserve, oldPreserve []string, apiserver map[string]bool, t *tracer) ([]string, map[string]bool) {
	var dropped []string

	// pod/util.go dropDisabledFields: EmptyDirVolumeMode off clears every emptyDir mode unless
	// emptyDirVolumeModeInUse(old spec): any emptyDir of the old pod had a mode.
	modeOld := oldConds(old, emptyDirModeInUse(old))
	for _, v := range pod.Spec.Volumes {
		if v.EmptyDir != nil && v.EmptyDir.Mode != nil {
			t.hit(rule.DropEmptyDirMode, append(gateConds(apiserver, framework.GateEmptyDirVolumeMode), modeOld)...)
		}
	}
	if !gateOn(apiserver, framework.GateEmptyDirVolumeMode) && !emptyDirModeInUse(old) {
		for i := range pod.Spec.Volumes {
			if ed := pod.Spec.Volumes[i].EmptyDir; ed != nil && ed.Mode != nil {
				if b := rule.BoundaryOf(int64(*ed.Mode), 0, 01777); b == "below" || b == "above" {
					t.hit(rule.DropBeforeValid, cond(rule.Boundary, b))
				}
				ed.Mode = nil
				dropped = append(dropped, fmt.Sprintf("spec.volumes[%d].emptyDir.mode", i))
			}
		}
	}

	// [dropping.atomic-user] pkg/api/pod/util.go dropDisabledAtomicWriteVolumeUserFields: the gate
	// off clears every KEP-5936 field unless atomicWriteVolumeUserFieldsInUse(old spec).
	userOld := oldConds(old, userFieldsInUse(old))
	set := setUserFields(pod.Spec.Volumes)
	for _, f := range set {
		t.hit(rule.DropUser, append(gateConds(apiserver, framework.GateAtomicWriteVolumeUserFields), userOld, cond(rule.Type, userFieldType(f.path)))...)
	}
	if !gateOn(apiserver, framework.GateAtomicWriteVolumeUserFields) && !userFieldsInUse(old) {
		for _, f := range set {
			*f.ptr = nil
			dropped = append(dropped, f.path)
		}
	}

	// docs/spec.md "Field dropping": the PreservePermissions gate follows the same pattern; only
	// secret, configMap, downwardAPI and projected volumes can carry the field (seed 002 "Scope").
	carried := map[string]bool{}
	for _, name := range preserve {
		for _, v := range pod.Spec.Volumes {
			if v.Name == name && atomicWriterKind(&v.VolumeSource) != "" {
				carried[name] = true
			}
		}
	}
	preserveOld := oldConds(old, preserveInUse(old, oldPreserve))
	for _, v := range pod.Spec.Volumes {
		if carried[v.Name] {
			t.hit(rule.DropPreserve, append(gateConds(apiserver, framework.GatePreservePermissions), preserveOld, cond(rule.Type, atomicWriterKind(&v.VolumeSource)))...)
		}
	}
	if !gateOn(apiserver, framework.GatePreservePermissions) && !preserveInUse(old, oldPreserve) {
		for i, v := range pod.Spec.Volumes {
			if carried[v.Name] {
				dropped = append(dropped, fmt.Sprintf("spec.volumes[%d].%s.preservePermissions", i, atomicWriterKind(&v.VolumeSource)))
			}
		}
		carried = map[string]bool{}
	}
	sort.Strings(dropped)
	return dropped, carried
}

// emptyDirModeInUse is v1.37 pkg/api/pod/util.go emptyDirVolumeModeInUse.
func emptyDirModeInUse(old *corev1.Pod) bool {
	if old == nil {
		return false
	}
	for _, v := range old.Spec.Volumes {
		if v.EmptyDir != nil && v.EmptyDir.Mode != nil {
			return true
		}
	}
	return false
}

// preserveInUse reports whether the old pod had preservePermissions on any AtomicWriter volume.
func preserveInUse(old *corev1.Pod, oldPreserve []string) bool {
	if old == nil {
		return false
	}
	for _, name := range oldPreserve {
		for _, v := range old.Spec.Volumes {
			if v.Name == name && atomicWriterKind(&v.VolumeSource) != "" {
				return true
			}
		}
	}
	return false
}

// atomicWriterKind is the API name of an AtomicWriter source ("" for any other volume).
func atomicWriterKind(s *corev1.VolumeSource) string {
	switch {
	case s.Secret != nil:
		return "secret"
	case s.ConfigMap != nil:
		return "configMap"
	case s.DownwardAPI != nil:
		return "downwardAPI"
	case s.Projected != nil:
		return "projected"
	}
	return ""
}

// gateOn reads a gate from a component's gates, falling back to its default.
func gateOn(gates map[string]bool, name string) bool {
	if v, ok := gates[name]; ok {
		return v
	}
	return framework.KnownGates[name]
}
