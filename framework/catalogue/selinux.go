package catalogue

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/volperm/volperm/framework"
)

// seLinuxCases: docs/spec.md "SELinux mount decisions (KEP-1710)". The API's
// seLinuxChangePolicy on every node; on a node with SELinux on (Case.SELinux), the kubelet's
// decision per PersistentVolume source, access mode, policy and release, the labels of one pod's
// containers, and conflicts with a running pod. Upstream's own table:
// pkg/volume/util/selinux_test.go, kubelet/volumemanager/cache/desired_state_of_world_test.go
// and test/e2e/storage/csimock/csi_selinux_mount.go (which runs only on SELinux nodes).
func seLinuxCases() []*framework.Case {
	var cases []*framework.Case
	cases = append(cases, seLinuxPolicyCases()...)
	cases = append(cases, seLinuxMatrixCases()...)
	cases = append(cases, seLinuxLabelCases()...)
	return append(cases, seLinuxConflictCases()...)
}

// The CSI drivers of the SELinux cases: one whose CSIDriver says seLinuxMount: true, one false,
// one without a CSIDriver object.
const (
	csiSELinux   = "selinux.csi.volperm.dev"
	csiNoSELinux = "plain.csi.volperm.dev"
	csiNoDriver  = "nodriver.csi.volperm.dev"
)

// seLinuxDrivers is every SELinux case's cluster: the CSIDrivers by name.
func seLinuxDrivers() map[string]bool { return map[string]bool{csiSELinux: true, csiNoSELinux: false} }

// seLinuxSources are the PersistentVolume sources of the matrix, in report order.
var seLinuxSources = []string{"csi-supported", "csi-unsupported", "csi-no-driver", "iscsi", "fc", "nfs"}

// seLinuxPV is PersistentVolume name of source with modes.
func seLinuxPV(name, source string, modes ...corev1.PersistentVolumeAccessMode) *corev1.PersistentVolume {
	var s corev1.PersistentVolumeSource
	switch source {
	case "csi-supported":
		s.CSI = &corev1.CSIPersistentVolumeSource{Driver: csiSELinux, VolumeHandle: name}
	case "csi-unsupported":
		s.CSI = &corev1.CSIPersistentVolumeSource{Driver: csiNoSELinux, VolumeHandle: name}
	case "csi-no-driver":
		s.CSI = &corev1.CSIPersistentVolumeSource{Driver: csiNoDriver, VolumeHandle: name}
	case "iscsi":
		s.ISCSI = &corev1.ISCSIPersistentVolumeSource{TargetPortal: "127.0.0.1:3260", IQN: "iqn.2026-11.dev.volperm:" + name, Lun: 0}
	case "fc":
		s.FC = &corev1.FCVolumeSource{WWIDs: []string{"volperm-" + name}}
	case "nfs":
		s.NFS = &corev1.NFSVolumeSource{Server: "127.0.0.1", Path: "/" + name}
	}
	return &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeSpec{AccessModes: modes, PersistentVolumeSource: s}}
}

// Two process labels and the file labels volperm's translator gives them
// (framework.SELinuxFileLabel).
var (
	seLinuxL1 = &corev1.SELinuxOptions{User: "system_u", Role: "system_r", Type: "container_t", Level: "s0:c1,c2"}
	seLinuxL2 = &corev1.SELinuxOptions{User: "system_u", Role: "system_r", Type: "container_t", Level: "s0:c98,c99"}
)

// seLinuxPod is a pod whose container "app" mounts claim "data" as volume "data", with pod-level
// seLinuxOptions opts (nil: none) and seLinuxChangePolicy policy ("" unset).
func seLinuxPod(name string, opts *corev1.SELinuxOptions, policy corev1.PodSELinuxChangePolicy) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{
		Volumes: []corev1.Volume{volume("data", corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}})},
		Containers: []corev1.Container{{Name: "app", Image: framework.ProbeImage, ImagePullPolicy: corev1.PullNever,
			VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}}},
	}}
	if opts != nil || policy != "" {
		p.Spec.SecurityContext = &corev1.PodSecurityContext{SELinuxOptions: opts}
		if policy != "" {
			p.Spec.SecurityContext.SELinuxChangePolicy = &policy
		}
	}
	return p
}

