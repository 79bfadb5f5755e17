package admission

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/volperm/volperm/nodeimpl/mutant"
)

// validateDownwardAPI is v1.37 validation.go validateDownwardAPIVolumeSource. As upstream, the
// items are checked against the source's path, not an indexed item path.
func validateDownwardAPI(d *corev1.DownwardAPIVolumeSource, fldPath *field.Path) field.ErrorList {
	allErrs := validateFileMode(d.DefaultMode, fldPath.Child("defaultMode"))
	allErrs = append(allErrs, validateUser(d.DefaultUser, fldPath.Child("defaultUser"))...)
	for i := range d.Items {
		if d.Items[i].User != nil && mutant.On(mutant.BlindValidDownwardUserIndexed) {
			item := d.Items[i]
			item.User = nil
			allErrs = append(allErrs, validateDownwardAPIFile(&item, fldPath)...)
			allErrs = append(allErrs, validateUser(d.Items[i].User, fldPath.Child("items").Index(i).Child("user"))...)
			continue
		}
		allErrs = append(allErrs, validateDownwardAPIFile(&d.Items[i], fldPath)...)
	}
	return allErrs
}

// validVolumeFieldPaths is v1.37 validation.go validVolumeDownwardAPIFieldPathExpressions, sorted.
var validVolumeFieldPaths = []string{"metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace", "metadata.uid"}

// validContainerResources is v1.37 validation.go validContainerResourceFieldPathExpressions, sorted.
var validContainerResources = []string{"limits.cpu", "limits.ephemeral-storage", "limits.memory", "requests.cpu", "requests.ephemeral-storage", "requests.memory"}

// hugepagesResourcePrefixes are v1.37 validation.go hugepages{Requests,Limits}PrefixDownwardAPI.
var hugepagesResourcePrefixes = []string{"limits.hugepages-", "requests.hugepages-"}

// validateDownwardAPIFile is v1.37 validation.go validateDownwardAPIVolumeFile.
func validateDownwardAPIFile(file *corev1.DownwardAPIVolumeFile, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(file.Path) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("path"), ""))
	}
	allErrs = append(allErrs, validateLocalNonReservedPath(file.Path, fldPath.Child("path"))...)
	switch {
	case file.FieldRef != nil:
		allErrs = append(allErrs, validateObjectFieldSelector(file.FieldRef, fldPath.Child("fieldRef"))...)
		if file.ResourceFieldRef != nil {
			allErrs = append(allErrs, field.Invalid(fldPath, "resource", "fieldRef and resourceFieldRef can not be specified simultaneously"))
		}
	case file.ResourceFieldRef != nil:
		allErrs = append(allErrs, validateResourceFieldSelector(file.ResourceFieldRef, fldPath.Child("resourceFieldRef"))...)
	default:
		allErrs = append(allErrs, field.Required(fldPath, "one of fieldRef and resourceFieldRef is required"))
	}
	allErrs = append(allErrs, validateFileMode(file.Mode, fldPath.Child("mode"))...)
	allErrs = append(allErrs, validateUser(file.User, fldPath.Child("user"))...)
	return allErrs
}

