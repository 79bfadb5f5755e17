package oracle

import (
	"path"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/volperm/volperm/framework/rule"
)

// Upstream messages (v1.37 pkg/apis/core/validation/validation.go fileModeErrorMsg, emptyDirModeErrorMsg).
const (
	fileModeErrorMsg     = "must be a number between 0 and 0777 (octal), both inclusive"
	emptyDirModeErrorMsg = "must be a number between 0 and 01777 (octal), both inclusive"
)

// validatePod is the volume part of v1.37 ValidatePodCreate: ValidateVolumes, then every
// container's ValidateVolumeMounts against the volumes that validated.
func validatePod(pod *corev1.Pod) field.ErrorList {
	spec := field.NewPath("spec")
	valid, errs := validateVolumes(pod.Spec.Volumes, spec.Child("volumes"))
	for i := range pod.Spec.InitContainers {
		errs = append(errs, validateVolumeMounts(&pod.Spec.InitContainers[i], valid, spec.Child("initContainers").Index(i).Child("volumeMounts"))...)
	}
	for i := range pod.Spec.Containers {
		errs = append(errs, validateVolumeMounts(&pod.Spec.Containers[i], valid, spec.Child("containers").Index(i).Child("volumeMounts"))...)
	}
	// ValidatePodCreate, pods only: a projected serviceAccountToken needs a serviceAccountName.
	if pod.Spec.ServiceAccountName == "" {
		for vi, v := range pod.Spec.Volumes {
			if v.Projected == nil {
				continue
			}
			for si, src := range v.Projected.Sources {
				if src.ServiceAccountToken != nil {
					at := spec.Child("volumes").Index(vi).Child("projected", "sources").Index(si).Child("serviceAccountToken")
					errs = append(errs, field.Forbidden(at, "must not be specified when serviceAccountName is not set"))
				}
			}
		}
	}
	return errs
}

// validateVolumes is v1.37 validation.go ValidateVolumes: source, name (DNS-1123 label),
// duplicates. Only volumes without errors are returned as valid (mounts naming the others are
// "Not found").
func validateVolumes(vols []corev1.Volume, fld *field.Path) (sets.Set[string], field.ErrorList) {
	var all field.ErrorList
	names := sets.New[string]()
	for i, v := range vols {
		idx := fld.Index(i)
		namePath := idx.Child("name")
		el := validateVolumeSource(&v.VolumeSource, idx)
		if v.Name == "" {
			el = append(el, field.Required(namePath, ""))
		} else {
			// validation.go ValidateDNS1123Label.
			for _, msg := range validation.IsDNS1123Label(v.Name) {
				el = append(el, field.Invalid(namePath, v.Name, msg))
			}
		}
		if names.Has(v.Name) {
			el = append(el, field.Duplicate(namePath, v.Name))
		}
		if len(el) == 0 {
			names.Insert(v.Name)
		} else {
			all = append(all, el...)
		}
	}
	return names, all
}

// validateVolumeSource is v1.37 validation.go validateVolumeSource for the sources volperm
// models; other sources only count towards "exactly one".
func validateVolumeSource(s *corev1.VolumeSource, fld *field.Path) field.ErrorList {
	var all field.ErrorList
	n := 0
	for _, k := range volumeKinds {
		if !k.set(s) {
			continue
		}
		if n > 0 {
			// validateVolumeSource: every source after the first.
			all = append(all, field.Forbidden(fld.Child(k.child), "may not specify more than 1 volume type"))
			continue
		}
		n++
		switch k.api {
		case "emptyDir":
			all = append(all, validateEmptyDir(s.EmptyDir, fld.Child("emptyDir"))...)
		case "hostPath":
			all = append(all, validateHostPath(s.HostPath, fld.Child("hostPath"))...)
		case "secret":
			all = append(all, validateSecret(s.Secret, fld.Child("secret"))...)
		case "configMap":
			all = append(all, validateConfigMap(s.ConfigMap, fld.Child("configMap"))...)
		case "downwardAPI":
			all = append(all, validateDownwardAPI(s.DownwardAPI, fld.Child("downwardAPI"))...)
		case "projected":
			all = append(all, validateProjected(s.Projected, fld.Child("projected"))...)
		case "flexVolume":
			all = append(all, validateFlexDriver(s.FlexVolume.Driver, fld.Child("flexVolume"))...)
		case "image":
			all = append(all, validateImage(s.Image, fld.Child("image"))...)
		}
	}
	return all
}

