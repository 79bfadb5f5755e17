package oracle

import (
	corev1 "k8s.io/api/core/v1"
)

// volumeKind is one volume source type of a pod volume.
type volumeKind struct {
	// api is the source's name in the API (its JSON field): emptyDir, hostPath, ...
	api string
	// child is the field name upstream validation uses in "may not specify more than 1 volume
	// type" (v1.37 validation.go validateVolumeSource spells downwardAPI "downwarAPI").
	child string
	set   func(*corev1.VolumeSource) bool
}

// volumeKinds lists the sources in the order v1.37 validation.go validateVolumeSource checks
// them: the first one set counts, every later one is "may not specify more than 1 volume type".
var volumeKinds = []volumeKind{
	{"emptyDir", "emptyDir", func(s *corev1.VolumeSource) bool { return s.EmptyDir != nil }},
	{"hostPath", "hostPath", func(s *corev1.VolumeSource) bool { return s.HostPath != nil }},
	{"gitRepo", "gitRepo", func(s *corev1.VolumeSource) bool { return s.GitRepo != nil }},
	{"gcePersistentDisk", "gcePersistentDisk", func(s *corev1.VolumeSource) bool { return s.GCEPersistentDisk != nil }},
	{"awsElasticBlockStore", "awsElasticBlockStore", func(s *corev1.VolumeSource) bool { return s.AWSElasticBlockStore != nil }},
	{"secret", "secret", func(s *corev1.VolumeSource) bool { return s.Secret != nil }},
	{"nfs", "nfs", func(s *corev1.VolumeSource) bool { return s.NFS != nil }},
	{"iscsi", "iscsi", func(s *corev1.VolumeSource) bool { return s.ISCSI != nil }},
	{"glusterfs", "glusterfs", func(s *corev1.VolumeSource) bool { return s.Glusterfs != nil }},
	{"flocker", "flocker", func(s *corev1.VolumeSource) bool { return s.Flocker != nil }},
	{"persistentVolumeClaim", "persistentVolumeClaim", func(s *corev1.VolumeSource) bool { return s.PersistentVolumeClaim != nil }},
	{"rbd", "rbd", func(s *corev1.VolumeSource) bool { return s.RBD != nil }},
	{"cinder", "cinder", func(s *corev1.VolumeSource) bool { return s.Cinder != nil }},
	{"cephfs", "cephFS", func(s *corev1.VolumeSource) bool { return s.CephFS != nil }},
	{"quobyte", "quobyte", func(s *corev1.VolumeSource) bool { return s.Quobyte != nil }},
	{"downwardAPI", "downwarAPI", func(s *corev1.VolumeSource) bool { return s.DownwardAPI != nil }},
	{"fc", "fc", func(s *corev1.VolumeSource) bool { return s.FC != nil }},
	{"flexVolume", "flexVolume", func(s *corev1.VolumeSource) bool { return s.FlexVolume != nil }},
	{"configMap", "configMap", func(s *corev1.VolumeSource) bool { return s.ConfigMap != nil }},
	{"azureFile", "azureFile", func(s *corev1.VolumeSource) bool { return s.AzureFile != nil }},
	{"vsphereVolume", "vsphereVolume", func(s *corev1.VolumeSource) bool { return s.VsphereVolume != nil }},
	{"photonPersistentDisk", "photonPersistentDisk", func(s *corev1.VolumeSource) bool { return s.PhotonPersistentDisk != nil }},
	{"portworxVolume", "portworxVolume", func(s *corev1.VolumeSource) bool { return s.PortworxVolume != nil }},
	{"azureDisk", "azureDisk", func(s *corev1.VolumeSource) bool { return s.AzureDisk != nil }},
	{"storageos", "storageos", func(s *corev1.VolumeSource) bool { return s.StorageOS != nil }},
	{"projected", "projected", func(s *corev1.VolumeSource) bool { return s.Projected != nil }},
	{"scaleIO", "scaleIO", func(s *corev1.VolumeSource) bool { return s.ScaleIO != nil }},
	{"csi", "csi", func(s *corev1.VolumeSource) bool { return s.CSI != nil }},
	{"ephemeral", "ephemeral", func(s *corev1.VolumeSource) bool { return s.Ephemeral != nil }},
	{"image", "image", func(s *corev1.VolumeSource) bool { return s.Image != nil }},
}

// sourceOf returns the first source set on s, in validation order, or nil.
func sourceOf(s *corev1.VolumeSource) *volumeKind {
	for i := range volumeKinds {
		if volumeKinds[i].set(s) {
			return &volumeKinds[i]
		}
	}
	return nil
}

// typeName is a volume's type as Observation and the allowlist name it ("" for none).
func typeName(s *corev1.VolumeSource) string {
	if k := sourceOf(s); k != nil {
		return k.api
	}
	return ""
}