// validateObjectFieldSelector is v1.37 validation.go validateObjectFieldSelector with the volume
// field paths and pkg/apis/core/pods ConvertDownwardAPIFieldLabel inlined.
func validateObjectFieldSelector(fs *corev1.ObjectFieldSelector, fldPath *field.Path) field.ErrorList {
	if len(fs.APIVersion) == 0 {
		return field.ErrorList{field.Required(fldPath.Child("apiVersion"), "")}
	}
	if len(fs.FieldPath) == 0 {
		return field.ErrorList{field.Required(fldPath.Child("fieldPath"), "")}
	}
	internal, err := convertDownwardAPIFieldLabel(fs.APIVersion, fs.FieldPath)
	if err != nil {
		return field.ErrorList{field.Invalid(fldPath.Child("fieldPath"), fs.FieldPath, fmt.Sprintf("error converting fieldPath: %v", err))}
	}
	var allErrs field.ErrorList
	if p, subscript, ok := splitMaybeSubscriptedPath(internal); ok {
		switch p {
		case "metadata.annotations":
			allErrs = append(allErrs, validateQualifiedName(strings.ToLower(subscript), fldPath)...)
		case "metadata.labels":
			allErrs = append(allErrs, validateQualifiedName(subscript, fldPath)...)
		default:
			allErrs = append(allErrs, field.Invalid(fldPath, p, "does not support subscript"))
		}
	} else if !contains(validVolumeFieldPaths, p) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("fieldPath"), p, validVolumeFieldPaths))
	}
	return allErrs
}

// convertDownwardAPIFieldLabel is v1.37 pkg/apis/core/pods ConvertDownwardAPIFieldLabel.
func convertDownwardAPIFieldLabel(version, label string) (string, error) {
	if version != "v1" {
		return "", fmt.Errorf("unsupported pod version: %s", version)
	}
	if p, _, ok := splitMaybeSubscriptedPath(label); ok {
		switch p {
		case "metadata.annotations", "metadata.labels":
			return label, nil
		default:
			return "", fmt.Errorf("field label does not support subscript: %s", label)
		}
	}
	switch label {
	case "metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace", "metadata.uid",
		"spec.nodeName", "spec.restartPolicy", "spec.serviceAccountName", "spec.schedulerName",
		"status.phase", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs":
		return label, nil
	case "spec.host":
		// Backwards compatibility with old v1 clients, as upstream.
		return "spec.nodeName", nil
	default:
		return "", fmt.Errorf("field label not supported: %s", label)
	}
}

// splitMaybeSubscriptedPath is v1.37 pkg/fieldpath SplitMaybeSubscriptedPath.
func splitMaybeSubscriptedPath(fieldPath string) (string, string, bool) {
	if !strings.HasSuffix(fieldPath, "']") {
		return fieldPath, "", false
	}
	parts := strings.SplitN(strings.TrimSuffix(fieldPath, "']"), "['", 2)
	if len(parts) < 2 || len(parts[0]) == 0 {
		return fieldPath, "", false
	}
	return parts[0], parts[1], true
}

// validateQualifiedName is v1.37 validation.go ValidateQualifiedName.
func validateQualifiedName(value string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range validation.IsQualifiedName(value) {
		allErrs = append(allErrs, field.Invalid(fldPath, value, msg))
	}
	return allErrs
}

// validateResourceFieldSelector is v1.37 validation.go validateContainerResourceFieldSelector
// for a volume (containerName required) with validateContainerResourceDivisor.
func validateResourceFieldSelector(fs *corev1.ResourceFieldSelector, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	switch {
	case len(fs.ContainerName) == 0:
		allErrs = append(allErrs, field.Required(fldPath.Child("containerName"), ""))
	case len(fs.Resource) == 0:
		allErrs = append(allErrs, field.Required(fldPath.Child("resource"), ""))
	case !contains(validContainerResources, fs.Resource) && !hasAnyPrefix(fs.Resource, hugepagesResourcePrefixes):
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("resource"), fs.Resource, validContainerResources))
	}
	return append(allErrs, validateDivisor(fs.Resource, fs.Divisor, fldPath)...)
}

// divisorUnits are v1.37 validation.go validContainerResourceDivisorFor{Memory,EphemeralStorage,HugePages}.
var divisorUnits = []string{"1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei"}

const divisorUnitsText = "1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei"

