package admission

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/volperm/volperm/nodeimpl/mutant"
)

// Names in FlexVolumePolicy.AllowedVolumeTypes with a meaning of their own (PSP's FSType).
const (
	flexVolumeType = "flexVolume"
	allVolumeTypes = "*"
)

// ValidateFlexVolumePolicy returns the errors that make p invalid, sorted (seed 004 "Validation
// rules"); nil for a nil or valid policy.
func ValidateFlexVolumePolicy(p *FlexVolumePolicy) []string {
	if p == nil {
		return nil
	}
	var allErrs field.ErrorList
	drivers := field.NewPath("flexVolumePolicy", "allowedDrivers")
	// Seed 004: "Flexvolume driver names must be non-empty."
	for i, d := range p.AllowedDrivers {
		if d == "" && !mutant.On(mutant.AllowEmptyNameOK) {
			at := drivers.Index(i)
			if mutant.On(mutant.BlindAllowEmptyNameIndex) {
				at = drivers.Index(i + 1)
			}
			allErrs = append(allErrs, field.Required(at, "driver name must be non-empty"))
		}
	}
	// Seed 004: "If a PSP disallows to pods to request volumes of type flexVolume then
	// AllowedFlexVolumes must be empty."
	flexAllowed := p.typeAllowed(flexVolumeType)
	if mutant.On(mutant.BlindAllowPolicyWildcardIgnored) {
		flexAllowed = len(p.AllowedVolumeTypes) == 0 || contains(p.AllowedVolumeTypes, flexVolumeType)
	}
	if len(p.AllowedDrivers) > 0 && !flexAllowed {
		allErrs = append(allErrs, field.Forbidden(drivers, "must be empty when flexVolume is not an allowed volume type"))
	}
	return errorTexts(allErrs)
}

// typeAllowed: an empty list or "*" allows every type (PSP `volumes`).
func (p *FlexVolumePolicy) typeAllowed(t string) bool {
	return len(p.AllowedVolumeTypes) == 0 || contains(p.AllowedVolumeTypes, t) ||
		(contains(p.AllowedVolumeTypes, allVolumeTypes) && !mutant.On(mutant.AllowWildcardIgnored))
}

// driverAllowed: seed 004 "Empty AllowedFlexVolumes allows usage of Flexvolumes with any driver",
// otherwise exact match ("comparison of equality will be used instead of comparison of prefixes").
func (p *FlexVolumePolicy) driverAllowed(driver string) bool {
	if len(p.AllowedDrivers) == 0 {
		return !mutant.On(mutant.AllowEmptyDeniesAll)
	}
	if mutant.On(mutant.AllowDriverPrefix) {
		for _, d := range p.AllowedDrivers {
			if strings.HasPrefix(driver, d) {
				return true
			}
		}
	}
	return contains(p.AllowedDrivers, driver)
}

// allowPod is seed 004's admission check of a pod, volume by volume in order.
func allowPod(p *FlexVolumePolicy, pod *corev1.Pod) field.ErrorList {
	var allErrs field.ErrorList
	volumes := field.NewPath("spec", "volumes")
	for i := range pod.Spec.Volumes {
		if i > 0 && mutant.On(mutant.AllowFirstVolumeOnly) {
			break
		}
		v := &pod.Spec.Volumes[i]
		var driver string
		if v.FlexVolume != nil {
			driver = v.FlexVolume.Driver
		}
		idxPath := volumes.Index(i)
		typ := volumeTypeName(podSources(&v.VolumeSource))
		allErrs = append(allErrs, allowSource(p, typ, driver, idxPath, idxPath.Child(flexVolumeType, "driver"))...)
	}
	return allErrs
}

// allowPersistentVolume is seed 004's check of a PersistentVolume (docs/spec.md "flexVolume allowlist": PVs
// too, `spec.flexVolume.driver`). Its source is a field of spec, so the type error names it:
// `spec.flexVolume`.
func allowPersistentVolume(p *FlexVolumePolicy, pv *corev1.PersistentVolume) field.ErrorList {
	if mutant.On(mutant.AllowPVUnchecked) {
		return nil
	}
	var driver string
	if pv.Spec.FlexVolume != nil {
		driver = pv.Spec.FlexVolume.Driver
	}
	spec := field.NewPath("spec")
	typ := volumeTypeName(persistentVolumeSources(&pv.Spec.PersistentVolumeSource))
	if typ == flexVolumeType && mutant.On(mutant.BlindAllowPVDriverUnchecked) {
		if !p.typeAllowed(typ) {
			return field.ErrorList{field.Forbidden(spec.Child(typ), fmt.Sprintf("%s volumes are not allowed by the policy", typ))}
		}
		return nil
	}
	return allowSource(p, typ, driver, spec.Child(typ), spec.Child(flexVolumeType, "driver"))
}

// allowSource checks one volume of type typ: its type, then, for a flexVolume, its driver
// (docs/spec.md "flexVolume allowlist" gives both texts).
func allowSource(p *FlexVolumePolicy, typ, driver string, typePath, driverPath *field.Path) field.ErrorList {
	if !p.typeAllowed(typ) {
		errs := field.ErrorList{field.Forbidden(typePath, fmt.Sprintf("%s volumes are not allowed by the policy", typ))}
		if typ == flexVolumeType && !p.driverAllowed(driver) && mutant.On(mutant.AllowTypeBeforeDriver) {
			errs = append(errs, field.Forbidden(driverPath,
				fmt.Sprintf("driver %q is not in the allowed flexVolume drivers [%s]", driver, strings.Join(p.AllowedDrivers, ", "))))
		}
		return errs
	}
	if (typ == flexVolumeType || mutant.On(mutant.BlindAllowDriverCheckedForEveryType)) && !p.driverAllowed(driver) {
		return field.ErrorList{field.Forbidden(driverPath,
			fmt.Sprintf("driver %q is not in the allowed flexVolume drivers [%s]", driver, strings.Join(p.AllowedDrivers, ", ")))}
	}
	return nil
}

// volumeTypeName is the API (JSON) name of the one set member of a validated source.
func volumeTypeName(srcs []source) string {
	for _, s := range srcs {
		if s.set {
			return apiName(s.name)
		}
	}
	return ""
}

// apiName maps upstream's path spellings in the one-type rule back to the v1 JSON names.
func apiName(pathName string) string {
	switch pathName {
	case "downwarAPI":
		if mutant.On(mutant.BlindAllowDownwardAPITypeName) {
			return pathName
		}
		return "downwardAPI"
	case "cephFS":
		return "cephfs"
	}
	return pathName
}