// validateEmptyDir: validateVolumeSource's emptyDir branch (sizeLimit, KEP-5502 mode range,
// independent of the gate).
func validateEmptyDir(ed *corev1.EmptyDirVolumeSource, fld *field.Path) field.ErrorList {
	var all field.ErrorList
	if ed.SizeLimit != nil && ed.SizeLimit.Cmp(resource.Quantity{}) < 0 {
		all = append(all, field.Forbidden(fld.Child("sizeLimit"), "SizeLimit field must be a valid resource quantity"))
	}
	if ed.Mode != nil && (*ed.Mode > 01777 || *ed.Mode < 0) {
		all = append(all, field.Invalid(fld.Child("mode"), *ed.Mode, emptyDirModeErrorMsg))
	}
	return all
}

// supportedHostPathTypes is v1.37 validation.go supportedHostPathTypes, sorted as sets.List does.
var supportedHostPathTypes = []corev1.HostPathType{
	corev1.HostPathUnset, corev1.HostPathBlockDev, corev1.HostPathCharDev, corev1.HostPathDirectory,
	corev1.HostPathDirectoryOrCreate, corev1.HostPathFile, corev1.HostPathFileOrCreate, corev1.HostPathSocket,
}

// validateHostPath is v1.37 validation.go validateHostPathVolumeSource.
func validateHostPath(hp *corev1.HostPathVolumeSource, fld *field.Path) field.ErrorList {
	if hp.Path == "" {
		return field.ErrorList{field.Required(fld.Child("path"), "")}
	}
	all := validatePathNoBacksteps(hp.Path, fld.Child("path"))
	if hp.Type != nil && !hostPathTypeSupported(*hp.Type) {
		// validateHostPathType: field.NotSupported with the sorted set.
		all = append(all, field.NotSupported(fld.Child("type"), string(*hp.Type), supportedHostPathTypes))
	}
	return all
}

func hostPathTypeSupported(t corev1.HostPathType) bool {
	for _, s := range supportedHostPathTypes {
		if s == t {
			return true
		}
	}
	return false
}

// validatePathNoBacksteps is v1.37 validation.go validatePathNoBacksteps: one error for any ".." element.
func validatePathNoBacksteps(p string, fld *field.Path) field.ErrorList {
	for _, item := range strings.Split(filepath.ToSlash(p), "/") {
		if item == ".." {
			return field.ErrorList{field.Invalid(fld, p, "must not contain '..'")}
		}
	}
	return nil
}

// validateLocalNonReservedPath is v1.37 validation.go ValidateLocalNonReservedPath
// (validateLocalDescendingPath + "must not start with '..'").
func validateLocalNonReservedPath(p string, fld *field.Path) field.ErrorList {
	var all field.ErrorList
	if path.IsAbs(p) {
		all = append(all, field.Invalid(fld, p, "must be a relative path"))
	}
	all = append(all, validatePathNoBacksteps(p, fld)...)
	if strings.HasPrefix(p, "..") && !strings.HasPrefix(p, "../") {
		all = append(all, field.Invalid(fld, p, "must not start with '..'"))
	}
	return all
}

// validateFileMode: the defaultMode / item mode range check of the AtomicWriter sources.
func validateFileMode(m *int32, fld *field.Path) field.ErrorList {
	if m != nil && (*m > 0777 || *m < 0) {
		return field.ErrorList{field.Invalid(fld, *m, fileModeErrorMsg)}
	}
	return nil
}

// validateKeyToPath is v1.37 validation.go validateKeyToPath.
func validateKeyToPath(kp *corev1.KeyToPath, fld *field.Path) field.ErrorList {
	var all field.ErrorList
	if kp.Key == "" {
		all = append(all, field.Required(fld.Child("key"), ""))
	}
	if kp.Path == "" {
		all = append(all, field.Required(fld.Child("path"), ""))
	}
	all = append(all, validateLocalNonReservedPath(kp.Path, fld.Child("path"))...)
	all = append(all, validateFileMode(kp.Mode, fld.Child("mode"))...)
	return append(all, validateUser(kp.User, fld.Child("user"))...)
}