// seLinuxCase is a case on a node with SELinux on whose claim "data" is bound to pv.
func seLinuxCase(title, desc string, pod *corev1.Pod, pv *corev1.PersistentVolume, running ...*corev1.Pod) *framework.Case {
	return &framework.Case{Name: "selinux: " + title, Area: framework.AreaSELinux, Profile: framework.ProfileConformance,
		Description: desc, Pod: pod,
		SELinux: &framework.SELinux{Claims: map[string]*corev1.PersistentVolume{"data": pv}, CSIDrivers: seLinuxDrivers(), Running: running}}
}

// kubeletCells are the releases the SELinux decision is checked in by name: the newest
// (SELinuxMount on) and v1.36 (off) behind a v1.37 apiserver.
var kubeletCells = []framework.Releases{{}, {APIServer: "v1.37", Kubelet: "v1.36"}}

// cellWords names a kubelet cell.
func cellWords(r framework.Releases) string {
	if r.Kubelet == "" {
		return "kubelet v1.37 (SELinuxMount on)"
	}
	return "kubelet " + r.Kubelet + " (SELinuxMount off)"
}

// inCell puts c in cell r, with the release-skew labels of an older kubelet.
func inCell(c *framework.Case, r framework.Releases) *framework.Case {
	c.Releases = r
	if r.Kubelet != "" {
		c.Name += ", " + cellWords(r)
		c.Labels = append(c.Labels, framework.SkewLabels(r)...)
	}
	return c
}

// seLinuxPolicyCases: [validation.selinux-change-policy] on a plain pod (an emptyDir) that every
// node runs: SELinux off, the policy changes nothing there.
func seLinuxPolicyCases() []*framework.Case {
	mk := func(title, desc string, policy corev1.PodSELinuxChangePolicy, windows bool, r framework.Releases, old *corev1.PodSELinuxChangePolicy) *framework.Case {
		p := podOf(volume("scratch", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}))
		p.Spec.SecurityContext = &corev1.PodSecurityContext{SELinuxChangePolicy: &policy}
		if windows {
			p.Spec.OS = &corev1.PodOS{Name: corev1.Windows}
		}
		c := &framework.Case{Name: "selinux: seLinuxChangePolicy " + title, Area: framework.AreaSELinux, Profile: framework.ProfileConformance,
			Description: "[validation.selinux-change-policy] " + desc, Pod: p, Releases: r}
		if windows {
			c.AdmissionOnly = true
		}
		if old != nil {
			o := p.DeepCopy()
			o.Spec.SecurityContext.SELinuxChangePolicy = old
			c.OldPod = o
		}
		if r.APIServer != "" {
			c.Labels = append(c.Labels, framework.SkewLabels(r)...)
		}
		return c
	}
	old := framework.Releases{APIServer: "v1.36", Kubelet: "v1.36"}
	mo, rec := corev1.SELinuxChangePolicyMountOption, corev1.SELinuxChangePolicyRecursive
	return []*framework.Case{
		mk("MountOption: allowed", "v1.37: SELinuxMount is on, both values are valid.", mo, false, framework.Releases{}, nil),
		mk("Recursive: allowed", "the opt-out of context mounts.", rec, false, framework.Releases{}, nil),
		mk("Foo: NotSupported", "`Unsupported value: \"Foo\": supported values: \"MountOption\", \"Recursive\"`.", "Foo", false, framework.Releases{}, nil),
		mk("recursive (lower case): NotSupported", "the values are case-sensitive.", "recursive", false, framework.Releases{}, nil),
		mk("empty string: NotSupported", "a set but empty policy is not unset.", "", false, framework.Releases{}, nil),
		mk("Recursive on a windows pod: Forbidden", "validateWindows: `cannot be set for a windows pod`.", rec, true, framework.Releases{}, nil),
		mk("MountOption on a windows pod: Forbidden", "validateWindows: any value, MountOption too.", mo, true, framework.Releases{}, nil),
		mk("Foo on a windows pod: NotSupported and Forbidden", "both errors: the value and the windows rule.", "Foo", true, framework.Releases{}, nil),
		mk("Recursive on a windows pod, kube-apiserver v1.36: Forbidden", "the windows rule in every release.", rec, true, old, nil),
		mk("MountOption, kube-apiserver v1.36: NotSupported", "SELinuxMount off and no policy in an old pod: only Recursive (pkg/api/pod/util.go useOnlyRecursiveSELinuxChangePolicy), `supported values: \"Recursive\"`.", mo, false, old, nil),
		mk("Recursive, kube-apiserver v1.36: allowed", "Recursive is allowed whatever SELinuxMount says.", rec, false, old, nil),
		mk("MountOption, kube-apiserver v1.34: NotSupported", "SELinuxMount is beta and off in v1.34 too.", mo, false, framework.Releases{APIServer: "v1.34", Kubelet: "v1.34"}, nil),
		mk("Foo, kube-apiserver v1.36: NotSupported, Recursive only", "the list of supported values is Recursive alone.", "Foo", false, old, nil),
		mk("MountOption, kube-apiserver v1.36, update of a pod that had MountOption: allowed", "the ratchet: an old spec with any policy allows both values.", mo, false, old, &mo),
		mk("MountOption, kube-apiserver v1.36, update of a pod that had Recursive: allowed", "any policy in the old spec opens both values.", mo, false, old, &rec),
	}
}