// validateDivisor is v1.37 validation.go validateContainerResourceDivisor.
func validateDivisor(rName string, divisor resource.Quantity, fldPath *field.Path) field.ErrorList {
	if divisor.Cmp(resource.Quantity{}) == 0 {
		return nil
	}
	var allErrs field.ErrorList
	d := divisor.String()
	divisorPath := fldPath.Child("divisor")
	switch rName {
	case "limits.cpu", "requests.cpu":
		if d != "1m" && d != "1" {
			allErrs = append(allErrs, field.Invalid(divisorPath, rName, "only divisor's values 1m and 1 are supported with the cpu resource"))
		}
	case "limits.memory", "requests.memory":
		if !contains(divisorUnits, d) {
			allErrs = append(allErrs, field.Invalid(divisorPath, rName, "only divisor's values "+divisorUnitsText+" are supported with the memory resource"))
		}
	case "limits.ephemeral-storage", "requests.ephemeral-storage":
		if !contains(divisorUnits, d) {
			allErrs = append(allErrs, field.Invalid(divisorPath, rName, "only divisor's values "+divisorUnitsText+" are supported with the local ephemeral storage resource"))
		}
	}
	if hasAnyPrefix(rName, hugepagesResourcePrefixes) && !contains(divisorUnits, d) {
		allErrs = append(allErrs, field.Invalid(divisorPath, rName, "only divisor's values "+divisorUnitsText+" are supported with the hugepages resource"))
	}
	return allErrs
}

// validateProjected is v1.37 validation.go validateProjectedVolumeSource +
// validateProjectionSources. clusterTrustBundle and podCertificate sources are counted for the
// one-type-per-source rule and their `user` is checked (KEP-5936); they are otherwise accepted:
// volperm sets up neither.
func validateProjected(p *corev1.ProjectedVolumeSource, fldPath *field.Path) field.ErrorList {
	allErrs := validateFileMode(p.DefaultMode, fldPath.Child("defaultMode"))
	allErrs = append(allErrs, validateUser(p.DefaultUser, fldPath.Child("defaultUser"))...)
	allPaths := map[string]bool{}
	// dup records a projected file path; upstream reports a repeat on the projected volume's path.
	dup := func(filePath string, value string) {
		if allPaths[filePath] {
			allErrs = append(allErrs, field.Invalid(fldPath, value, "conflicting duplicate paths"))
		}
		allPaths[filePath] = true
	}
	for i := range p.Sources {
		src := &p.Sources[i]
		numSources := 0
		srcPath := fldPath.Child("sources").Index(i)
		if s := src.Secret; s != nil {
			numSources++
			projPath := srcPath.Child("secret")
			if len(s.Name) == 0 {
				allErrs = append(allErrs, field.Required(projPath.Child("name"), ""))
			}
			for j := range s.Items {
				allErrs = append(allErrs, validateKeyToPath(&s.Items[j], projPath.Child("items").Index(j))...)
				if len(s.Items[j].Path) > 0 {
					dup(s.Items[j].Path, s.Name)
				}
			}
		}
		if c := src.ConfigMap; c != nil {
			numSources++
			projPath := srcPath.Child("configMap")
			if len(c.Name) == 0 {
				allErrs = append(allErrs, field.Required(projPath.Child("name"), ""))
			}
			for j := range c.Items {
				allErrs = append(allErrs, validateKeyToPath(&c.Items[j], projPath.Child("items").Index(j))...)
				if len(c.Items[j].Path) > 0 {
					dup(c.Items[j].Path, c.Name)
				}
			}
		}
		if d := src.DownwardAPI; d != nil {
			numSources++
			projPath := srcPath.Child("downwardAPI")
			for j := range d.Items {
				allErrs = append(allErrs, validateDownwardAPIFile(&d.Items[j], projPath)...)
				if len(d.Items[j].Path) > 0 {
					dup(d.Items[j].Path, d.Items[j].Path)
				}
			}
		}
		if t := src.ServiceAccountToken; t != nil {
			numSources++
			allErrs = append(allErrs, validateServiceAccountToken(t, srcPath.Child("serviceAccountToken"), fldPath)...)
		}
		if ctb := src.ClusterTrustBundle; ctb != nil {
			numSources++
			// v1.37 validateProjectionSources: the clusterTrustBundle's user (validateUserField).
			allErrs = append(allErrs, validateUser(ctb.User, srcPath.Child("clusterTrustBundle", "user"))...)
		}
		if pc := src.PodCertificate; pc != nil {
			numSources++
			// v1.37 validateProjectionSources: the podCertificate's user (validateUserField).
			allErrs = append(allErrs, validateUser(pc.User, srcPath.Child("podCertificate", "user"))...)
		}
		if numSources > 1 {
			allErrs = append(allErrs, field.Forbidden(srcPath, "may not specify more than 1 volume type per source"))
		}
	}
	return allErrs
}

