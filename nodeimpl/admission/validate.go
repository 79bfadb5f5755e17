package admission

import (
	"fmt"
	"math"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/volperm/volperm/nodeimpl/mutant"
)

// validatePod is the volumes part of v1.37 ValidatePodCreate: ValidateVolumes, then the volume
// names of every container's volumeMounts (ValidateVolumeMounts' name checks), and the checks of
// hostUsers (userns.go; old, the old pod of an update or nil, decides their ratchets).
func validatePod(pod, old *corev1.Pod, rel string) field.ErrorList {
	specPath := field.NewPath("spec")
	vols, errs := validateVolumes(pod.Spec.Volumes, specPath.Child("volumes"))
	errs = append(errs, validateMountNames(pod.Spec.Containers, vols, specPath.Child("containers"))...)
	errs = append(errs, validateMountNames(pod.Spec.InitContainers, vols, specPath.Child("initContainers"))...)
	for i, ec := range pod.Spec.EphemeralContainers {
		errs = append(errs, validateMountNames([]corev1.Container{corev1.Container(ec.EphemeralContainerCommon)}, vols, specPath.Child("ephemeralContainers").Index(i))...)
	}
	errs = append(errs, validateMountModes(pod.Spec.InitContainers, specPath.Child("initContainers"))...)
	errs = append(errs, validateMountModes(pod.Spec.Containers, specPath.Child("containers"))...)
	errs = append(errs, validateTokenNeedsServiceAccount(pod, specPath)...)
	errs = append(errs, validateSupplementalGroupsPolicy(pod)...)
	errs = append(errs, validateSELinuxChangePolicy(pod, old, rel)...)
	errs = append(errs, validateBindMountOptions(pod)...)
	return append(errs, validateUserNamespaces(pod, old, rel)...)
}

// validateTokenNeedsServiceAccount is v1.37 ValidatePodCreate's check for pods (not templates):
// a projected serviceAccountToken needs spec.serviceAccountName.
func validateTokenNeedsServiceAccount(pod *corev1.Pod, specPath *field.Path) field.ErrorList {
	if pod.Spec.ServiceAccountName != "" {
		return nil
	}
	var errs field.ErrorList
	for vi, v := range pod.Spec.Volumes {
		if v.Projected == nil {
			continue
		}
		for si, src := range v.Projected.Sources {
			if src.ServiceAccountToken != nil {
				at := specPath.Child("volumes").Index(vi).Child("projected", "sources").Index(si).Child("serviceAccountToken")
				errs = append(errs, field.Forbidden(at, "must not be specified when serviceAccountName is not set"))
			}
		}
	}
	return errs
}

// validateVolumes is v1.37 validation.go ValidateVolumes. As upstream, only volumes without any
// error enter the returned set, so the duplicate check and the volumeMount lookup only see valid
// volumes.
func validateVolumes(volumes []corev1.Volume, fldPath *field.Path) (map[string]bool, field.ErrorList) {
	var allErrs field.ErrorList
	valid := map[string]bool{}
	for i := range volumes {
		vol := &volumes[i]
		idxPath := fldPath.Index(i)
		namePath := idxPath.Child("name")
		el := validateVolumeSource(&vol.VolumeSource, idxPath)
		if len(vol.Name) == 0 {
			el = append(el, field.Required(namePath, ""))
		} else {
			// v1.37 validation.go ValidateDNS1123Label.
			for _, msg := range validation.IsDNS1123Label(vol.Name) {
				el = append(el, field.Invalid(namePath, vol.Name, msg))
			}
		}
		if valid[vol.Name] {
			el = append(el, field.Duplicate(namePath, vol.Name))
		}
		if len(el) == 0 {
			valid[vol.Name] = true
		} else {
			allErrs = append(allErrs, el...)
		}
	}
	return valid, allErrs
}