// seLinuxMatrixCases: [selinux.mount] over every PersistentVolume source x access modes x
// policy, in both kubelet cells.
func seLinuxMatrixCases() []*framework.Case {
	modes := []struct {
		words string
		modes []corev1.PersistentVolumeAccessMode
	}{
		{"ReadWriteOncePod", []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod}},
		{"ReadWriteOnce", []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}},
		{"ReadOnlyMany", []corev1.PersistentVolumeAccessMode{corev1.ReadOnlyMany}},
		{"ReadWriteMany", []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}},
		{"ReadWriteOncePod and ReadWriteOnce", []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod, corev1.ReadWriteOnce}},
	}
	var cases []*framework.Case
	for _, r := range kubeletCells {
		for _, src := range seLinuxSources {
			for _, m := range modes {
				title := fmt.Sprintf("%s PersistentVolume, %s, pod label s0:c1,c2", src, m.words)
				cases = append(cases, inCell(seLinuxCase(title,
					"[selinux.mount] the plugin's support (iscsi, fc, a CSIDriver with seLinuxMount: true) and the access mode (SELinuxMount on: any; off: exactly ReadWriteOncePod) decide whether the volume is mounted with context=\"system_u:system_r:container_file_t:s0:c1,c2\".",
					seLinuxPod("", seLinuxL1, ""), seLinuxPV("pv-data", src, m.modes...)), r))
			}
		}
		for _, policy := range []corev1.PodSELinuxChangePolicy{corev1.SELinuxChangePolicyMountOption, corev1.SELinuxChangePolicyRecursive} {
			for _, m := range modes[:2] {
				title := fmt.Sprintf("csi-supported PersistentVolume, %s, seLinuxChangePolicy %s", m.words, policy)
				c := inCell(seLinuxCase(title,
					"[selinux.mount] Recursive opts out of the context mount (the runtime relabels); MountOption is what unset means.",
					seLinuxPod("", seLinuxL1, policy), seLinuxPV("pv-data", "csi-supported", m.modes...)), r)
				cases = append(cases, c)
			}
		}
	}
	return cases
}

