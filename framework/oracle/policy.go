package oracle

import (
	"fmt"
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/rule"
)

// flexVolumeType is the allowlist's name for flexVolume (PSP `volumes`, seed 004).
const flexVolumeType = "flexVolume"

// policyErrors validates the policy itself (seed 004 "Validation rules"): driver names
// non-empty; an allowlist only when flexVolume is an allowed type. An invalid policy rejects
// every request made under it.
func policyErrors(p *framework.FlexVolumePolicy) field.ErrorList {
	var all field.ErrorList
	drivers := field.NewPath("flexVolumePolicy", "allowedDrivers")
	for i, d := range p.AllowedDrivers {
		if d == "" {
			all = append(all, field.Required(drivers.Index(i), "driver name must be non-empty"))
		}
	}
	if len(p.AllowedDrivers) > 0 && len(p.AllowedVolumeTypes) > 0 && !contains(p.AllowedVolumeTypes, flexVolumeType) && !contains(p.AllowedVolumeTypes, "*") {
		all = append(all, field.Forbidden(drivers, "must be empty when flexVolume is not an allowed volume type"))
	}
	return all
}

// podPolicyErrors checks every volume of pod in order (docs/spec.md "flexVolume allowlist").
func podPolicyErrors(p *framework.FlexVolumePolicy, pod *corev1.Pod, t *tracer) field.ErrorList {
	if errs := policyErrors(p); len(errs) > 0 {
		t.hit(rule.AllowPolicy, cond(rule.Outcome, "error"))
		return errs
	}
	t.hit(rule.AllowPolicy, cond(rule.Outcome, "ok"))
	var all field.ErrorList
	for i, v := range pod.Spec.Volumes {
		var driver *string
		if v.FlexVolume != nil {
			driver = &v.FlexVolume.Driver
		}
		at := field.NewPath("spec", "volumes").Index(i)
		all = append(all, volumePolicyErrors(p, at, at.Child(flexVolumeType, "driver"), typeName(&v.VolumeSource), driver, "pod", t)...)
	}
	return all
}

// pvPolicyErrors checks a PersistentVolume: the same words at spec.<type>.
func pvPolicyErrors(p *framework.FlexVolumePolicy, pv *corev1.PersistentVolume, tr *tracer) field.ErrorList {
	if errs := policyErrors(p); len(errs) > 0 {
		tr.hit(rule.AllowPolicy, cond(rule.Outcome, "error"))
		return errs
	}
	tr.hit(rule.AllowPolicy, cond(rule.Outcome, "ok"))
	t := pvTypeName(&pv.Spec.PersistentVolumeSource)
	var driver *string
	if pv.Spec.FlexVolume != nil {
		driver = &pv.Spec.FlexVolume.Driver
	}
	at := field.NewPath("spec", t)
	return volumePolicyErrors(p, at, at.Child("driver"), t, driver, "persistentVolume", tr)
}

// volumePolicyErrors: a type not allowed is forbidden (and its driver is not checked further);
// an allowed flexVolume must name a listed driver, exact match (seed 004 "Proposed changes").
func volumePolicyErrors(p *framework.FlexVolumePolicy, at, driverAt *field.Path, typ string, driver *string, object string, t *tracer) field.ErrorList {
	if len(p.AllowedVolumeTypes) > 0 && !contains(p.AllowedVolumeTypes, typ) && !contains(p.AllowedVolumeTypes, "*") {
		t.hit(rule.AllowType, cond(rule.Outcome, "error"), cond(rule.Object, object))
		return field.ErrorList{field.Forbidden(at, typ+" volumes are not allowed by the policy")}
	}
	t.hit(rule.AllowType, cond(rule.Outcome, "ok"), cond(rule.Object, object))
	if driver == nil {
		return nil
	}
	if len(p.AllowedDrivers) == 0 || contains(p.AllowedDrivers, *driver) {
		t.hit(rule.AllowDriver, cond(rule.Outcome, "ok"), cond(rule.Object, object))
		return nil
	}
	t.hit(rule.AllowDriver, cond(rule.Outcome, "error"), cond(rule.Object, object))
	msg := fmt.Sprintf("driver %q is not in the allowed flexVolume drivers [%s]", *driver, strings.Join(p.AllowedDrivers, ", "))
	return field.ErrorList{field.Forbidden(driverAt, msg)}
}

// pvTypeName is the API (JSON) name of the first source set on a PersistentVolume, "" if none.
func pvTypeName(s *corev1.PersistentVolumeSource) string {
	v := reflect.ValueOf(s).Elem()
	for i := 0; i < v.NumField(); i++ {
		if f := v.Field(i); f.Kind() == reflect.Pointer && !f.IsNil() {
			name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
			return name
		}
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
