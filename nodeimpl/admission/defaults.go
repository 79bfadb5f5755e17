package admission

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/nodeimpl/mutant"
)

// serviceAccountTokenExpiration is v1.37 SetDefaults_ServiceAccountTokenProjection's one hour.
const serviceAccountTokenExpiration int64 = 3600

// setDefaultsPod applies the v1 defaults of pkg/apis/core/v1/defaults.go that concern volumes.
func setDefaultsPod(pod *corev1.Pod) {
	for i := range pod.Spec.Volumes {
		src := &pod.Spec.Volumes[i].VolumeSource
		// v1.37 defaults.go SetDefaults_Volume: a volume with no source becomes an emptyDir.
		if !hasSource(podSources(src)) && !mutant.On(mutant.DefaultNoSourceRejected) {
			src.EmptyDir = &corev1.EmptyDirVolumeSource{}
		}
		// Every source is defaulted, as the generated defaulters do (not only the first set one).
		if src.Secret != nil {
			// v1.37 defaults.go SetDefaults_SecretVolumeSource: defaultMode nil -> 0644.
			def := corev1.SecretVolumeSourceDefaultMode
			if mutant.On(mutant.DefaultSecretMode0600) {
				def = 0600
			}
			defaultMode(&src.Secret.DefaultMode, def)
		}
		if src.ConfigMap != nil {
			// v1.37 defaults.go SetDefaults_ConfigMapVolumeSource: defaultMode nil -> 0644.
			def := corev1.ConfigMapVolumeSourceDefaultMode
			if mutant.On(mutant.DefaultConfigMapMode0444) {
				def = 0444
			}
			defaultMode(&src.ConfigMap.DefaultMode, def)
		}
		if src.DownwardAPI != nil {
			// v1.37 defaults.go SetDefaults_DownwardAPIVolumeSource: defaultMode nil -> 0644.
			def := corev1.DownwardAPIVolumeSourceDefaultMode
			if mutant.On(mutant.BlindDefaultDownwardAPIMode0444) {
				def = 0444
			}
			defaultMode(&src.DownwardAPI.DefaultMode, def)
			defaultFieldRefs(src.DownwardAPI.Items)
		}
		if src.Projected != nil {
			// v1.37 defaults.go SetDefaults_ProjectedVolumeSource: defaultMode nil -> 0644.
			if !mutant.On(mutant.DefaultProjectedNone) {
				defaultMode(&src.Projected.DefaultMode, corev1.ProjectedVolumeSourceDefaultMode)
			}
			for j := range src.Projected.Sources {
				ps := &src.Projected.Sources[j]
				if ps.DownwardAPI != nil {
					defaultFieldRefs(ps.DownwardAPI.Items)
				}
				if t := ps.ServiceAccountToken; t != nil && t.ExpirationSeconds == nil {
					// v1.37 defaults.go SetDefaults_ServiceAccountTokenProjection: one hour.
					exp := serviceAccountTokenExpiration
					t.ExpirationSeconds = &exp
				}
			}
		}
		if src.Image != nil && src.Image.PullPolicy == "" {
			// v1.37 defaults.go SetDefaults_Volume: Always for a :latest or untagged reference,
			// else IfNotPresent (ParseImageName; the ImageVolume gate is locked on).
			src.Image.PullPolicy = corev1.PullIfNotPresent
			if imageTag(src.Image.Reference) == "latest" {
				src.Image.PullPolicy = corev1.PullAlways
			}
		}
		if src.HostPath != nil {
			// v1.37 defaults.go SetDefaults_HostPathVolumeSource: type nil -> "" (HostPathUnset).
			if src.HostPath.Type == nil {
				t := corev1.HostPathUnset
				src.HostPath.Type = &t
			}
		}
		// emptyDir: no defaults (docs/spec.md: mode nil stays nil, meaning 0777).
	}
}

func defaultMode(mode **int32, def int32) {
	if *mode == nil {
		m := def
		*mode = &m
	}
}

// defaultFieldRefs is v1.37 defaults.go SetDefaults_ObjectFieldSelector: apiVersion "" -> "v1".
func defaultFieldRefs(items []corev1.DownwardAPIVolumeFile) {
	if mutant.On(mutant.BlindDefaultFieldRefNoAPIVersion) {
		return
	}
	for i := range items {
		if fr := items[i].FieldRef; fr != nil && fr.APIVersion == "" {
			fr.APIVersion = "v1"
		}
	}
}

// hasSource reports whether any member of a volume source is set.
func hasSource(sources []source) bool {
	for _, s := range sources {
		if s.set {
			return true
		}
	}
	return false
}