// seLinuxLabelCases: where the label comes from ([selinux.mount] with volperm's translator) and
// [selinux.multiple-labels].
func seLinuxLabelCases() []*framework.Case {
	rwop := func() *corev1.PersistentVolume { return seLinuxPV("pv-data", "csi-supported", corev1.ReadWriteOncePod) }
	rwo := func() *corev1.PersistentVolume { return seLinuxPV("pv-data", "csi-supported", corev1.ReadWriteOnce) }
	containerOpts := func(p *corev1.Pod, i int, o *corev1.SELinuxOptions) *corev1.Pod {
		p.Spec.Containers[i].SecurityContext = &corev1.SecurityContext{SELinuxOptions: o}
		return p
	}
	second := func(p *corev1.Pod, init bool, o *corev1.SELinuxOptions) *corev1.Pod {
		c := p.Spec.Containers[0].DeepCopy()
		c.Name = "second"
		if o != nil {
			c.SecurityContext = &corev1.SecurityContext{SELinuxOptions: o}
		}
		if init {
			c.Name = "init"
			p.Spec.InitContainers = append(p.Spec.InitContainers, *c)
		} else {
			p.Spec.Containers = append(p.Spec.Containers, *c)
		}
		return p
	}
	unused := seLinuxPod("", seLinuxL1, "")
	unused.Spec.Containers[0].VolumeMounts = nil
	withInline := seLinuxPod("", seLinuxL1, "")
	withInline.Spec.Volumes = append(withInline.Spec.Volumes, volume("scratch", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}))
	withInline.Spec.Containers[0].VolumeMounts = append(withInline.Spec.Containers[0].VolumeMounts, corev1.VolumeMount{Name: "scratch", MountPath: "/scratch"})
	recursiveTwo := second(seLinuxPod("", seLinuxL1, corev1.SELinuxChangePolicyRecursive), false, seLinuxL2)
	noPluginTwo := second(seLinuxPod("", seLinuxL1, ""), false, seLinuxL2)
	cases := []*framework.Case{
		seLinuxCase("no seLinuxOptions anywhere: no context mount", "[selinux.mount] without a label the runtime picks one; the kubelet mounts without a context.",
			seLinuxPod("", nil, ""), rwop()),
		seLinuxCase("the container's seLinuxOptions only", "[selinux.mount] DetermineEffectiveSecurityContext: the container's options count as the pod's.",
			containerOpts(seLinuxPod("", nil, ""), 0, seLinuxL2), rwop()),
		seLinuxCase("the container's seLinuxOptions replace the pod's whole", "[selinux.mount] the container's options (level s0:c98,c99, no user) replace the pod's as a whole: user, role and type come from the translator's defaults, not from the pod.",
			containerOpts(seLinuxPod("", seLinuxL1, ""), 0, &corev1.SELinuxOptions{Level: "s0:c98,c99"}), rwop()),
		seLinuxCase("only a level: the translator's defaults for the rest", "[selinux.mount] volperm's translator (upstream's fake one): system_u, object_r, container_file_t.",
			seLinuxPod("", &corev1.SELinuxOptions{Level: "s0:c5,c6"}, ""), rwop()),
		seLinuxCase("empty seLinuxOptions: the translator's whole default", "[selinux.mount] options set but empty still give a label: system_u:object_r:container_file_t:s0:c998,c999 with volperm's translator (a real node allocates a level).",
			seLinuxPod("", &corev1.SELinuxOptions{}, ""), rwop()),
		seLinuxCase("type spc_t is kept", "[selinux.mount] only the process type container_t becomes container_file_t; any other type is the file label's.",
			seLinuxPod("", &corev1.SELinuxOptions{Type: "spc_t", Level: "s0"}, ""), rwop()),
		seLinuxCase("the container's type only over the pod's options: not merged", "[selinux.label] the container's options replace the pod's as a whole: type spc_t with the translator's user, role and level, nothing of the pod's level.",
			containerOpts(seLinuxPod("", seLinuxL1, ""), 0, &corev1.SELinuxOptions{Type: "spc_t"}), rwop()),
		seLinuxCase("the container's user only over the pod's options: not merged", "[selinux.label] user unconfined_u, everything else the translator's.",
			containerOpts(seLinuxPod("", seLinuxL2, ""), 0, &corev1.SELinuxOptions{User: "unconfined_u"}), rwop()),
		seLinuxCase("an init container's level over the pod's options, the app container without the volume", "[selinux.label] the init container alone mounts the volume: its options, replacing the pod's whole, are the label.",
			func() *corev1.Pod {
				p := second(seLinuxPod("", seLinuxL1, ""), true, &corev1.SELinuxOptions{Level: "s0:c7,c8"})
				p.Spec.Containers[0].VolumeMounts = nil
				return p
			}(), rwop()),
		seLinuxCase("only an init container mounts the volume", "[selinux.mount] init containers count: the volume is used, with the pod's label.",
			func() *corev1.Pod {
				p := second(seLinuxPod("", seLinuxL1, ""), true, nil)
				p.Spec.Containers[0].VolumeMounts = nil
				return p
			}(), rwop()),
		seLinuxCase("empty seLinuxOptions on the container only", "[selinux.label] set but empty options are a label, system_u:object_r:container_file_t:s0:c998,c999, not none.",
			containerOpts(seLinuxPod("", nil, ""), 0, &corev1.SELinuxOptions{}), rwop()),
		seLinuxCase("empty seLinuxOptions, ReadWriteMany", "[selinux.label] the defaults' label on any access mode with SELinuxMount on.",
			seLinuxPod("", &corev1.SELinuxOptions{}, ""), seLinuxPV("pv-data", "iscsi", corev1.ReadWriteMany)),
		seLinuxCase("two containers, one label", "[selinux.mount] one label however many containers give it.",
			second(seLinuxPod("", seLinuxL1, ""), false, nil), rwop()),
		seLinuxCase("a volume no container mounts: not mounted, no label", "[selinux.mount] the populator skips an unused volume.",
			unused, rwop()),
		seLinuxCase("an emptyDir beside the PersistentVolume: never a context mount", "[selinux.mount] an inline volume is never mounted with a context (VolumeSupportsSELinuxMount needs a PersistentVolume): the runtime relabels it.",
			withInline, rwop()),
	}
	inlineTwo := func(src corev1.VolumeSource) *corev1.Pod {
		p := second(seLinuxPod("", seLinuxL1, ""), false, seLinuxL2)
		p.Spec.Volumes[0] = volume("data", src)
		return p
	}
	cases = append(cases,
		seLinuxCase("two labels on an nfs PersistentVolume, ReadWriteMany: still fails", "[selinux.multiple-labels] nfs has no context mounts, but the labels are compared first: with SELinuxMount on the volume fails.",
			noPluginTwo.DeepCopy(), seLinuxPV("pv-data", "nfs", corev1.ReadWriteMany)),
		seLinuxCase("two labels on a csi PersistentVolume without a CSIDriver, ReadOnlyMany: still fails", "[selinux.multiple-labels] the same without a CSIDriver object.",
			noPluginTwo.DeepCopy(), seLinuxPV("pv-data", "csi-no-driver", corev1.ReadOnlyMany)),
		seLinuxCase("two containers, two labels on a configMap: ignored", "[selinux.multiple-labels] an inline volume is never context-mounted: a warning only, the volume is set up.",
			inlineTwo(corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "selinux"}, Optional: ptr(true)}}), rwop()),
		seLinuxCase("two containers, two labels on a secret: ignored", "[selinux.multiple-labels] the same for a secret.",
			inlineTwo(corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "selinux", Optional: ptr(true)}}), rwop()),
	)
	for _, r := range kubeletCells {
		cases = append(cases,
			inCell(seLinuxCase("two containers, two labels, ReadWriteOncePod: the volume fails", "[selinux.multiple-labels] a context mount is possible for ReadWriteOncePod: `multiple SELinux labels found: ...` fails the volume.",
				second(seLinuxPod("", seLinuxL1, ""), false, seLinuxL2), rwop()), r),
			inCell(seLinuxCase("two containers, two labels, ReadWriteOnce", "[selinux.multiple-labels] SELinuxMount on: the volume fails; off: ReadWriteOnce is never context-mounted, a warning, no label.",
				second(seLinuxPod("", seLinuxL1, ""), false, seLinuxL2), rwo()), r),
			inCell(seLinuxCase("an init container with another label, ReadWriteOncePod: the volume fails", "[selinux.multiple-labels] init containers count too.",
				second(seLinuxPod("", seLinuxL1, ""), true, seLinuxL2), rwop()), r),
			inCell(seLinuxCase("two labels with seLinuxChangePolicy Recursive: still fails", "[selinux.multiple-labels] the labels are compared before the policy is read.",
				recursiveTwo.DeepCopy(), rwop()), r),
			inCell(seLinuxCase("two labels on a csi-unsupported PersistentVolume, ReadWriteOncePod: still fails", "[selinux.multiple-labels] the labels are compared before the plugin's support.",
				noPluginTwo.DeepCopy(), seLinuxPV("pv-data", "csi-unsupported", corev1.ReadWriteOncePod)), r),
			inCell(seLinuxCase("two containers, two labels on an emptyDir: ignored", "[selinux.multiple-labels] an inline volume is never context-mounted: a warning only, the volume is set up.",
				func() *corev1.Pod {
					p := second(seLinuxPod("", seLinuxL1, ""), false, seLinuxL2)
					p.Spec.Volumes[0] = volume("data", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}})
					return p
				}(), rwop()), r),
		)
	}
	return cases
}