// validateSecret is v1.37 validation.go validateSecretVolumeSource.
func validateSecret(s *corev1.SecretVolumeSource, fld *field.Path) field.ErrorList {
	var all field.ErrorList
	if s.SecretName == "" {
		all = append(all, field.Required(fld.Child("secretName"), ""))
	}
	all = append(all, validateFileMode(s.DefaultMode, fld.Child("defaultMode"))...)
	all = append(all, validateUser(s.DefaultUser, fld.Child("defaultUser"))...)
	for i := range s.Items {
		all = append(all, validateKeyToPath(&s.Items[i], fld.Child("items").Index(i))...)
	}
	return all
}

// validateConfigMap is v1.37 validation.go validateConfigMapVolumeSource.
func validateConfigMap(s *corev1.ConfigMapVolumeSource, fld *field.Path) field.ErrorList {
	var all field.ErrorList
	if s.Name == "" {
		all = append(all, field.Required(fld.Child("name"), ""))
	}
	all = append(all, validateFileMode(s.DefaultMode, fld.Child("defaultMode"))...)
	all = append(all, validateUser(s.DefaultUser, fld.Child("defaultUser"))...)
	for i := range s.Items {
		all = append(all, validateKeyToPath(&s.Items[i], fld.Child("items").Index(i))...)
	}
	return all
}

// validateDownwardAPI is v1.37 validation.go validateDownwardAPIVolumeSource; items are
// validated at the source's path, not items[i], as upstream does.
func validateDownwardAPI(s *corev1.DownwardAPIVolumeSource, fld *field.Path) field.ErrorList {
	all := validateFileMode(s.DefaultMode, fld.Child("defaultMode"))
	all = append(all, validateUser(s.DefaultUser, fld.Child("defaultUser"))...)
	for i := range s.Items {
		all = append(all, validateDownwardAPIFile(&s.Items[i], fld)...)
	}
	return all
}

// validateDownwardAPIFile is v1.37 validation.go validateDownwardAPIVolumeFile (the field
// selectors' own contents are outside volperm's model).
func validateDownwardAPIFile(f *corev1.DownwardAPIVolumeFile, fld *field.Path) field.ErrorList {
	var all field.ErrorList
	if f.Path == "" {
		all = append(all, field.Required(fld.Child("path"), ""))
	}
	all = append(all, validateLocalNonReservedPath(f.Path, fld.Child("path"))...)
	switch {
	case f.FieldRef != nil && f.ResourceFieldRef != nil:
		all = append(all, field.Invalid(fld, "resource", "fieldRef and resourceFieldRef can not be specified simultaneously"))
	case f.FieldRef == nil && f.ResourceFieldRef == nil:
		all = append(all, field.Required(fld, "one of fieldRef and resourceFieldRef is required"))
	}
	all = append(all, validateFileMode(f.Mode, fld.Child("mode"))...)
	return append(all, validateUser(f.User, fld.Child("user"))...)
}