// validateServiceAccountToken is the serviceAccountToken part of v1.37 validation.go
// validateProjectionSources (on create: AllowNonLocalProjectedTokenPath is false). As upstream,
// path errors name the projected volume's path, not the source's.
func validateServiceAccountToken(t *corev1.ServiceAccountTokenProjection, projPath, volPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if exp := t.ExpirationSeconds; exp == nil {
		allErrs = append(allErrs, field.Required(projPath.Child("expirationSeconds"), ""))
	} else {
		if *exp < 10*60 || (*exp == 10*60 && mutant.On(mutant.BlindValidTokenExpiration600)) {
			allErrs = append(allErrs, field.Invalid(projPath.Child("expirationSeconds"), *exp, "may not specify a duration less than 10 minutes"))
		}
		if *exp > 1<<32 {
			allErrs = append(allErrs, field.Invalid(projPath.Child("expirationSeconds"), *exp, "may not specify a duration larger than 2^32 seconds"))
		}
	}
	if t.Path == "" {
		allErrs = append(allErrs, field.Required(volPath.Child("path"), ""))
	} else {
		allErrs = append(allErrs, validateLocalNonReservedPath(t.Path, volPath.Child("path"))...)
	}
	return append(allErrs, validateUser(t.User, projPath.Child("user"))...)
}

// validateLocalNonReservedPath is v1.37 validation.go ValidateLocalNonReservedPath: relative, no
// `..` element, not starting with `..`.
func validateLocalNonReservedPath(targetPath string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if path.IsAbs(targetPath) {
		allErrs = append(allErrs, field.Invalid(fldPath, targetPath, "must be a relative path"))
	}
	allErrs = append(allErrs, validatePathNoBacksteps(targetPath, fldPath)...)
	// Upstream: not reported when the `..` element check already caught it.
	if strings.HasPrefix(targetPath, "..") && !strings.HasPrefix(targetPath, "../") {
		allErrs = append(allErrs, field.Invalid(fldPath, targetPath, "must not start with '..'"))
	}
	return allErrs
}

// validatePathNoBacksteps is v1.37 validation.go validatePathNoBacksteps: one error, however
// many `..` elements.
func validatePathNoBacksteps(targetPath string, fldPath *field.Path) field.ErrorList {
	for _, item := range strings.Split(filepath.ToSlash(targetPath), "/") {
		if item == ".." || (strings.Contains(item, "..") && mutant.On(mutant.BlindValidDotDotInName)) {
			return field.ErrorList{field.Invalid(fldPath, targetPath, "must not contain '..'")}
		}
	}
	return nil
}

// reservedOptionNamespace is v1.37 validation.go validateFlexVolumeSource's option check: the
// key's namespace (before the first "/") is kubernetes.io, k8s.io or a subdomain of them.
func reservedOptionNamespace(key string) bool {
	namespace := key
	if parts := strings.SplitN(key, "/", 2); len(parts) == 2 {
		namespace = parts[0]
	}
	normalized := "." + strings.ToLower(namespace)
	return strings.HasSuffix(normalized, ".kubernetes.io") || strings.HasSuffix(normalized, ".k8s.io")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