// seLinuxConflictCases: [selinux.conflict], a running pod on the same PersistentVolume.
func seLinuxConflictCases() []*framework.Case {
	running := func(opts *corev1.SELinuxOptions, policy corev1.PodSELinuxChangePolicy) *corev1.Pod {
		p := seLinuxPod("running", opts, policy)
		p.UID = "volperm-selinux-running"
		p.Namespace = framework.Namespace
		return p
	}
	unusedBy := func(p *corev1.Pod) *corev1.Pod {
		p.Spec.Containers[0].VolumeMounts = nil
		return p
	}
	initOnly := func(p *corev1.Pod) *corev1.Pod {
		ctr := p.Spec.Containers[0]
		ctr.Name = "init"
		p.Spec.InitContainers = []corev1.Container{ctr}
		p.Spec.Containers[0].VolumeMounts = nil
		return p
	}
	type row struct {
		title, desc     string
		source          string
		modes           []corev1.PersistentVolumeAccessMode
		first           *corev1.Pod
		opts            *corev1.SELinuxOptions
		policy          corev1.PodSELinuxChangePolicy
		cells           bool
		otherClaimFirst bool
	}
	rwop := []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod}
	rwx := []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}
	rows := []row{
		{"the same label as the running pod", "the volume is mounted once with that label for both.", "csi-supported", rwx, running(seLinuxL1, ""), seLinuxL1, "", true, false},
		{"another label than the running pod's, ReadWriteMany", "`conflicting SELinux labels of volume pv-data: \"...c1,c2\" and \"...c98,c99\"` with SELinuxMount on; off: ReadWriteMany is never context-mounted, ignored.", "csi-supported", rwx, running(seLinuxL1, ""), seLinuxL2, "", true, false},
		{"another label than the running pod's, ReadWriteOncePod", "a conflict in both cells.", "csi-supported", rwop, running(seLinuxL1, ""), seLinuxL2, "", true, false},
		{"Recursive after a running pod with the label", "Recursive is the empty label: `... \"...c1,c2\" and \"\"`.", "csi-supported", rwx, running(seLinuxL1, ""), seLinuxL1, corev1.SELinuxChangePolicyRecursive, false, false},
		{"the label after a running pod with Recursive", "`... \"\" and \"...c1,c2\"`; the volume is mounted without a context.", "iscsi", rwx, running(seLinuxL1, corev1.SELinuxChangePolicyRecursive), seLinuxL1, "", false, false},
		{"the label after a running pod without options", "no options is the empty label too.", "fc", rwop, running(nil, ""), seLinuxL1, "", true, false},
		{"both Recursive, different labels", "both empty: no conflict, no context mount.", "csi-supported", rwx, running(seLinuxL1, corev1.SELinuxChangePolicyRecursive), seLinuxL2, corev1.SELinuxChangePolicyRecursive, false, false},
		{"another label on a csi-unsupported PersistentVolume", "a plugin without context mounts checks no conflict: both mount, no context.", "csi-unsupported", rwx, running(seLinuxL1, ""), seLinuxL2, "", false, false},
		{"another label on an nfs PersistentVolume", "nfs mounts per pod (no device mount) and has no context mounts: no conflict.", "nfs", rwx, running(seLinuxL1, ""), seLinuxL2, "", false, false},
		{"another label on another PersistentVolume", "a running pod on another volume is no conflict.", "csi-supported", rwx, running(seLinuxL1, ""), seLinuxL2, "", false, true},
		{"a running pod that lists the volume but mounts it in no container", "the populator skips a volume no container uses: the running pod is not on it, the label is this pod's.", "csi-supported", rwx, unusedBy(running(seLinuxL2, "")), seLinuxL1, "", false, false},
		{"a running pod on iscsi, ReadWriteOncePod, that lists the volume in no container", "the running pod is not on the volume: no conflict.", "iscsi", rwop, unusedBy(running(seLinuxL2, "")), seLinuxL1, "", false, false},
		{"this pod lists the volume in no container, a running pod mounts it", "this pod is not on the volume: no conflict, no label, though its options differ.", "csi-supported", rwx, running(seLinuxL2, ""), nil, "", false, false},
		{"this pod lists the fc volume in no container, a running pod mounts it, ReadWriteOncePod", "the same on fc.", "fc", rwop, running(seLinuxL2, ""), nil, "", false, false},
		{"a running pod whose init container mounts the volume with another label", "init containers count for the running pod too: a conflict.", "csi-supported", rwx, initOnly(running(seLinuxL2, "")), seLinuxL1, "", false, false},
		{"empty options after a running pod with the defaults' label", "empty options are the translator's whole default: the same label, no conflict.", "fc", rwx, running(&corev1.SELinuxOptions{}, ""), &corev1.SELinuxOptions{}, "", false, false},
		{"empty options after a running pod with another label", "the defaults' label is a label: a conflict.", "iscsi", rwop, running(seLinuxL1, ""), &corev1.SELinuxOptions{}, "", false, false},
	}
	var cases []*framework.Case
	for _, r := range rows {
		cells := []framework.Releases{{}}
		if r.cells {
			cells = kubeletCells
		}
		for _, cell := range cells {
			first := r.first.DeepCopy()
			pv := seLinuxPV("pv-data", r.source, r.modes...)
			pod := seLinuxPod("", r.opts, r.policy)
			if r.opts == nil && strings.HasPrefix(r.title, "this pod lists") {
				pod = seLinuxPod("", seLinuxL1, r.policy)
				pod.Spec.Containers[0].VolumeMounts = nil
			}
			c := seLinuxCase(r.title, "[selinux.conflict] "+r.desc, pod, pv, first)
			if r.otherClaimFirst {
				first.Spec.Volumes[0].PersistentVolumeClaim.ClaimName = "other"
				c.SELinux.Claims["other"] = seLinuxPV("pv-other", r.source, r.modes...)
			}
			cases = append(cases, inCell(c, cell))
		}
	}
	return cases
}