// validateProjected is v1.37 validation.go validateProjectedVolumeSource + validateProjectionSources.
func validateProjected(p *corev1.ProjectedVolumeSource, fld *field.Path) field.ErrorList {
	all := validateFileMode(p.DefaultMode, fld.Child("defaultMode"))
	all = append(all, validateUser(p.DefaultUser, fld.Child("defaultUser"))...)
	paths := sets.New[string]()
	// duplicate: "conflicting duplicate paths", reported at the projected path with the source's name.
	duplicate := func(p2, name string) {
		if p2 == "" {
			return
		}
		if paths.Has(p2) {
			all = append(all, field.Invalid(fld, name, "conflicting duplicate paths"))
			return
		}
		paths.Insert(p2)
	}
	for i, src := range p.Sources {
		n := 0
		srcPath := fld.Child("sources").Index(i)
		if s := src.Secret; s != nil {
			n++
			pp := srcPath.Child("secret")
			if s.Name == "" {
				all = append(all, field.Required(pp.Child("name"), ""))
			}
			for j := range s.Items {
				all = append(all, validateKeyToPath(&s.Items[j], pp.Child("items").Index(j))...)
				duplicate(s.Items[j].Path, s.Name)
			}
		}
		if s := src.ConfigMap; s != nil {
			n++
			pp := srcPath.Child("configMap")
			if s.Name == "" {
				all = append(all, field.Required(pp.Child("name"), ""))
			}
			for j := range s.Items {
				all = append(all, validateKeyToPath(&s.Items[j], pp.Child("items").Index(j))...)
				duplicate(s.Items[j].Path, s.Name)
			}
		}
		if s := src.DownwardAPI; s != nil {
			n++
			pp := srcPath.Child("downwardAPI")
			for j := range s.Items {
				all = append(all, validateDownwardAPIFile(&s.Items[j], pp)...)
				duplicate(s.Items[j].Path, s.Items[j].Path)
			}
		}
		if t := src.ServiceAccountToken; t != nil {
			n++
			pp := srcPath.Child("serviceAccountToken")
			if exp := *t.ExpirationSeconds; exp < 10*60 {
				all = append(all, field.Invalid(pp.Child("expirationSeconds"), exp, "may not specify a duration less than 10 minutes"))
			} else if exp > 1<<32 {
				all = append(all, field.Invalid(pp.Child("expirationSeconds"), exp, "may not specify a duration larger than 2^32 seconds"))
			}
			if t.Path == "" {
				all = append(all, field.Required(fld.Child("path"), ""))
			} else {
				all = append(all, validateLocalNonReservedPath(t.Path, fld.Child("path"))...)
			}
			all = append(all, validateUser(t.User, pp.Child("user"))...)
			duplicate(t.Path, t.Path)
		}
		if b := src.ClusterTrustBundle; b != nil {
			n++
			all = append(all, validateUser(b.User, srcPath.Child("clusterTrustBundle", "user"))...)
		}
		if c := src.PodCertificate; c != nil {
			n++
			all = append(all, validateUser(c.User, srcPath.Child("podCertificate", "user"))...)
		}
		if n > 1 {
			all = append(all, field.Forbidden(srcPath, "may not specify more than 1 volume type per source"))
		}
	}
	return all
}

// validateFlexDriver is v1.37 validation.go validateFlexVolumeSource's driver check.
func validateFlexDriver(driver string, fld *field.Path) field.ErrorList {
	if driver == "" {
		return field.ErrorList{field.Required(fld.Child("driver"), "")}
	}
	return nil
}

// validateVolumeMounts is the part of v1.37 validation.go ValidateVolumeMounts about names,
// mount paths, mountPropagation and recursiveReadOnly (docs/spec.md [validation.mount-propagation],
// [validation.recursive-read-only]).
func validateVolumeMounts(c *corev1.Container, valid sets.Set[string], fld *field.Path) field.ErrorList {
	var all field.ErrorList
	seen := sets.New[string]()
	for i, m := range c.VolumeMounts {
		idx := fld.Index(i)
		if m.Name == "" {
			all = append(all, field.Required(idx.Child("name"), ""))
		}
		if !valid.Has(m.Name) {
			all = append(all, field.NotFound(idx.Child("name"), m.Name))
		}
		if m.MountPath == "" {
			all = append(all, field.Required(idx.Child("mountPath"), ""))
		}
		if seen.Has(m.MountPath) {
			all = append(all, field.Invalid(idx.Child("mountPath"), m.MountPath, "must be unique"))
		}
		seen.Insert(m.MountPath)
		// v1.37 passes ValidateVolumeMounts' fldPath here, not the mount's index: the paths
		// are ...volumeMounts.mountPropagation and ...volumeMounts.recursiveReadOnly.
		all = append(all, validateMountPropagation(m.MountPropagation, c, fld.Child("mountPropagation"))...)
		all = append(all, validateRecursiveReadOnly(m, fld.Child("recursiveReadOnly"))...)
	}
	return all
}

// Upstream texts of docs/spec.md [validation.mount-propagation] and
// [validation.recursive-read-only] (v1.37 validation.go validateMountPropagation,
// validateMountRecursiveReadOnly).
const (
	bidirectionalMsg  = "Bidirectional mount propagation is available only to privileged containers"
	rroReadOnlyMsg    = "may only be specified when readOnly is true"
	rroPropagationMsg = "may only be specified when mountPropagation is None or not specified"
)

