package admission

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// persistentVolumeSources lists the members of v1.PersistentVolumeSource in the order of v1.37
// validation.go ValidatePersistentVolumeSpec, with its path names (including "cephFS").
func persistentVolumeSources(s *corev1.PersistentVolumeSource) []source {
	return []source{
		{"hostPath", s.HostPath != nil, func(p *field.Path) field.ErrorList { return validateHostPath(s.HostPath, p.Child("hostPath")) }},
		{"gcePersistentDisk", s.GCEPersistentDisk != nil, nil},
		{"awsElasticBlockStore", s.AWSElasticBlockStore != nil, nil},
		{"glusterfs", s.Glusterfs != nil, nil},
		{"flocker", s.Flocker != nil, nil},
		{"nfs", s.NFS != nil, nil},
		{"rbd", s.RBD != nil, nil},
		{"quobyte", s.Quobyte != nil, nil},
		{"cephFS", s.CephFS != nil, nil},
		{"iscsi", s.ISCSI != nil, nil},
		{"cinder", s.Cinder != nil, nil},
		{"fc", s.FC != nil, nil},
		{"flexVolume", s.FlexVolume != nil, func(p *field.Path) field.ErrorList {
			// v1.37 validation.go validateFlexPersistentVolumeSource.
			return validateFlex(s.FlexVolume.Driver, s.FlexVolume.Options, p.Child("flexVolume"))
		}},
		{"azureFile", s.AzureFile != nil, nil},
		{"vsphereVolume", s.VsphereVolume != nil, nil},
		{"photonPersistentDisk", s.PhotonPersistentDisk != nil, nil},
		{"portworxVolume", s.PortworxVolume != nil, nil},
		{"azureDisk", s.AzureDisk != nil, nil},
		{"scaleIO", s.ScaleIO != nil, nil},
		{"local", s.Local != nil, nil},
		{"storageos", s.StorageOS != nil, nil},
		{"csi", s.CSI != nil, nil},
	}
}

// validatePersistentVolumeSource is the volume-source part of v1.37 validation.go
// ValidatePersistentVolume (paths `spec.hostPath...`, `spec.flexVolume...`). As upstream,
// flexVolume is counted and checked even after another type ("may not specify more than 1
// volume type" is never reported on spec.flexVolume). The rest of the PV spec (accessModes,
// capacity, reclaim policy, metadata) is not volperm's subject and is not checked.
func validatePersistentVolumeSource(s *corev1.PersistentVolumeSource) field.ErrorList {
	return validateUnion(persistentVolumeSources(s), field.NewPath("spec"), "flexVolume")
}