// validateMountNames is the name part of v1.37 validation.go ValidateVolumeMounts: a mount must
// name a volume that validated.
func validateMountNames(containers []corev1.Container, vols map[string]bool, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, c := range containers {
		for j, m := range c.VolumeMounts {
			namePath := fldPath.Index(i).Child("volumeMounts").Index(j).Child("name")
			if len(m.Name) == 0 {
				allErrs = append(allErrs, field.Required(namePath, ""))
			}
			if !vols[m.Name] {
				allErrs = append(allErrs, field.NotFound(namePath, m.Name))
			}
		}
	}
	return allErrs
}

// source is one member of a volume source union: the name upstream uses in the "may not specify
// more than 1 volume type" path, whether it is set, and its checks (nil: accepted unchecked).
type source struct {
	name     string
	set      bool
	validate func(*field.Path) field.ErrorList
}

// podSources lists the members of v1.VolumeSource in the order of v1.37 validation.go
// validateVolumeSource, with its path names (including its "downwarAPI" and "cephFS").
func podSources(s *corev1.VolumeSource) []source {
	return []source{
		{"emptyDir", s.EmptyDir != nil, func(p *field.Path) field.ErrorList { return validateEmptyDir(s.EmptyDir, p.Child("emptyDir")) }},
		{"hostPath", s.HostPath != nil, func(p *field.Path) field.ErrorList { return validateHostPath(s.HostPath, p.Child("hostPath")) }},
		{"gitRepo", s.GitRepo != nil, nil},
		{"gcePersistentDisk", s.GCEPersistentDisk != nil, nil},
		{"awsElasticBlockStore", s.AWSElasticBlockStore != nil, nil},
		{"secret", s.Secret != nil, func(p *field.Path) field.ErrorList { return validateSecret(s.Secret, p.Child("secret")) }},
		{"nfs", s.NFS != nil, nil},
		{"iscsi", s.ISCSI != nil, nil},
		{"glusterfs", s.Glusterfs != nil, nil},
		{"flocker", s.Flocker != nil, nil},
		{"persistentVolumeClaim", s.PersistentVolumeClaim != nil, nil},
		{"rbd", s.RBD != nil, nil},
		{"cinder", s.Cinder != nil, nil},
		{"cephFS", s.CephFS != nil, nil},
		{"quobyte", s.Quobyte != nil, nil},
		{"downwarAPI", s.DownwardAPI != nil, func(p *field.Path) field.ErrorList {
			return validateDownwardAPI(s.DownwardAPI, p.Child("downwardAPI"))
		}},
		{"fc", s.FC != nil, nil},
		{"flexVolume", s.FlexVolume != nil, func(p *field.Path) field.ErrorList {
			return validateFlex(s.FlexVolume.Driver, s.FlexVolume.Options, p.Child("flexVolume"))
		}},
		{"configMap", s.ConfigMap != nil, func(p *field.Path) field.ErrorList { return validateConfigMap(s.ConfigMap, p.Child("configMap")) }},
		{"azureFile", s.AzureFile != nil, nil},
		{"vsphereVolume", s.VsphereVolume != nil, nil},
		{"photonPersistentDisk", s.PhotonPersistentDisk != nil, nil},
		{"portworxVolume", s.PortworxVolume != nil, nil},
		{"azureDisk", s.AzureDisk != nil, nil},
		{"storageos", s.StorageOS != nil, nil},
		{"projected", s.Projected != nil, func(p *field.Path) field.ErrorList { return validateProjected(s.Projected, p.Child("projected")) }},
		{"scaleIO", s.ScaleIO != nil, nil},
		{"csi", s.CSI != nil, nil},
		{"ephemeral", s.Ephemeral != nil, nil},
		{"image", s.Image != nil, func(p *field.Path) field.ErrorList { return validateImage(s.Image, p.Child("image")) }},
	}
}

// validateVolumeSource is v1.37 validation.go validateVolumeSource for the volume types volperm
// checks; other types are counted for the one-type rule and otherwise accepted.
func validateVolumeSource(s *corev1.VolumeSource, fldPath *field.Path) field.ErrorList {
	return validateUnion(podSources(s), fldPath, "")
}

