package catalogue

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
)

// imageVolumeCases: docs/spec.md [mounts.image-volume] and [validation.image-volume] (KEP-4639,
// GA in v1.37). Upstream's e2e checks an image volume's contents only (test/e2e/common/node
// image_volume.go); these check what a container may do with it: the probe image's files with
// their layer owners and modes, read-only whatever the volumeMount says, never walked for
// fsGroup.
func imageVolumeCases() []*framework.Case {
	const name = "img"
	pod := func(policy corev1.PullPolicy, readOnly bool, fsGroupSet bool) *corev1.Pod {
		p := mountedAs(podOf(volume(name, corev1.VolumeSource{Image: &corev1.ImageVolumeSource{Reference: framework.ProbeImage, PullPolicy: policy}})),
			map[string]bool{name: readOnly}, false)
		if fsGroupSet {
			withFSGroup(p, fsGroup)
		}
		return p
	}
	probes := []framework.Probe{
		readOnlyProbe(name, "uid 1003 reads etc/passwd (0644)", asOther, framework.OpRead, "etc/passwd"),
		readOnlyProbe(name, "uid 1003 lists etc", asOther, framework.OpList, "etc"),
		readOnlyProbe(name, "root creates new at the top", asRoot, framework.OpCreate, "new"),
		readOnlyProbe(name, "root writes etc/passwd", asRoot, framework.OpWrite, "etc/passwd"),
		readOnlyProbe(name, "uid 1003 makes dir tmp/d in the 1777 tmp", asOther, framework.OpMkdir, "tmp/d"),
		readOnlyProbe(name, "root chmods volperm-probe", asRoot, framework.OpChmod, "volperm-probe"),
		readOnlyProbe(name, "root renames etc/group", asRoot, framework.OpRename, "etc/group"),
		readOnlyProbe(name, "uid 1003 deletes etc/group", asOther, framework.OpDelete, "etc/group"),
	}
	mk := func(title, desc string, p *corev1.Pod) *framework.Case {
		return &framework.Case{Name: "image volume: " + title, Area: framework.AreaMounts, Profile: framework.ProfileConformance,
			Description: desc, Pod: p, Probes: probes}
	}
	cases := []*framework.Case{
		mk("the probe image's files, read-only though the volumeMount is not", "[mounts.image-volume] [probes.read-only] the kubelet's image plugin is a stub (GetAttributes ReadOnly: true, so makeMounts' mustMountRO); the runtime mounts the image's layers: /etc 0755, /etc/passwd 0644, /tmp 1777, /volperm-probe 0755, all root's, the root 0755; every change EROFS, reads as DAC allows.",
			pod(corev1.PullNever, false, false)),
		mk("readOnly: true, the same", "[mounts.image-volume] a volumeMount that says readOnly changes nothing.",
			pod(corev1.PullNever, true, false)),
		mk("fsGroup 2000: never walked", "[mounts.image-volume] fsGroup (and fsGroupChangePolicy) have no effect on an image volume: its files stay root's, their modes the layer's (the API doc; the plugin's SetUp does nothing).",
			pod(corev1.PullNever, false, true)),
		mk("pullPolicy IfNotPresent, fsGroup 2000", "[mounts.image-volume] an image already on the node is not pulled again; the same files.",
			pod(corev1.PullIfNotPresent, false, true)),
		mk("readOnly: true, fsGroup 2000: never walked", "[mounts.image-volume] fsGroup has no effect on a read-only mount of it either.",
			pod(corev1.PullNever, true, true)),
	}
	// [validation.image-volume]: validateImageVolumeSource.
	bad := func(title, desc string, src corev1.ImageVolumeSource) *framework.Case {
		return &framework.Case{Name: "image volume: " + title, Area: framework.AreaMounts, Profile: framework.ProfileConformance,
			Description: "[validation.image-volume] " + desc, AdmissionOnly: true,
			Pod: mountedAs(podOf(volume(name, corev1.VolumeSource{Image: &src})), nil, false)}
	}
	return append(cases,
		bad("no reference: Required", "the reference is required (pullPolicy defaults first: IfNotPresent for an empty reference).", corev1.ImageVolumeSource{}),
		bad("pullPolicy Sometimes: NotSupported", "Always, IfNotPresent or Never.", corev1.ImageVolumeSource{Reference: framework.ProbeImage + ":v1", PullPolicy: "Sometimes"}),
		bad("pullPolicy never (lower case): NotSupported", "the values are case-sensitive.", corev1.ImageVolumeSource{Reference: framework.ProbeImage + ":v1", PullPolicy: "never"}),
		bad("pullPolicy ALWAYS: NotSupported", "the values are case-sensitive.", corev1.ImageVolumeSource{Reference: framework.ProbeImage + ":v1", PullPolicy: "ALWAYS"}),
		bad("pullPolicy Ifnotpresent: NotSupported", "the values are case-sensitive.", corev1.ImageVolumeSource{Reference: framework.ProbeImage + ":v1", PullPolicy: "Ifnotpresent"}),
		bad("untagged reference: defaulted to Always, allowed", "defaults.go SetDefaults_Volume: no tag means latest, so pullPolicy Always; valid.", corev1.ImageVolumeSource{Reference: framework.ProbeImage}),
	)
}