// validateMountPropagation is v1.37 validation.go validateMountPropagation for a container of a
// pod: a known mode, and Bidirectional only in a privileged container.
func validateMountPropagation(p *corev1.MountPropagationMode, c *corev1.Container, fld *field.Path) field.ErrorList {
	if p == nil {
		return nil
	}
	var all field.ErrorList
	switch *p {
	case corev1.MountPropagationBidirectional, corev1.MountPropagationHostToContainer, corev1.MountPropagationNone:
	default:
		all = append(all, field.NotSupported(fld, *p, []string{string(corev1.MountPropagationBidirectional), string(corev1.MountPropagationHostToContainer), string(corev1.MountPropagationNone)}))
	}
	privileged := c.SecurityContext != nil && c.SecurityContext.Privileged != nil && *c.SecurityContext.Privileged
	if *p == corev1.MountPropagationBidirectional && !privileged {
		all = append(all, field.Forbidden(fld, bidirectionalMsg))
	}
	return all
}

// validateRecursiveReadOnly is v1.37 validation.go validateMountRecursiveReadOnly: Enabled and
// IfPossible need readOnly and no propagation but None; Disabled is always fine.
func validateRecursiveReadOnly(m corev1.VolumeMount, fld *field.Path) field.ErrorList {
	if m.RecursiveReadOnly == nil {
		return nil
	}
	var all field.ErrorList
	switch *m.RecursiveReadOnly {
	case corev1.RecursiveReadOnlyDisabled:
	case corev1.RecursiveReadOnlyEnabled, corev1.RecursiveReadOnlyIfPossible:
		if !m.ReadOnly {
			all = append(all, field.Forbidden(fld, rroReadOnlyMsg))
		}
		if m.MountPropagation != nil && *m.MountPropagation != corev1.MountPropagationNone {
			all = append(all, field.Forbidden(fld, rroPropagationMsg))
		}
	default:
		all = append(all, field.NotSupported(fld, *m.RecursiveReadOnly, []string{string(corev1.RecursiveReadOnlyDisabled), string(corev1.RecursiveReadOnlyEnabled), string(corev1.RecursiveReadOnlyIfPossible)}))
	}
	return all
}

// validatePersistentVolumeSource is the volume-source part of v1.37 validation.go
// ValidatePersistentVolumeSpec for hostPath and flexVolume.
func validatePersistentVolumeSource(pv *corev1.PersistentVolume) field.ErrorList {
	spec := field.NewPath("spec")
	var all field.ErrorList
	if pvTypeName(&pv.Spec.PersistentVolumeSource) == "" {
		all = append(all, field.Required(spec, "must specify a volume type"))
	}
	if hp := pv.Spec.HostPath; hp != nil {
		all = append(all, validateHostPath(hp, spec.Child("hostPath"))...)
	}
	if fv := pv.Spec.FlexVolume; fv != nil {
		all = append(all, validateFlexDriver(fv.Driver, spec.Child("flexVolume"))...)
	}
	return all
}

// traceMounts records [validation.mount-propagation] and [validation.recursive-read-only] for
// every volumeMount of the pod's containers and init containers that sets either field, with
// the outcome read from errs (the pod's validation errors).
func (t *tracer) traceMounts(pod *corev1.Pod, errs field.ErrorList) {
	if t == nil {
		return
	}
	failed := func(at string) string {
		for _, e := range errs {
			if e.Field == at {
				return "error"
			}
		}
		return "ok"
	}
	spec := field.NewPath("spec")
	each := func(cs []corev1.Container, path *field.Path) {
		for i, c := range cs {
			mounts := path.Index(i).Child("volumeMounts")
			for _, m := range c.VolumeMounts {
				if p := m.MountPropagation; p != nil {
					v := string(*p)
					if *p != corev1.MountPropagationBidirectional && *p != corev1.MountPropagationHostToContainer && *p != corev1.MountPropagationNone {
						v = "unknown"
					}
					t.hit(rule.ValidPropagation, cond(rule.Propagation, v), cond(rule.Outcome, failed(mounts.Child("mountPropagation").String())))
				}
				if r := m.RecursiveReadOnly; r != nil {
					v := string(*r)
					if *r != corev1.RecursiveReadOnlyDisabled && *r != corev1.RecursiveReadOnlyEnabled && *r != corev1.RecursiveReadOnlyIfPossible {
						v = "unknown"
					}
					t.hit(rule.ValidRRO, cond(rule.RRO, v), cond(rule.Outcome, failed(mounts.Child("recursiveReadOnly").String())))
				}
			}
		}
	}
	each(pod.Spec.InitContainers, spec.Child("initContainers"))
	each(pod.Spec.Containers, spec.Child("containers"))
}