// validateUnion applies the one-type rule of validateVolumeSource / ValidatePersistentVolumeSpec
// over srcs, in order. The member named always (if any) is counted and checked without the rule,
// as upstream does for flexVolume on PersistentVolumes (pods: emptyDir is first, so it never
// meets the rule either).
func validateUnion(srcs []source, fldPath *field.Path, always string) field.ErrorList {
	var allErrs field.ErrorList
	numVolumes := 0
	for _, src := range srcs {
		if !src.set {
			continue
		}
		if numVolumes > 0 && src.name != always {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child(src.name), "may not specify more than 1 volume type"))
			continue
		}
		numVolumes++
		if src.validate != nil {
			allErrs = append(allErrs, src.validate(fldPath)...)
		}
	}
	if numVolumes == 0 {
		allErrs = append(allErrs, field.Required(fldPath, "must specify a volume type"))
	}
	return allErrs
}

// Error messages of v1.37 validation.go.
const (
	fileModeErrorMsg     = "must be a number between 0 and 0777 (octal), both inclusive"
	emptyDirModeErrorMsg = "must be a number between 0 and 01777 (octal), both inclusive"
)

// validateEmptyDir is the emptyDir part of v1.37 validation.go validateVolumeSource (sizeLimit
// and KEP-5502's mode; the mode check is independent of the gate).
func validateEmptyDir(ed *corev1.EmptyDirVolumeSource, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if ed.SizeLimit != nil && ed.SizeLimit.Sign() < 0 {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("sizeLimit"), "SizeLimit field must be a valid resource quantity"))
	}
	upper := int32(01777)
	switch {
	case mutant.On(mutant.ValidEmptyDirUpperOffByOne):
		upper = 01776
	case mutant.On(mutant.ValidEmptyDirUpper0777):
		upper = 0777
	}
	if ed.Mode != nil && (*ed.Mode > upper || (*ed.Mode < 0 && !mutant.On(mutant.ValidEmptyDirNegative))) {
		var value any = *ed.Mode
		if mutant.On(mutant.ValidEmptyDirTextOctal) {
			value = fmt.Sprintf("%#o", *ed.Mode)
		}
		allErrs = append(allErrs, field.Invalid(fldPath.Child("mode"), value, emptyDirModeErrorMsg))
	}
	return allErrs
}

// supportedHostPathTypes is v1.37 validation.go supportedHostPathTypes, sorted as sets.List does.
var supportedHostPathTypes = []corev1.HostPathType{
	corev1.HostPathUnset,
	corev1.HostPathBlockDev,
	corev1.HostPathCharDev,
	corev1.HostPathDirectory,
	corev1.HostPathDirectoryOrCreate,
	corev1.HostPathFile,
	corev1.HostPathFileOrCreate,
	corev1.HostPathSocket,
}

// validateHostPath is v1.37 validation.go validateHostPathVolumeSource + validateHostPathType.
func validateHostPath(hp *corev1.HostPathVolumeSource, fldPath *field.Path) field.ErrorList {
	if len(hp.Path) == 0 {
		return field.ErrorList{field.Required(fldPath.Child("path"), "")}
	}
	var allErrs field.ErrorList
	if !mutant.On(mutant.ValidHostPathBacksteps) {
		allErrs = validatePathNoBacksteps(hp.Path, fldPath.Child("path"))
	}
	if hp.Type != nil && !hostPathTypeSupported(*hp.Type) {
		// Upstream passes the pointer; field.Error renders it as JSON, the quoted string.
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("type"), hp.Type, supportedHostPathTypes))
	}
	return allErrs
}

func hostPathTypeSupported(t corev1.HostPathType) bool {
	if t == corev1.HostPathSocket && mutant.On(mutant.BlindValidHostPathSocketUnsupported) {
		return false
	}
	for _, s := range supportedHostPathTypes {
		if s == t || (mutant.On(mutant.ValidHostPathTypeFold) && strings.EqualFold(string(s), string(t))) {
			return true
		}
	}
	return false
}

// validateFlex is v1.37 validation.go validateFlexVolumeSource (and, with the same body,
// validateFlexPersistentVolumeSource).
func validateFlex(driver string, options map[string]string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(driver) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("driver"), ""))
	}
	keys := make([]string, 0, len(options))
	for k := range options {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if reservedOptionNamespace(k) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("options").Key(k), k, "kubernetes.io and k8s.io namespaces are reserved"))
		}
	}
	return allErrs
}

func validateSecret(s *corev1.SecretVolumeSource, fldPath *field.Path) field.ErrorList {
	// v1.37 validation.go validateSecretVolumeSource.
	var allErrs field.ErrorList
	if len(s.SecretName) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("secretName"), ""))
	}
	allErrs = append(allErrs, validateFileMode(s.DefaultMode, fldPath.Child("defaultMode"))...)
	allErrs = append(allErrs, validateUser(s.DefaultUser, fldPath.Child("defaultUser"))...)
	for i := range s.Items {
		allErrs = append(allErrs, validateKeyToPath(&s.Items[i], fldPath.Child("items").Index(i))...)
	}
	return allErrs
}

func validateConfigMap(c *corev1.ConfigMapVolumeSource, fldPath *field.Path) field.ErrorList {
	// v1.37 validation.go validateConfigMapVolumeSource.
	var allErrs field.ErrorList
	if len(c.Name) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("name"), ""))
	}
	allErrs = append(allErrs, validateFileMode(c.DefaultMode, fldPath.Child("defaultMode"))...)
	allErrs = append(allErrs, validateUser(c.DefaultUser, fldPath.Child("defaultUser"))...)
	for i := range c.Items {
		allErrs = append(allErrs, validateKeyToPath(&c.Items[i], fldPath.Child("items").Index(i))...)
	}
	return allErrs
}

// validateFileMode is the defaultMode / item mode check of v1.37 validation.go: 0..0777.
func validateFileMode(mode *int32, fldPath *field.Path) field.ErrorList {
	upper := int32(0777)
	if mutant.On(mutant.ValidFileModeUpper01777) {
		upper = 01777
	}
	if mode != nil && (*mode > upper || (*mode == upper && mutant.On(mutant.BlindValidFileMode0777Rejected)) || (*mode < 0 && !mutant.On(mutant.BlindValidFileModeNegative))) {
		return field.ErrorList{field.Invalid(fldPath, *mode, fileModeErrorMsg)}
	}
	return nil
}

// validateUser is v1.37 validation.go validateUserField.
func validateUser(user *int64, fldPath *field.Path) field.ErrorList {
	if user == nil {
		return nil
	}
	var allErrs field.ErrorList
	id := *user
	if id == math.MaxInt32 && mutant.On(mutant.BlindValidUserMaxRejected) {
		id++
	}
	if id == 0 && mutant.On(mutant.BlindValidUserZeroRejected) {
		id--
	}
	for _, msg := range validation.IsValidUserID(id) {
		allErrs = append(allErrs, field.Invalid(fldPath, *user, msg))
	}
	return allErrs
}

// validateKeyToPath is v1.37 validation.go validateKeyToPath.
func validateKeyToPath(kp *corev1.KeyToPath, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(kp.Key) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("key"), ""))
	}
	if len(kp.Path) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("path"), ""))
	}
	allErrs = append(allErrs, validateLocalNonReservedPath(kp.Path, fldPath.Child("path"))...)
	if !mutant.On(mutant.ValidItemModeUnchecked) {
		allErrs = append(allErrs, validateFileMode(kp.Mode, fldPath.Child("mode"))...)
	}
	allErrs = append(allErrs, validateUser(kp.User, fldPath.Child("user"))...)
	return allErrs
}

// errorTexts renders errs as field.Error.Error() texts, sorted; nil when there are none.
func errorTexts(errs field.ErrorList) []string {
	if len(errs) == 0 {
		return nil
	}
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = e.Error()
	}
	return sortedStrings(out)
}

func sortedStrings(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	sort.Strings(s)
	return s
}
