package catalogue

import (
	"fmt"
	"math"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/volperm/volperm/framework"
)

// boundaryCases are issue 30's boundary pass over the rules of docs/spec.md: the value on each
// side of every limit (0, -1, the highest and one above it), each enum member on its own, `..`
// inside a name against `..` as a path element, each field of an in-use list on its own (with
// the gate off, and on an apiserver of an older release), OnRootMismatch roots that fail one
// check only or match with more bits, the allowlist on volumes and PersistentVolumes of every
// other type. Each group names the rule ids it checks and the mutants of nodeimpl/mutant it
// kills (`make mutants` wants mutation.MinKillers cases per mutant).
func boundaryCases() []*framework.Case {
	var cases []*framework.Case
	for _, g := range [][]*framework.Case{
		emptyDirSizeLimit(), emptyDirSize(), emptyDirStickyOver0755(), kubeletModeGateUnset(), fsGroupZero(),
		hugePagesInitContainers(), hugePagesReadyAtRestart(), emptyDirModeRange(), emptyDirModeInUse(),
		hostPathDotDotNames(), hostPathTypeCase(), hostPathUnsetNoCheck(), hostPathRecheckAtRestart(), hostPathCreateEdges(),
		policyRootBits(), policyAtRestart(),
		itemModeZero(), fileModeRange(), dotDotInItemPaths(), fieldRefDefaulting(),
		userZero(), userInUsePerField(), userKubeletGateUnset(), downwardAPIUserPaths(), tokenExpiration(),
		preserveEdges(), noSourceDefaulting(), allowlistEdges(),
	} {
		cases = append(cases, g...)
	}
	return cases
}

// A second fsGroup member and the probes the boundary cases share.
var asFSGroup2 = framework.User{UID: 1005, GID: 1005, Groups: []int64{fsGroup}}

// strangerProbes: uid 1003 (no group of the volume) lists the root and creates a file in it.
func strangerProbes(vol string) []framework.Probe {
	return []framework.Probe{
		painProbe("uid 1003 lists the root", vol, asOther, framework.OpList, "."),
		painProbe("uid 1003 creates f", vol, asOther, framework.OpCreate, "f"),
	}
}

// emptyDirSizeLimit: [emptydir.mode] on medium Memory with a sizeLimit, whose tmpfs is mounted
// with a size= option ([emptydir.hugepages-size]): the mode applies whatever the mount options.
// sizeLimit's own boundary: -1 is invalid, 0 gives no size= option, 1 byte is the smallest.
// Kills blind-emptydir-memory-sizelimit-no-mode.
func emptyDirSizeLimit() []*framework.Case {
	on := gates(framework.GateEmptyDirVolumeMode, true, true)
	pod := func(mode *int32, limit string) *corev1.Pod {
		p := emptyDirPod(media[1], mode)
		q := resource.MustParse(limit)
		p.Spec.Volumes[0].EmptyDir.SizeLimit = &q
		return p
	}
	const desc = "KEP-5502 test plan: the pod sees exactly mode on every medium; a Memory emptyDir with sizeLimit is a tmpfs mounted with size=, and the mode applies to it as to any other."
	return []*framework.Case{{
		Name:        "emptyDir mode 0750 on medium Memory with sizeLimit 64Mi, both gates on, probed by uid 1003",
		Area:        framework.AreaEmptyDir,
		Profile:     framework.ProfileAlpha,
		Description: desc + " Others have no access: uid 1003 can neither list nor create.",
		Gates:       on,
		Pod:         pod(ptr[int32](0750), "64Mi"),
		Probes:      strangerProbes(emptyDirVolume),
	}, {
		Name:        "emptyDir mode 0000 on medium Memory with sizeLimit 1 (one byte, the smallest), both gates on, probed by uid 1003",
		Area:        framework.AreaEmptyDir,
		Profile:     framework.ProfileAlpha,
		Description: desc + " A positive sizeLimit of one byte still gives size= (v1.37 generateTmpfsMountOptions).",
		Gates:       on,
		Pod:         pod(ptr[int32](0), "1"),
		Probes:      append(strangerProbes(emptyDirVolume), fillProbe("root writes 64Ki + 1 bytes to g", asRoot, "g", 64<<10+1)),
	}, {
		Name:        fmt.Sprintf("emptyDir mode 0700 on medium Memory with sizeLimit 64Mi and fsGroup %d, both gates on", fsGroup),
		Area:        framework.AreaEmptyDir,
		Profile:     framework.ProfileAlpha,
		Description: desc + " The walk then makes 0700 2770 gid 2000 ([emptydir.fsgroup]).",
		Gates:       on,
		Pod:         withFSGroup(pod(ptr[int32](0700), "64Mi"), fsGroup),
	}, {
		Name:        "emptyDir mode 0750 on medium Memory with sizeLimit 0, both gates on, probed by uid 1003",
		Area:        framework.AreaEmptyDir,
		Profile:     framework.ProfileAlpha,
		Description: desc + " sizeLimit 0 is valid and gives no size= option (only a positive limit does).",
		Gates:       on,
		Pod:         pod(ptr[int32](0750), "0"),
		Probes:      append(strangerProbes(emptyDirVolume), fillProbe("root writes 1Mi + 1 bytes to g", asRoot, "g", 1<<20+1)),
	}, {
		Name:        "emptyDir without mode on medium Memory with sizeLimit 64Mi",
		Area:        framework.AreaEmptyDir,
		Profile:     framework.ProfileConformance,
		Description: "GA behaviour: a sized tmpfs has tmpfs' root, 1777, like an unsized one ([emptydir.default]).",
		Pod:         pod(nil, "64Mi"),
	}, {
		Name:          "emptyDir on medium Memory with sizeLimit -1 at admission",
		Area:          framework.AreaEmptyDir,
		Profile:       framework.ProfileConformance,
		Description:   "v1.37 validateVolumeSource: a negative sizeLimit is forbidden (0 is the lowest valid value).",
		Pod:           pod(nil, "-1"),
		AdmissionOnly: true,
	}}
}

// fillProbe writes size bytes to a new file path of the emptyDir as u ([emptydir.size]).
func fillProbe(name string, u framework.User, path string, size int64) framework.Probe {
	return framework.Probe{Name: name, Volume: emptyDirVolume, As: u, Op: framework.OpFill, Path: path, Size: size}
}

// emptyDirSize: [emptydir.size] what a pod can write to an emptyDir with a sizeLimit, on each
// side of the limit: a Memory volume's tmpfs is exactly sizeLimit (whole pages) for a positive
// limit and unbounded by the volume for 0 or none; the default medium refuses nothing at write
// time; hugetlbfs refuses write(2). Sizes are those on which 4 KiB and 64 KiB pages agree.
// Kills emptydir-memory-no-size and emptydir-memory-size-off-by-a-page.
func emptyDirSize() []*framework.Case {
	pod := func(m medium, limit string) *corev1.Pod {
		p := emptyDirPod(m, nil)
		if limit != "" {
			q := resource.MustParse(limit)
			p.Spec.Volumes[0].EmptyDir.SizeLimit = &q
		}
		return p
	}
	const desc = "v1.37 generateTmpfsMountOptions: a Memory emptyDir with a positive sizeLimit is a tmpfs mounted size=sizeLimit, so the pod can write exactly that much; "
	sized := func(name, d string, m medium, limit string, probes ...framework.Probe) *framework.Case {
		return &framework.Case{
			Name:        name,
			Area:        framework.AreaEmptyDir,
			Profile:     framework.ProfileConformance,
			Description: desc + d,
			Pod:         pod(m, limit),
			Probes:      probes,
		}
	}
	return []*framework.Case{
		sized("emptyDir on medium Memory with sizeLimit 1Mi: uid 1003 writes 1Mi, then root cannot write one byte more",
			"the limit binds root as well (tmpfs reserves nothing for root).", media[1], "1Mi",
			fillProbe("uid 1003 writes 1Mi to f", asOther, "f", 1<<20),
			fillProbe("root writes 1 byte to g", asRoot, "g", 1)),
		sized("emptyDir on medium Memory with sizeLimit 1Mi: a write of 1Mi + 1 bytes fails ENOSPC",
			"one byte past the limit fails, the file keeps what fitted.", media[1], "1Mi",
			fillProbe("uid 1003 writes 1Mi + 1 bytes to f", asOther, "f", 1<<20+1)),
		sized("emptyDir on medium Memory with sizeLimit 1Mi minus 64Ki: a write of 1Mi fails ENOSPC",
			"a limit just below the write: the size is the sizeLimit's, not rounded up to a larger unit.", media[1], "960Ki",
			fillProbe("root writes 1Mi to f", asRoot, "f", 1<<20)),
		sized("emptyDir on medium Memory without sizeLimit: a write of 16Mi succeeds",
			"without a sizeLimit the volume sets no size (calculateEmptyDirMemorySize then takes the node's allocatable memory).", media[1], "",
			fillProbe("uid 1003 writes 16Mi to f", asOther, "f", 16<<20)),
		sized("emptyDir on the default medium with sizeLimit 1Mi: a write of 512Ki succeeds",
			"the default medium is the node's disk, not a tmpfs: its sizeLimit is enforced by eviction, later, not at write time (eviction is not observed).", media[0], "1Mi",
			fillProbe("uid 1003 writes 512Ki to f", asOther, "f", 512<<10)),
		sized("emptyDir on medium HugePages-2Mi: a write(2) of one byte fails EINVAL",
			"hugetlbfs has no write(2) (fs/hugetlbfs/inode.c): a file there can be created but only mmap'ed.", media[2], "",
			fillProbe("root writes 1 byte to f", asRoot, "f", 1)),
	}
}

// emptyDirStickyOver0755: [emptydir.mode] with 01755, whose permission bits are the 0755 that
// MkdirAll leaves under umask 022 and whose only other bit is sticky: the chmod must still run.
// With fsGroup the root is 3775, where the sticky bit keeps one fsGroup member from deleting
// another's file; beside a 0755 emptyDir only the sticky bit tells the two apart. Kills
// blind-emptydir-mode-chmod-only-on-perm-diff.
func emptyDirStickyOver0755() []*framework.Case {
	on := gates(framework.GateEmptyDirVolumeMode, true, true)
	withProbes := withFSGroup(emptyDirPod(media[0], ptr[int32](01755)), fsGroup)
	return []*framework.Case{{
		Name:        fmt.Sprintf("emptyDir mode 01755 with fsGroup %d on the default medium, both gates on", fsGroup),
		Area:        framework.AreaEmptyDir,
		Profile:     framework.ProfileAlpha,
		Description: "v1.37 setupDir chmods to mode, then the walk adds 0660|0110 and setgid: 01755 becomes 3775 gid 2000, sticky kept.",
		Gates:       on,
		Pod:         withFSGroup(emptyDirPod(media[0], ptr[int32](01755)), fsGroup),
	}, {
		Name:        fmt.Sprintf("emptyDir mode 01755 with fsGroup %d on the default medium: an fsGroup member cannot delete another member's file", fsGroup),
		Area:        framework.AreaEmptyDir,
		Profile:     framework.ProfileAlpha,
		Description: "KEP-5502 story 2 with fsGroup: the root is 3775 gid 2000, so every fsGroup member creates files, and the sticky bit lets only a file's owner delete or rename it (EPERM).",
		Gates:       on,
		Pod:         withProbes,
		Probes: []framework.Probe{
			painProbe("uid 1004 creates a", emptyDirVolume, asFSGroup, framework.OpCreate, "a"),
			painProbe("uid 1005 deletes a", emptyDirVolume, asFSGroup2, framework.OpDelete, "a"),
			painProbe("uid 1005 creates b", emptyDirVolume, asFSGroup2, framework.OpCreate, "b"),
			painProbe("uid 1004 deletes b", emptyDirVolume, asFSGroup, framework.OpDelete, "b"),
			painProbe("uid 1004 deletes a", emptyDirVolume, asFSGroup, framework.OpDelete, "a"),
		},
	}, {
		Name:        "emptyDir modes 01755 and 0755 on two emptyDirs of the default medium, both gates on",
		Area:        framework.AreaEmptyDir,
		Profile:     framework.ProfileAlpha,
		Description: "Each emptyDir gets exactly its own mode: the two roots differ by the sticky bit only (1755, 0755).",
		Gates:       on,
		Pod: podOf(
			volume("sticky", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Mode: ptr[int32](01755)}}),
			volume("plain", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Mode: ptr[int32](0755)}})),
	}}
}

// kubeletModeGateUnset: [emptydir.mode-gate-off] with the kubelet's EmptyDirVolumeMode left at
// its default (off, alpha) on the medium and modes conditions.go leaves out: HugePages, mode 0
// (the lowest) and a mode with fsGroup. Kills gates-kubelet-mode-default-on.
func kubeletModeGateUnset() []*framework.Case {
	rows := []struct {
		phrase string
		pod    *corev1.Pod
	}{
		{"emptyDir mode 0750 on medium HugePages-2Mi", emptyDirPod(media[2], ptr[int32](0750))},
		{"emptyDir mode 0000 on the default medium", emptyDirPod(media[0], ptr[int32](0))},
		{fmt.Sprintf("emptyDir mode 0750 with fsGroup %d on the default medium", fsGroup), withFSGroup(emptyDirPod(media[0], ptr[int32](0750)), fsGroup)},
	}
	var cases []*framework.Case
	for _, r := range rows {
		cases = append(cases, &framework.Case{
			Name:        r.phrase + ", apiserver gate on, kubelet gate left at its default",
			Area:        framework.AreaSkew,
			Profile:     framework.ProfileAlpha,
			Description: "KEP-5502: EmptyDirVolumeMode is alpha, off unless set; a kubelet that does not set it ignores the mode the apiserver kept (0777, hugetlbfs' 0755; with fsGroup 2777).",
			Gates:       framework.Gates{APIServer: map[string]bool{framework.GateEmptyDirVolumeMode: true}},
			Pod:         r.pod,
		})
	}
	return cases
}

// fsGroupZero: [emptydir.fsgroup] [walk.mask] [walk.tree] with fsGroup 0, the lowest gid: it is
// set, so the walk runs (setgid, group bits, group root) on every medium; and the highest gid,
// 2147483647, on a flexVolume. Kills blind-emptydir-fsgroup-zero-no-walk.
func fsGroupZero() []*framework.Case {
	var cases []*framework.Case
	for _, m := range media {
		cases = append(cases, &framework.Case{
			Name:        fmt.Sprintf("emptyDir without mode with fsGroup 0 on %s", m.phrase),
			Area:        framework.AreaEmptyDir,
			Profile:     framework.ProfileConformance,
			Description: "fsGroup 0 is a group like any other (v1.37 SetVolumeOwnership returns only for a nil fsGroup): the root gets gid 0, setgid and 0660|0110 (2777, 3777 on tmpfs, 2775 on hugetlbfs).",
			Pod:         withFSGroup(emptyDirPod(m, nil), 0),
		})
	}
	cases = append(cases, &framework.Case{
		Name:        "emptyDir mode 0700 with fsGroup 0 on the default medium, both gates on",
		Area:        framework.AreaEmptyDir,
		Profile:     framework.ProfileAlpha,
		Description: "The walk runs after the mode for fsGroup 0 too: 0700 becomes 2770 gid 0.",
		Gates:       gates(framework.GateEmptyDirVolumeMode, true, true),
		Pod:         withFSGroup(emptyDirPod(media[0], ptr[int32](0700)), 0),
	})
	storage := []framework.File{
		{Path: "file", Mode: 0600, UID: 1000, GID: 3000},
		{Path: "sub", Dir: true, Mode: 0700, UID: 1000, GID: 3000},
	}
	for _, gid := range []int64{0, math.MaxInt32} {
		p := flexPod(false, nil, false)
		p.Spec.SecurityContext.FSGroup = ptr(gid)
		what := "0, the lowest gid"
		if gid != 0 {
			what = "2147483647, the highest gid"
		}
		cases = append(cases, fsGroupCase(fmt.Sprintf("fsGroup %s, walks a flexVolume", what),
			"v1.37 walkDeep: every entry gets the group fsGroup and the rw mask, whatever the gid within 0..2147483647.",
			p, storage))
	}
	return cases
}

// hugePagesContainer is a container that mounts scratch and requests res (limits = requests, as
// huge pages need).
func hugePagesContainer(name string, res corev1.ResourceList, mount bool) corev1.Container {
	c := corev1.Container{Name: name, Image: framework.ProbeImage, ImagePullPolicy: corev1.PullNever}
	if res != nil {
		c.Resources = corev1.ResourceRequirements{Limits: res, Requests: res.DeepCopy()}
	}
	if mount {
		c.VolumeMounts = []corev1.VolumeMount{{Name: emptyDirVolume, MountPath: "/volumes/" + emptyDirVolume}}
	}
	return c
}

// hugePages is the hugepages-<size> request of one container, with the memory request huge
// pages need.
func hugePages(size string) corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceHugePagesPrefix + corev1.ResourceName(size): resource.MustParse(size),
		corev1.ResourceMemory: resource.MustParse("64Mi"),
	}
}

// hugePagesInitContainers: [emptydir.hugepages-size] where the page size comes from an init
// container (v1.37 getPageSizeMountOption reads containers and init containers): alone, as a
// sidecar, and disagreeing with the container on a HugePages medium without a size. Kills
// blind-emptydir-hugepages-init-containers-ignored.
func hugePagesInitContainers() []*framework.Case {
	hp := medium{corev1.StorageMediumHugePages, "medium HugePages"}
	pod := func(ctr, init corev1.ResourceList, sidecar bool) *corev1.Pod {
		p := emptyDirPod(hp, nil)
		p.Spec.Containers = []corev1.Container{hugePagesContainer("probe", ctr, true)}
		ic := hugePagesContainer("init", init, false)
		if sidecar {
			ic.RestartPolicy = ptr(corev1.ContainerRestartPolicyAlways)
		}
		p.Spec.InitContainers = []corev1.Container{ic}
		return p
	}
	const desc = "v1.37 getPageSizeMountOption: the page size comes from the hugepages-<size> requests of the containers and the init containers"
	return []*framework.Case{{
		Name:        "emptyDir on medium HugePages in a pod whose init container alone requests hugepages-2Mi",
		Area:        framework.AreaEmptyDir,
		Profile:     framework.ProfileConformance,
		Description: desc + " (\"in some rare cases init containers can also consume huge pages\"): hugetlbfs is mounted with pagesize=2Mi, root 0755.",
		Pod:         pod(nil, hugePages("2Mi"), false),
	}, {
		Name:        "emptyDir on medium HugePages in a pod whose sidecar (a restartable init container) alone requests hugepages-2Mi",
		Area:        framework.AreaEmptyDir,
		Profile:     framework.ProfileConformance,
		Description: desc + ": a sidecar is an init container, so its request gives the page size.",
		Pod:         pod(nil, hugePages("2Mi"), true),
	}, {
		Name:        "emptyDir on medium HugePages in a pod whose container requests hugepages-2Mi and init container hugepages-1Gi",
		Area:        framework.AreaEmptyDir,
		Profile:     framework.ProfileConformance,
		Description: desc + ": medium HugePages without a size needs one page size in the whole pod; two fail the SetUp with upstream's text.",
		Pod:         pod(hugePages("2Mi"), hugePages("1Gi"), false),
	}}
}

// hugePagesReadyAtRestart: [emptydir.ready] on HugePages: a ready volume is left alone at a
// kubelet restart, with a mode, without one and on the medium without a size. Upstream v1.37
// sets a HugePages volume up again (a known difference, framework/knowndiff). Kills
// blind-emptydir-restart-hugepages-set-up-again.
func hugePagesReadyAtRestart() []*framework.Case {
	chmodRoot := func(mode uint32) framework.Step {
		return framework.Step{Chmod: &framework.Chmod{Volume: emptyDirVolume, Path: ".", Mode: mode}}
	}
	plain := medium{corev1.StorageMediumHugePages, "medium HugePages"}
	return []*framework.Case{{
		Name:        "emptyDir mode 0700 on medium HugePages-2Mi chmod'ed 0755 by a container, then a kubelet restart, probed by uid 1003",
		Area:        framework.AreaEmptyDir,
		Profile:     framework.ProfileAlpha,
		Description: "A second SetUp of a ready emptyDir does nothing on every medium: the container's 0755 stays, so uid 1003 may list the root.",
		Gates:       gates(framework.GateEmptyDirVolumeMode, true, true),
		Pod:         emptyDirPod(media[2], ptr[int32](0700)),
		After:       []framework.Step{chmodRoot(0755), restart},
		Probes:      []framework.Probe{painProbe("uid 1003 lists the root", emptyDirVolume, asOther, framework.OpList, ".")},
	}, {
		Name:        "emptyDir without mode on medium HugePages-2Mi chmod'ed 0700 by a container, then a kubelet restart",
		Area:        framework.AreaEmptyDir,
		Profile:     framework.ProfileConformance,
		Description: "A second SetUp of a ready emptyDir does nothing: no chmod back to 0777, the container's 0700 stays.",
		Pod:         emptyDirPod(media[2], nil),
		After:       []framework.Step{chmodRoot(0700), restart},
	}, {
		Name:        fmt.Sprintf("fsGroup %d is not applied again to an emptyDir on medium HugePages after a kubelet restart", fsGroup),
		Area:        framework.AreaFSGroup,
		Profile:     framework.ProfileConformance,
		Description: "A second SetUp of a ready emptyDir does nothing on every medium, HugePages without a size too: the container's chmod of the root stays.",
		Pod:         withFSGroup(emptyDirPod(plain, nil), fsGroup),
		After:       []framework.Step{chmodRoot(0755), restart},
	}}
}

// emptyDirModeRange: [validation.emptydir-mode] at the ends of int32, and below 0 on Memory.
// Kills valid-emptydir-mode-negative-accepted.
func emptyDirModeRange() []*framework.Case {
	rows := []struct {
		phrase string
		m      medium
		mode   int32
	}{
		{"-2147483648 (the lowest int32)", media[0], math.MinInt32},
		{"-1 on medium Memory", media[1], -1},
		{"2147483647 (the highest int32)", media[0], math.MaxInt32},
	}
	var cases []*framework.Case
	for _, r := range rows {
		cases = append(cases, &framework.Case{
			Name:          fmt.Sprintf("emptyDir mode %s at admission, both gates on", r.phrase),
			Area:          framework.AreaEmptyDir,
			Profile:       framework.ProfileAlpha,
			Description:   "KEP-5502 validation: 0..01777 inclusive on every medium, however far outside (value printed in decimal).",
			Gates:         gates(framework.GateEmptyDirVolumeMode, true, true),
			Pod:           emptyDirPod(r.m, ptr(r.mode)),
			AdmissionOnly: true,
		})
	}
	return cases
}

// emptyDirModeInUse: [dropping.emptydir-mode] on update with the apiserver gate off: mode 0 is a
// mode (non-nil), and in use means on ANY emptyDir of the old pod, also one of another name; on
// an apiserver of an older release the old pod never had the field ([releases.apiserver-unknown-field]).
// Kills blind-drop-mode-zero-not-in-use, drop-mode-in-use-same-volume-only.
func emptyDirModeInUse() []*framework.Case {
	named := func(name string, mode *int32) *corev1.Pod {
		return podOf(volume(name, corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Mode: mode}}))
	}
	twoDirs := func(a, b *int32) *corev1.Pod {
		return podOf(
			volume("first", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Mode: a}}),
			volume("second", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Mode: b}}))
	}
	c := cell{false, true}
	rows := []struct {
		name     string
		old, new *corev1.Pod
	}{
		{"pod update keeping emptyDir mode 0000", emptyDirPod(media[0], ptr[int32](0)), emptyDirPod(media[0], ptr[int32](0))},
		{"pod update changing emptyDir mode 0000 to 0750", emptyDirPod(media[0], ptr[int32](0)), emptyDirPod(media[0], ptr[int32](0750))},
		{"pod update adding emptyDir mode 0750 to a second emptyDir when the first has mode 0000", twoDirs(ptr[int32](0), nil), twoDirs(ptr[int32](0), ptr[int32](0750))},
		{"pod update renaming the emptyDir cache with mode 0700 to scratch", named("cache", ptr[int32](0700)), named(emptyDirVolume, ptr[int32](0700))},
	}
	var cases []*framework.Case
	for _, r := range rows {
		cases = append(cases, &framework.Case{
			Name:        fmt.Sprintf("%s, %s", r.name, c.phrase()),
			Area:        framework.AreaSkew,
			Profile:     framework.ProfileAlpha,
			Description: "v1.37 emptyDirVolumeModeInUse: a non-nil mode (0 included) on any emptyDir of the old spec keeps every mode of the update with the apiserver gate off.",
			Gates:       c.gates(),
			OldPod:      r.old,
			Pod:         r.new,
		})
	}
	for _, r := range []struct {
		releases framework.Releases
		gates    framework.Gates
		words    string
	}{
		{framework.Releases{APIServer: "v1.36", Kubelet: "v1.36"}, framework.Gates{}, "kube-apiserver v1.36, which lacks the field, asked to warn (client-go), kubelet v1.36"},
		{framework.Releases{Kubelet: "v1.36"}, framework.Gates{APIServer: map[string]bool{framework.GateEmptyDirVolumeMode: false}}, "kube-apiserver v1.37 with its gate off, kubelet v1.36"},
	} {
		cases = append(cases, &framework.Case{
			Name:        "pod update keeping emptyDir mode 0750, " + r.words,
			Area:        framework.AreaSkew,
			Profile:     framework.ProfileAlpha,
			Labels:      framework.SkewLabels(r.releases),
			Description: "Release skew on update: an apiserver without the field stored the old pod without it (nothing in use: the new mode is warned about and gone); one with the gate off keeps the mode the old pod used, which a kubelet without the field never sees (0777).",
			Releases:    r.releases,
			Gates:       r.gates,
			OldPod:      emptyDirPod(media[0], ptr[int32](0750)),
			Pod:         emptyDirPod(media[0], ptr[int32](0750)),
		})
	}
	return cases
}

// hostPathDotDotNames: [validation.hostpath] and the kubelet's own check ([hostpath.type-check]):
// `..` is refused as a path element only, at the start, in the middle, at the end and alone; a
// name that merely contains `..` (..cache, a..b, cache.., ...) is an ordinary name, admitted and
// set up. Kills blind-valid-dotdot-inside-name, blind-hostpath-kubelet-dotdot-in-name,
// valid-hostpath-backsteps-accepted.
func hostPathDotDotNames() []*framework.Case {
	var cases []*framework.Case
	for _, r := range []struct{ phrase, path string }{
		{"a name starting with .. (..cache)", hostPathRoot + "..cache"},
		{"a name with .. inside (a..b)", hostPathRoot + "a..b"},
		{"a name ending in .. (cache..)", hostPathRoot + "cache.."},
		{"the name ... (three dots)", hostPathRoot + "..."},
		{"the path .. alone", ".."},
		{"a path starting with a .. element", "../var/run/volperm"},
		{"the path /..", "/.."},
	} {
		cases = append(cases, &framework.Case{
			Name:          "hostPath with " + r.phrase + " at admission",
			Area:          framework.AreaHostPath,
			Profile:       framework.ProfileConformance,
			Description:   "v1.37 validatePathNoBacksteps splits the path at '/' and refuses an element that is exactly '..'; a name that only contains two dots is admitted.",
			Pod:           hostPathPod(r.path, nil),
			AdmissionOnly: true,
		})
	}
	for _, r := range []struct {
		t    corev1.HostPathType
		kind framework.ObjectKind
		name string
	}{
		{corev1.HostPathDirectory, framework.KindDirectory, "..cache"},
		{corev1.HostPathUnset, framework.KindDirectory, "a..b"},
		{corev1.HostPathDirectoryOrCreate, framework.KindNothing, "..data"},
		{corev1.HostPathFile, framework.KindFile, "config..yaml"},
	} {
		what := fmt.Sprintf("a %s named %s", r.kind, r.name)
		if r.kind == framework.KindNothing {
			what = "nothing at a path named " + r.name
		} else {
			what += " at the path"
		}
		p := hostPathRoot + "dots/" + r.name
		cases = append(cases, &framework.Case{
			Name:        fmt.Sprintf("hostPath type %s with %s", typePhrase(r.t), what),
			Area:        framework.AreaHostPath,
			Profile:     framework.ProfileConformance,
			Description: "v1.37 hostPathMounter.SetUp checks the path with validatePathNoBacksteps again: a name containing '..' is no backstep, the volume is set up as any other.",
			Host:        []framework.HostObject{{Path: p, Kind: r.kind}},
			Pod:         hostPathPod(p, ptr(r.t)),
		})
	}
	return cases
}

// hostPathTypeCase: [validation.hostpath] every type but "" and the two hostpath.go has, in
// another case: types are exact strings. Kills valid-hostpath-type-case-insensitive.
func hostPathTypeCase() []*framework.Case {
	var cases []*framework.Case
	for _, t := range []string{"DIRECTORY", "directoryorcreate", "file", "socket", "chardevice", "blockDevice"} {
		cases = append(cases, &framework.Case{
			Name:          fmt.Sprintf("hostPath with the type %q in another case at admission", t),
			Area:          framework.AreaHostPath,
			Profile:       framework.ProfileConformance,
			Description:   "v1.37 validateHostPathType: the type is one of eight exact strings; another case is Unsupported value.",
			Pod:           hostPathPod(hostPathRoot+"case", ptr(corev1.HostPathType(t))),
			AdmissionOnly: true,
		})
	}
	return cases
}

// hostPathUnsetNoCheck: [hostpath.create] type "" checks nothing, [snapshot.hostpath-absent]:
// a dangling symlink, a path below a file and nothing at all, at a restart too, are set up and
// left to the runtime. Kills hostpath-unset-checks-existence.
func hostPathUnsetNoCheck() []*framework.Case {
	unset := corev1.HostPathUnset
	dangling, file, nothing := hostPathRoot+"unset-dangling", hostPathRoot+"unset-file", hostPathRoot+"unset-nothing"
	hp := func(name string, host []framework.HostObject, path string, after ...framework.Step) *framework.Case {
		return &framework.Case{
			Name: name, Area: framework.AreaHostPath, Profile: framework.ProfileConformance,
			Description: "v1.37 hostPathMounter.SetUp: type \"\" (HostPathUnset) means no check at all, whatever is (or is not) at the path; what a container sees there is the runtime's.",
			Labels:      []string{LabelRuntimeDefined},
			Host:        host, Pod: hostPathPod(path, &unset), After: after,
		}
	}
	return []*framework.Case{
		hp(`hostPath type "" (unset) with a dangling symlink at the path`,
			[]framework.HostObject{{Path: dangling, Kind: framework.KindSymlink, Target: hostPathRoot + "nowhere"}}, dangling),
		hp(`hostPath type "" (unset) with a path below a file`,
			[]framework.HostObject{{Path: file, Kind: framework.KindFile}}, file+"/below"),
		hp(`hostPath type "" (unset) with nothing at the path, after a kubelet restart`,
			[]framework.HostObject{{Path: nothing, Kind: framework.KindNothing}}, nothing, restart),
	}
}

// hostPathRecheckAtRestart: [hostpath.recheck] a check that fails at the first SetUp fails again
// at a restart, for more types and objects, and BlockDevice refuses a char device however
// reached ([hostpath.type-check], [hostpath.symlinks]). Kills hostpath-no-recheck-on-restart,
// blind-hostpath-block-accepts-char.
func hostPathRecheckAtRestart() []*framework.Case {
	var cases []*framework.Case
	for _, r := range []struct {
		t    corev1.HostPathType
		o    hostObject
		slug string
	}{
		{corev1.HostPathFile, hostObjects[1], "file-dir"},
		{corev1.HostPathBlockDev, hostObjects[4], "block-char"},
		{corev1.HostPathCharDev, hostObjects[0], "char-nothing"},
	} {
		p := hostPathRoot + "recheck-" + r.slug
		cases = append(cases, &framework.Case{
			Name:        fmt.Sprintf("hostPath type %s with %s at the path, after a kubelet restart", r.t, r.o.phrase),
			Area:        framework.AreaHostPath,
			Profile:     framework.ProfileConformance,
			Description: "v1.37 hostPathMounter.SetUp checks the type on every SetUp: the restart fails with the same text as the first SetUp.",
			Host:        []framework.HostObject{{Path: p, Kind: r.o.kind}},
			Pod:         hostPathPod(p, ptr(r.t)),
			After:       []framework.Step{restart},
		})
	}
	dev, link, chain := hostPathRoot+"chain-char", hostPathRoot+"chain-link", hostPathRoot+"chain-link2"
	cases = append(cases, &framework.Case{
		Name:        "hostPath type BlockDevice with a symlink to a symlink to a char device at the path",
		Area:        framework.AreaHostPath,
		Profile:     framework.ProfileConformance,
		Description: "v1.37 checkType follows every symlink (stat): at the end is a character device, which is not a block device.",
		Host: []framework.HostObject{{Path: dev, Kind: framework.KindCharDev},
			{Path: link, Kind: framework.KindSymlink, Target: dev}, {Path: chain, Kind: framework.KindSymlink, Target: link}},
		Pod: hostPathPod(chain, ptr(corev1.HostPathBlockDev)),
	})
	return cases
}

// hostPathCreateEdges: [hostpath.create] [hostpath.symlinks] [snapshot.hostpath-absent]:
// FileOrCreate never makes a missing parent, also at a restart or with fsGroup; DirectoryOrCreate
// stops at a dangling symlink however it meets it (MkdirAll's EEXIST is ignored) and leaves
// nothing there; FileOrCreate through a dangling symlink creates its target. Kills
// hostpath-fileorcreate-makes-parents, blind-hostpath-directoryorcreate-eexist-fails.
func hostPathCreateEdges() []*framework.Case {
	fileOrCreate, dirOrCreate := corev1.HostPathFileOrCreate, corev1.HostPathDirectoryOrCreate
	hp := func(name, desc string, host []framework.HostObject, pod *corev1.Pod, runtime bool, after ...framework.Step) *framework.Case {
		c := &framework.Case{Name: name, Area: framework.AreaHostPath, Profile: framework.ProfileConformance,
			Description: desc, Host: host, Pod: pod, After: after}
		if runtime {
			c.Labels = []string{LabelRuntimeDefined}
		}
		return c
	}
	const noParent = "Seed 001 FileOrCreate: a file is created only in an existing directory (v1.37 makeFile: open O_CREATE); the open fails with the kernel's error"
	const stops = "v1.37 makeDir: MkdirAll meets a symlink that leads nowhere, Mkdir says EEXIST, which makeDir ignores; nothing is created behind the symlink, the set-up succeeds with nothing there"
	link, below, far := hostPathRoot+"dangling-again", hostPathRoot+"dangling-parent", hostPathRoot+"dangling-far"
	fileLink := hostPathRoot + "dangling-file"
	return []*framework.Case{
		hp("hostPath type FileOrCreate whose parent directory does not exist, after a kubelet restart", noParent+", at every SetUp.",
			nil, hostPathPod(hostPathRoot+"missing-parent-restart/file", &fileOrCreate), false, restart),
		hp(fmt.Sprintf("hostPath type FileOrCreate whose parent directory does not exist, with fsGroup %d", fsGroup), noParent+"; fsGroup changes nothing about that.",
			nil, withFSGroup(hostPathPod(hostPathRoot+"missing-parent-fsgroup/file", &fileOrCreate), fsGroup), false),
		hp("hostPath type DirectoryOrCreate with a dangling symlink at the path, after a kubelet restart", stops+", at every SetUp.",
			[]framework.HostObject{{Path: link, Kind: framework.KindSymlink, Target: hostPathRoot + "nowhere-again"}},
			hostPathPod(link, &dirOrCreate), true, restart),
		hp("hostPath type DirectoryOrCreate with a path below a dangling symlink", stops+": MkdirAll of the parent is where it stops.",
			[]framework.HostObject{{Path: below, Kind: framework.KindSymlink, Target: hostPathRoot + "nowhere-parent"}},
			hostPathPod(below+"/sub", &dirOrCreate), true),
		hp("hostPath type DirectoryOrCreate with a dangling symlink whose target's parent does not exist", stops+"; the missing directories behind the symlink are not made either.",
			[]framework.HostObject{{Path: far, Kind: framework.KindSymlink, Target: hostPathRoot + "no/such/dir"}},
			hostPathPod(far, &dirOrCreate), true),
		hp("hostPath type FileOrCreate with a dangling symlink at the path",
			"v1.37 FileOrCreate: nothing exists (stat follows the symlink), so makeFile opens the path with O_CREATE, which creates the symlink's target: a 0644 file, reached through the symlink.",
			[]framework.HostObject{{Path: fileLink, Kind: framework.KindSymlink, Target: hostPathRoot + "created-target"}},
			hostPathPod(fileLink, &fileOrCreate), false),
	}
}

// policyRootBits: [walk.policy] OnRootMismatch's three checks one bit at a time: a root that
// fails only setgid (with every other bit, 0777), only one exec bit (owner's, group's), only one
// write bit, only the gid (one above and one below fsGroup, or owned by uid fsGroup with the
// root group), and roots that match with more bits (02775, 07777), which are skipped. Kills
// policy-no-setgid-check, policy-no-gid-check, policy-no-exec-check (and blind-policy-checks-root-uid).
func policyRootBits() []*framework.Case {
	onRootMismatch := corev1.FSGroupChangeOnRootMismatch
	rows := []struct {
		phrase string
		root   framework.File
		walked bool
	}{
		{"whose storage root is 0777 gid 2000 without setgid", framework.File{Mode: 0777, GID: fsGroup}, true},
		{"whose storage root lacks setgid while a subdirectory has it", framework.File{Mode: 0770, GID: fsGroup}, true},
		{"whose storage root lacks the owner's exec bit only (02670)", framework.File{Mode: 02670, GID: fsGroup}, true},
		{"whose storage root lacks the group's exec bit only (02760)", framework.File{Mode: 02760, GID: fsGroup}, true},
		{"whose storage root lacks the group's write bit only (02750)", framework.File{Mode: 02750, GID: fsGroup}, true},
		{"whose storage root lacks the owner's write bit only (02570)", framework.File{Mode: 02570, GID: fsGroup}, true},
		{"whose storage root has gid 2001, one above fsGroup", framework.File{Mode: 02770, GID: fsGroup + 1}, true},
		{"whose storage root has gid 1999, one below fsGroup", framework.File{Mode: 02770, GID: fsGroup - 1}, true},
		{"whose storage root is owned by uid 2000 with the root group", framework.File{Mode: 02770, UID: fsGroup}, true},
		{"whose storage root matches with other read and exec (02775 gid 2000)", framework.File{Mode: 02775, GID: fsGroup}, false},
		{"whose storage root matches with every bit set (07777 gid 2000)", framework.File{Mode: 07777, GID: fsGroup}, false},
	}
	var cases []*framework.Case
	for _, r := range rows {
		root := r.root
		root.Path, root.Dir = ".", true
		storage := []framework.File{root, {Path: "file", Mode: 0600}, {Path: "sub", Dir: true, Mode: 02700}, {Path: "sub/file", Mode: 0600}}
		desc := "v1.37 skipPermissionChange: the root matches when its gid is fsGroup, it has setgid and all of 0660|0110; more bits do not matter. It matches: the walk is skipped and the files keep their modes."
		if r.walked {
			desc = "v1.37 skipPermissionChange: the root matches only when its gid is fsGroup, it has setgid and all of 0660|0110; this one fails one check, so the whole volume is walked."
		}
		cases = append(cases, fsGroupCase(fmt.Sprintf("fsGroupChangePolicy OnRootMismatch on a flexVolume %s", r.phrase), desc,
			flexPod(false, &onRootMismatch, false), storage))
	}
	return cases
}

// policyAtRestart: [walk.policy] [flexvolume.walk] OnRootMismatch is honoured at every SetUp, a
// restart's included: a storage root that matches from the start, one that matches after the
// first walk, one that matches with more bits. Kills blind-policy-ignored-on-restart.
func policyAtRestart() []*framework.Case {
	onRootMismatch := corev1.FSGroupChangeOnRootMismatch
	const desc = "OnRootMismatch at a kubelet restart: the root matches, so the walk is skipped again and the files keep what they have (a container's chmod included)."
	return []*framework.Case{
		fsGroupCase("fsGroupChangePolicy OnRootMismatch skips the walk of a flexVolume whose storage root matches, at the first SetUp and after a kubelet restart", desc,
			flexPod(false, &onRootMismatch, false),
			[]framework.File{{Path: ".", Dir: true, Mode: 02770, GID: fsGroup}, {Path: "file", Mode: 0600}}, restart),
		fsGroupCase("fsGroupChangePolicy OnRootMismatch walks a flexVolume whose storage root has the root group, then skips it after a kubelet restart", desc+" The first SetUp walked and fixed the root.",
			flexPod(false, &onRootMismatch, false),
			[]framework.File{{Path: ".", Dir: true, Mode: 0750}, {Path: "file", Mode: 0644}}, chmod("file", 0600), restart),
		fsGroupCase("fsGroupChangePolicy OnRootMismatch skips the walk of a flexVolume whose storage root matches with more bits (02777), after a kubelet restart", desc,
			flexPod(false, &onRootMismatch, false),
			[]framework.File{{Path: ".", Dir: true, Mode: 02777, GID: fsGroup}, {Path: "file", Mode: 0400}}, restart),
	}
}

// itemModeZero: [atomicwriter.layout] [validation.file-mode] the lowest file mode, 0, on an item
// of every AtomicWriter type (projected is in rules.go) and as defaultMode: 0 is a mode, written
// as 0000. Kills blind-atomic-item-mode-zero-unset.
func itemModeZero() []*framework.Case {
	var cases []*framework.Case
	for _, t := range awTypes {
		if t.name != "projected" {
			c := awSpec{items: []item{{key: "username", path: "username", mode: ptr[int32](0)}, {key: "password", path: "password"}}}.build(t)
			c.Name = fmt.Sprintf("%s volume with item mode 0000", t.name)
			c.Description = "Mode 0 is the lowest valid file mode: the item's file is written 0000, the other gets defaultMode 0644 (v1.37 MakePayload: an item's mode when set)."
			cases = append(cases, c)
		}
		d := awSpec{defaultMode: ptr[int32](0)}.build(t)
		d.Name = fmt.Sprintf("%s volume with defaultMode 0000", t.name)
		d.Description = "defaultMode 0 is valid: every file is written 0000 (v1.37 validation: 0..0777 inclusive)."
		cases = append(cases, d)
	}
	return cases
}

// fileModeRange: [validation.file-mode] below the range on every type's defaultMode and item
// mode (the secret's defaultMode and the configMap's item are in rules.go), and the top, 0777,
// on every type's item. Kills blind-valid-file-mode-negative-accepted.
func fileModeRange() []*framework.Case {
	var cases []*framework.Case
	for _, t := range awTypes {
		if t.name != "secret" {
			c := awSpec{defaultMode: ptr[int32](-1), admissionOnly: true}.build(t)
			c.Name = fmt.Sprintf("%s volume with defaultMode -1 at admission", t.name)
			c.Description = "v1.37 validation: defaultMode below 0 is invalid (value printed in decimal)."
			cases = append(cases, c)
		}
		if t.name != "configMap" {
			c := awSpec{admissionOnly: true, items: []item{{key: "username", path: "username", mode: ptr[int32](-1)}}}.build(t)
			c.Name = fmt.Sprintf("%s volume with item mode -1 at admission", t.name)
			c.Description = "v1.37 validation: an item mode below 0 is invalid, at the item's own path."
			cases = append(cases, c)
		}
		c := awSpec{admissionOnly: true, items: []item{{key: "username", path: "username", mode: ptr[int32](0777)}}}.build(t)
		c.Name = fmt.Sprintf("%s volume with item mode 0777 at admission", t.name)
		c.Description = "v1.37 validation: 0777 is the highest valid item mode."
		cases = append(cases, c)
	}
	return cases
}

// dotDotInItemPaths: the path rules of items and tokens (v1.37 validateLocalNonReservedPath,
// docs/spec.md [validation.volumes]): a name containing `..` is an ordinary file name, but a path
// may not start with `..`. Kills blind-valid-dotdot-inside-name.
func dotDotInItemPaths() []*framework.Case {
	secret := awSpec{items: []item{{key: "username", path: "a..b"}, {key: "password", path: "sub/pass..word"}}}.build(awTypes[0])
	secret.Name = "secret volume with item paths a..b and sub/pass..word"
	secret.Description = "An item path with '..' inside a name has no backstep: the files are written under those names."
	downward := awSpec{items: []item{{key: "username", path: "name..txt"}}}.build(awTypes[2])
	downward.Name = "downwardAPI volume with the item path name..txt"
	downward.Description = "A downwardAPI item path with '..' inside a name has no backstep: the file is written under that name."
	leading := awSpec{admissionOnly: true, items: []item{{key: "username", path: "..username"}}}.build(awTypes[1])
	leading.Name = "configMap volume with the item path ..username at admission"
	leading.Description = "v1.37 validateLocalNonReservedPath: a path may not start with '..' (the atomic writer's own names), even when the '..' is no element."
	token := &framework.Case{
		Name:        "projected serviceAccountToken with the path sub/..token at admission",
		Area:        framework.AreaAtomicWriter,
		Profile:     framework.ProfileConformance,
		Description: "v1.37 validateProjectionSources: a token path with '..' inside a name, not at its start, is admitted.",
		Pod: func() *corev1.Pod {
			p := podOf(volume("token", corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "sub/..token", ExpirationSeconds: ptr[int64](3600)}}}}}))
			p.Spec.ServiceAccountName = "default"
			return p
		}(),
		AdmissionOnly: true,
	}
	return []*framework.Case{secret, downward, leading, token}
}

// fieldRefDefaulting: [defaulting.default-mode] a downwardAPI item's fieldRef without apiVersion
// is defaulted to v1 (v1.37 SetDefaults_ObjectFieldSelector), in a downwardAPI volume and in a
// projected volume's downwardAPI source, on every item: the pod is valid. Kills
// blind-default-fieldref-no-apiversion.
func fieldRefDefaulting() []*framework.Case {
	file := func(path, field, apiVersion string) corev1.DownwardAPIVolumeFile {
		return corev1.DownwardAPIVolumeFile{Path: path, FieldRef: &corev1.ObjectFieldSelector{APIVersion: apiVersion, FieldPath: field}}
	}
	return []*framework.Case{{
		Name:        "downwardAPI volume with an item whose fieldRef has no apiVersion",
		Area:        framework.AreaAtomicWriter,
		Profile:     framework.ProfileConformance,
		Description: "v1.37 SetDefaults_ObjectFieldSelector: apiVersion \"\" becomes v1 before validation, so the item is valid and written.",
		Pod: podOf(volume("downwardapi", corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{
			Items: []corev1.DownwardAPIVolumeFile{file("name", "metadata.name", "")}}})),
	}, {
		Name:        "projected volume with a downwardAPI source whose fieldRef has no apiVersion",
		Area:        framework.AreaAtomicWriter,
		Profile:     framework.ProfileConformance,
		Description: "v1.37 SetDefaults_ObjectFieldSelector defaults the fieldRefs of a projected downwardAPI source too.",
		Pod: podOf(volume("projected", corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{file("namespace", "metadata.namespace", "")}}}}}})),
	}, {
		Name:        "downwardAPI volume whose second item's fieldRef has no apiVersion at admission",
		Area:        framework.AreaAtomicWriter,
		Profile:     framework.ProfileConformance,
		Description: "v1.37 SetDefaults_ObjectFieldSelector defaults every item, not only the first: the pod is admitted.",
		Pod: podOf(volume("downwardapi", corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{
			Items: []corev1.DownwardAPIVolumeFile{file("name", "metadata.name", "v1"), file("uid", "metadata.uid", "")}}})),
		AdmissionOnly: true,
	}}
}

// userZero: [atomicwriter.owner] [atomicwriter.token-owner] user 0, the lowest uid, is an owner
// (root) like any other: it wins over defaultUser, on every type's item and on a token. Kills
// blind-user-zero-unset.
func userZero() []*framework.Case {
	on := &[2]bool{true, true}
	var cases []*framework.Case
	for _, t := range awTypes {
		cases = append(cases, ownerSpec{
			name:        fmt.Sprintf("with defaultUser %d and user 0 on the item password, %s", ownerA, userGates(on)),
			desc:        "KEP-5936 ResolvesFsUser: an item's user 0 (root) is set, so it wins over defaultUser: password stays root's, username is uid 1001's.",
			defaultUser: ptr(ownerA), gates: on,
			items: []ownedItem{{key: "username", path: "username"}, {key: "password", path: "password", user: ptr[int64](0)}},
		}.build(t.name))
	}
	pod := podOf(volume("token", corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		DefaultMode: ptr[int32](0644), DefaultUser: ptr(ownerA),
		Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr[int64](3600), User: ptr[int64](0)}}},
	}}))
	pod.Spec.ServiceAccountName = "default"
	return append(cases, &framework.Case{
		Name:        fmt.Sprintf("projected serviceAccountToken with user 0 and defaultUser %d, AtomicWriteVolumeUserFields both gates on", ownerA),
		Area:        framework.AreaAtomicWriter,
		Profile:     framework.ProfileAlpha,
		Labels:      []string{LabelKEP5936},
		Description: "KEP-5936 projected.go resolveFsUser: the token's user 0 wins over defaultUser; a token with an owner is 0600, root's.",
		Gates:       gates(framework.GateAtomicWriteVolumeUserFields, true, true),
		Pod:         pod,
	})
}

// userInUsePerField: [dropping.atomic-user] each field of atomicWriteVolumeUserFieldsInUse on its
// own in the old pod (every item user, a token's, a clusterTrustBundle's, a podCertificate's):
// with the apiserver gate off the update keeps it; on an apiserver of an older release the old
// pod never had it ([releases.apiserver-unknown-field]). Kills blind-drop-user-in-use-defaultuser-only.
func userInUsePerField() []*framework.Case {
	withUser := []ownedItem{{key: "username", path: "username"}, {key: "password", path: "password", user: ptr(ownerB)}}
	keys := []corev1.KeyToPath{{Key: "username", Path: "username"}, {Key: "password", Path: "password", User: ptr(ownerB)}}
	projected := func(src corev1.VolumeProjection) corev1.VolumeSource {
		return corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{src}}}
	}
	rows := []struct {
		what string
		src  corev1.VolumeSource
	}{
		{"the item password of a secret volume", ownedSource("secret", nil, nil, withUser)},
		{"the item password of a configMap volume", ownedSource("configMap", nil, nil, withUser)},
		{"the item password of a downwardAPI volume", ownedSource("downwardAPI", nil, nil, withUser)},
		{"an item of a projected volume's secret source", ownedSource("projected", nil, nil, withUser)},
		{"an item of a projected volume's configMap source", projected(corev1.VolumeProjection{ConfigMap: &corev1.ConfigMapProjection{
			LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}, Items: keys}})},
		{"an item of a projected volume's downwardAPI source", projected(corev1.VolumeProjection{DownwardAPI: &corev1.DownwardAPIProjection{
			Items: []corev1.DownwardAPIVolumeFile{{Path: "password", User: ptr(ownerB), FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}})},
		{"a projected serviceAccountToken", projected(corev1.VolumeProjection{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{
			Path: "token", ExpirationSeconds: ptr[int64](3600), User: ptr(ownerB)}})},
		{"a projected clusterTrustBundle", projected(corev1.VolumeProjection{ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{
			Name: ptr("volperm-bundle"), Path: "ca.pem", User: ptr(ownerB)}})},
		{"a projected podCertificate", projected(corev1.VolumeProjection{PodCertificate: &corev1.PodCertificateProjection{
			SignerName: "example.com/volperm", KeyType: "ED25519", KeyPath: "key.pem", CertificateChainPath: "chain.pem", User: ptr(ownerB)}})},
	}
	pod := func(src corev1.VolumeSource) *corev1.Pod {
		p := podOf(volume("creds", *src.DeepCopy()))
		if src.Projected != nil && src.Projected.Sources[0].ServiceAccountToken != nil {
			p.Spec.ServiceAccountName = "default"
		}
		return p
	}
	var cases []*framework.Case
	for _, r := range rows {
		cases = append(cases, &framework.Case{
			Name:        fmt.Sprintf("pod update keeping user %d on %s, %s", ownerB, r.what, userGates(&[2]bool{false, true})),
			Area:        framework.AreaAtomicWriter,
			Profile:     framework.ProfileAlpha,
			Labels:      []string{LabelKEP5936},
			Description: "v1.37 atomicWriteVolumeUserFieldsInUse: any user field of the old spec, this one alone included, keeps every user field of the update with the apiserver gate off; the file is uid 1002's.",
			Gates:       gates(framework.GateAtomicWriteVolumeUserFields, false, true),
			OldPod:      pod(r.src),
			Pod:         pod(r.src),
			Sources:     awSources(),
		})
	}
	cases = append(cases, &framework.Case{
		Name:        fmt.Sprintf("pod update adding defaultUser %d to a secret volume when the old pod had user %d on a configMap volume's item, %s", ownerA, ownerB, userGates(&[2]bool{false, true})),
		Area:        framework.AreaAtomicWriter,
		Profile:     framework.ProfileAlpha,
		Labels:      []string{LabelKEP5936},
		Description: "v1.37 atomicWriteVolumeUserFieldsInUse looks at every volume of the old spec: a user on another volume keeps the new defaultUser with the apiserver gate off.",
		Gates:       gates(framework.GateAtomicWriteVolumeUserFields, false, true),
		OldPod:      podOf(volume("settings", ownedSource("configMap", nil, nil, withUser)), volume("creds", ownedSource("secret", nil, nil, nil))),
		Pod:         podOf(volume("settings", ownedSource("configMap", nil, nil, withUser)), volume("creds", ownedSource("secret", nil, ptr(ownerA), nil))),
		Sources:     awSources(),
	})
	for _, r := range []struct {
		releases framework.Releases
		gates    framework.Gates
		words    string
	}{
		{framework.Releases{APIServer: "v1.36", Kubelet: "v1.36"}, framework.Gates{}, "kube-apiserver v1.36, which lacks the fields, asked to warn (client-go), kubelet v1.36"},
		{framework.Releases{Kubelet: "v1.36"}, framework.Gates{APIServer: map[string]bool{framework.GateAtomicWriteVolumeUserFields: false}}, "kube-apiserver v1.37 with AtomicWriteVolumeUserFields off, kubelet v1.36"},
	} {
		cases = append(cases, &framework.Case{
			Name:        fmt.Sprintf("pod update keeping user %d on the item password of a secret volume, %s", ownerB, r.words),
			Area:        framework.AreaSkew,
			Profile:     framework.ProfileAlpha,
			Labels:      append([]string{LabelKEP5936}, framework.SkewLabels(r.releases)...),
			Description: "Release skew on update (KEP-5936): an apiserver without the fields stored the old pod without them (nothing in use: the new user is warned about and gone); one with the gate off keeps the user the old pod used, which a kubelet without the fields never sees (root's files).",
			Releases:    r.releases,
			Gates:       r.gates,
			OldPod:      pod(rows[0].src),
			Pod:         pod(rows[0].src),
			Sources:     awSources(),
		})
	}
	return cases
}

// userKubeletGateUnset: [atomicwriter.owner] [atomicwriter.token-owner] with the kubelet's
// AtomicWriteVolumeUserFields left at its default (off, alpha) while the apiserver keeps the
// fields: every type's files stay root's, a token keeps the pod's FsUser. Kills
// blind-gates-kubelet-user-fields-default-on.
func userKubeletGateUnset() []*framework.Case {
	apiOnly := framework.Gates{APIServer: map[string]bool{framework.GateAtomicWriteVolumeUserFields: true}}
	const words = "AtomicWriteVolumeUserFields apiserver gate on, kubelet gate left at its default"
	var cases []*framework.Case
	for _, t := range awTypes {
		c := ownerSpec{
			name:        fmt.Sprintf("with defaultUser %d and user %d on the item password, %s", ownerA, ownerB, words),
			desc:        "KEP-5936: the gate is alpha, off unless set; a kubelet that does not set it writes root-owned files whatever the stored pod says.",
			defaultUser: ptr(ownerA),
			items:       []ownedItem{{key: "username", path: "username"}, {key: "password", path: "password", user: ptr(ownerB)}},
		}.build(t.name)
		c.Gates = apiOnly
		cases = append(cases, c)
	}
	pod := podOf(volume("token", corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		DefaultMode: ptr[int32](0644),
		Sources:     []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr[int64](3600), User: ptr(ownerB)}}},
	}}))
	pod.Spec.ServiceAccountName = "default"
	pod.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: ptr(runAsApp)}
	return append(cases, &framework.Case{
		Name:        fmt.Sprintf("projected serviceAccountToken, runAsUser 1000 and user %d, %s: owned by 1000", ownerB, words),
		Area:        framework.AreaAtomicWriter,
		Profile:     framework.ProfileAlpha,
		Labels:      []string{LabelKEP5936},
		Description: "KEP-5936: a kubelet without the gate set ignores the stored user; the token is the pod's FsUser's (docs/spec.md [atomicwriter.token-owner]).",
		Gates:       apiOnly,
		Pod:         pod,
	})
}

// downwardAPIUserPaths: [validation.user] a downwardAPI volume reports every invalid item user at
// the source's path (`.downwardAPI.user`), whichever item and however many; a projected
// downwardAPI source at `.projected.sources[j].downwardAPI.user`. Kills
// blind-valid-downwardapi-user-indexed-path.
func downwardAPIUserPaths() []*framework.Case {
	on := &[2]bool{true, true}
	second := ownerSpec{
		name:          fmt.Sprintf("with user -1 on its second item at admission, %s", userGates(on)),
		desc:          "KEP-5936 validateUserField on a downwardAPI item: the error names the source's path, not the item's index.",
		items:         []ownedItem{{key: "username", path: "username"}, {key: "password", path: "password", user: ptr[int64](-1)}},
		gates:         on,
		admissionOnly: true,
	}.build("downwardAPI")
	both := ownerSpec{
		name:          fmt.Sprintf("with user -1 on one item and 2147483648 on the other at admission, %s", userGates(on)),
		desc:          "KEP-5936 validateUserField on two downwardAPI items: two errors, both at the source's path.",
		items:         []ownedItem{{key: "username", path: "username", user: ptr[int64](-1)}, {key: "password", path: "password", user: ptr[int64](2147483648)}},
		gates:         on,
		admissionOnly: true,
	}.build("downwardAPI")
	projected := &framework.Case{
		Name:        fmt.Sprintf("projected volume with user -1 on an item of its downwardAPI source at admission, %s", userGates(on)),
		Area:        framework.AreaAtomicWriter,
		Profile:     framework.ProfileAlpha,
		Labels:      []string{LabelKEP5936},
		Description: "KEP-5936 validateUserField: a projected downwardAPI item is reported at its source's path, as its mode is.",
		Gates:       gates(framework.GateAtomicWriteVolumeUserFields, true, true),
		Pod: podOf(volume("projected", corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "name", User: ptr[int64](-1),
				FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}}}}}}})),
		AdmissionOnly: true,
	}
	return []*framework.Case{second, both, projected}
}

// tokenExpiration: the serviceAccountToken's expirationSeconds (v1.37 validateProjectionSources,
// beside [validation.token-service-account]): 600 (ten minutes) is the lowest valid value and
// 2^32 the highest; one below and one above are rejected; a token of 600 seconds is set up as any
// other ([atomicwriter.token]). Kills blind-valid-token-expiration-600-rejected.
func tokenExpiration() []*framework.Case {
	tokenPod := func(exp int64) *corev1.Pod {
		p := podOf(volume("token", corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr(exp)}}}}}))
		p.Spec.ServiceAccountName = "default"
		return p
	}
	var cases []*framework.Case
	for _, r := range []struct {
		exp    int64
		phrase string
	}{
		{600, "600 (ten minutes, the lowest)"}, {599, "599"},
		{1 << 32, "4294967296 (2^32, the highest)"}, {1<<32 + 1, "4294967297"},
	} {
		cases = append(cases, &framework.Case{
			Name:          fmt.Sprintf("projected serviceAccountToken with expirationSeconds %s at admission", r.phrase),
			Area:          framework.AreaAtomicWriter,
			Profile:       framework.ProfileConformance,
			Description:   "v1.37 validateProjectionSources: expirationSeconds from 600 (\"less than 10 minutes\" is refused) to 2^32 inclusive.",
			Pod:           tokenPod(r.exp),
			AdmissionOnly: true,
		})
	}
	runAs := tokenPod(600)
	runAs.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: ptr(runAsApp)}
	return append(cases, &framework.Case{
		Name:        "projected serviceAccountToken with expirationSeconds 600, runAsUser 1000: owned by 1000, 0600",
		Area:        framework.AreaAtomicWriter,
		Profile:     framework.ProfileConformance,
		Description: "A token of the shortest valid lifetime is written as any other: 0600, owned by the pod's FsUser (docs/spec.md [atomicwriter.token]).",
		Pod:         runAs,
	}, &framework.Case{
		Name:        fmt.Sprintf("projected serviceAccountToken with expirationSeconds 600 and fsGroup %d: 0640 root:2000", fsGroup),
		Area:        framework.AreaAtomicWriter,
		Profile:     framework.ProfileConformance,
		Description: "A token of the shortest valid lifetime is written as any other: 0600, made 0640 group fsGroup by the walk (docs/spec.md [atomicwriter.token]).",
		Pod:         withFSGroup(tokenPod(600), fsGroup),
	})
}

// preserveEdges: [atomicwriter.fsgroup] preservePermissions is per volume, whichever type
// carries it and when both volumes are secrets; and it holds for every write, an update of the
// sources ([steps.update-sources]) included. Kills preserve-applies-to-every-volume,
// blind-preserve-first-write-only.
func preserveEdges() []*framework.Case {
	var cases []*framework.Case
	pairs := []struct {
		kept, walked awType
		keptName     string
		walkedName   string
		phrase       string
	}{
		{awTypes[1], awTypes[0], "configmap-vol", "secret-vol", "a configMap volume beside a secret volume without it"},
		{awTypes[2], awTypes[3], "downwardapi-vol", "projected-vol", "a downwardAPI volume beside a projected volume without it"},
		{awTypes[0], awTypes[0], "kept", "walked", "one of two secret volumes"},
	}
	for _, p := range pairs {
		pod := withFSGroup(podOf(volume(p.keptName, p.kept.source(nil, nil)), volume(p.walkedName, p.walked.source(nil, nil))), fsGroup)
		cases = append(cases, &framework.Case{
			Name:                fmt.Sprintf("preservePermissions on %s, fsGroup %d, both gates on", p.phrase, fsGroup),
			Area:                framework.AreaAtomicWriter,
			Profile:             framework.ProfileProposal,
			Description:         "Seed 002: the field is per volume; only the volume that carries it skips SetVolumeOwnership, the other is walked.",
			Gates:               gates(framework.GatePreservePermissions, true, true),
			Pod:                 pod,
			Sources:             awSources(),
			PreservePermissions: []string{p.keptName},
		})
	}
	// [dropping.preserve-permissions]: in use on ANY volume of the old pod, another one included.
	oldPod := withFSGroup(podOf(volume("settings", awTypes[1].source(nil, nil)), volume("creds", awTypes[0].source(ptr[int32](0400), nil))), fsGroup)
	cases = append(cases, &framework.Case{
		Name:                   fmt.Sprintf("update adding preservePermissions to a secret volume when the old pod had it on a configMap volume, defaultMode 0400 and fsGroup %d, %s", fsGroup, preserveGates(false, true)),
		Area:                   framework.AreaAtomicWriter,
		Profile:                framework.ProfileProposal,
		Description:            "Seed 002, the pattern of v1.37 dropDisabledFields: the field counts as in use when the old pod had it on any volume, so the update keeps it on another one with the apiserver gate off.",
		Gates:                  gates(framework.GatePreservePermissions, false, true),
		OldPod:                 oldPod,
		OldPreservePermissions: []string{"settings"},
		Pod:                    oldPod.DeepCopy(),
		PreservePermissions:    []string{"creds"},
		Sources:                awSources(),
	})
	for _, t := range []awType{awTypes[0], awTypes[1], awTypes[3]} {
		c := awSpec{defaultMode: ptr[int32](0400), fsGroup: true, preserve: true, gates: &[2]bool{true, true}}.build(t)
		c.Name = fmt.Sprintf("%s volume with preservePermissions, defaultMode 0400 and fsGroup %d, both gates on, after its source's password changed", t.name, fsGroup)
		c.Description = "Seed 002 at an update: the new timestamp dir's files are written with defaultMode and, as at the first write, SetVolumeOwnership is skipped: 0400, group root."
		c.After = []framework.Step{{UpdateSources: updatedData(map[string]string{"username": "admin", "password": "s3cret"})}}
		cases = append(cases, c)
	}
	return cases
}

// noSourceDefaulting: [defaulting.no-source] a volume with no source is an emptyDir to the node
// (fsGroup walks it) and to the allowlist ([allowlist.type]), one or two of them. Kills
// default-no-source-not-emptydir.
func noSourceDefaulting() []*framework.Case {
	none := func(name string) corev1.Volume { return volume(name, corev1.VolumeSource{}) }
	allow := func(types ...string) *framework.FlexVolumePolicy {
		return &framework.FlexVolumePolicy{AllowedVolumeTypes: types}
	}
	return []*framework.Case{{
		Name:        fmt.Sprintf("a volume with no source and fsGroup %d becomes an emptyDir walked to 2777", fsGroup),
		Area:        framework.AreaEmptyDir,
		Profile:     framework.ProfileConformance,
		Description: "v1.37 SetDefaults_Volume makes it an emptyDir on the default medium: 0777, then the walk gives gid 2000 and setgid.",
		Pod:         withFSGroup(podOf(none("nothing")), fsGroup),
	}, {
		Name:        "two volumes with no source both become emptyDirs",
		Area:        framework.AreaEmptyDir,
		Profile:     framework.ProfileConformance,
		Description: "v1.37 SetDefaults_Volume: every volume with no source is an emptyDir, not only the first.",
		Pod:         podOf(none("first"), none("second")),
	}, {
		Name:             "flexVolume allowlist: a volume with no source is an emptyDir that allowedVolumeTypes [emptyDir] allows (pod)",
		Area:             framework.AreaFlexVolume,
		Profile:          framework.ProfileProposal,
		Description:      "Defaulting comes before validating admission: the allowlist sees the emptyDir SetDefaults_Volume made.",
		FlexVolumePolicy: allow("emptyDir"),
		Pod:              podOf(none("nothing")),
		AdmissionOnly:    true,
	}, {
		Name:             "flexVolume allowlist: a volume with no source is an emptyDir that allowedVolumeTypes [flexVolume] denies (pod)",
		Area:             framework.AreaFlexVolume,
		Profile:          framework.ProfileProposal,
		Description:      "Defaulting comes before validating admission: the volume is denied as the emptyDir it became.",
		FlexVolumePolicy: allow("flexVolume"),
		Pod:              podOf(none("nothing")),
		AdmissionOnly:    true,
	}}
}

// allowlistEdges: [allowlist.policy] an empty driver name at the first, the only and two
// indexes; [allowlist.type] each volume type on its own, allowed by its own name and denied by
// [flexVolume], a later volume, PersistentVolumes of another type; [allowlist.driver] applies to
// flexVolumes only, on pods and PersistentVolumes. Kills allow-empty-driver-name-accepted,
// blind-allow-empty-name-index-off-by-one, allow-first-volume-only,
// blind-allow-downwardapi-type-name, blind-allow-driver-checked-for-every-type.
func allowlistEdges() []*framework.Case {
	flex := func(name, driver string) corev1.Volume {
		return volume(name, corev1.VolumeSource{FlexVolume: &corev1.FlexVolumeSource{Driver: driver}})
	}
	types := []struct {
		name string
		src  corev1.VolumeSource
	}{
		{"emptyDir", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{"hostPath", corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: hostPathRoot + "allow"}}},
		{"secret", awTypes[0].source(nil, nil)},
		{"configMap", awTypes[1].source(nil, nil)},
		{"downwardAPI", awTypes[2].source(nil, nil)},
		{"projected", awTypes[3].source(nil, nil)},
	}
	srcOf := func(name string) corev1.VolumeSource {
		for _, t := range types {
			if t.name == name {
				return *t.src.DeepCopy()
			}
		}
		panic(name)
	}
	row := func(phrase string, policy framework.FlexVolumePolicy, pod *corev1.Pod, pv *corev1.PersistentVolume) *framework.Case {
		object := "pod"
		if pv != nil {
			object = "PersistentVolume"
		}
		return &framework.Case{
			Name:             fmt.Sprintf("flexVolume allowlist: %s (%s)", phrase, object),
			Area:             framework.AreaFlexVolume,
			Profile:          framework.ProfileProposal,
			Description:      "Seed 004: the policy is checked first; then each volume's type against allowedVolumeTypes (the API's name), and a flexVolume's driver against the allowlist.",
			FlexVolumePolicy: &policy,
			Pod:              pod,
			PersistentVolume: pv,
			AdmissionOnly:    true,
		}
	}
	hostPathPV := func(name string) *corev1.PersistentVolume {
		pv := flexPV(name, "")
		pv.Spec.PersistentVolumeSource = corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: hostPathRoot + "pv"}}
		return pv
	}
	cases := []*framework.Case{
		row("a policy whose only driver name is empty is invalid", framework.FlexVolumePolicy{AllowedDrivers: []string{""}}, podOf(flex("flex0", "a/b")), nil),
		row("a policy whose first driver name is empty is invalid", framework.FlexVolumePolicy{AllowedDrivers: []string{"", "a/b"}}, nil, flexPV("volperm-flex-empty-first", "a/b")),
		row("a policy with two empty driver names is invalid", framework.FlexVolumePolicy{AllowedDrivers: []string{"a/b", "", ""}}, podOf(flex("flex0", "a/b")), nil),
	}
	for _, t := range types {
		a := "a"
		if t.name == "emptyDir" {
			a = "an"
		}
		cases = append(cases,
			row(fmt.Sprintf("allowedVolumeTypes [%s] allows %s %s volume", t.name, a, t.name), framework.FlexVolumePolicy{AllowedVolumeTypes: []string{t.name}},
				podOf(volume(strings.ToLower(t.name), srcOf(t.name))), nil),
			row(fmt.Sprintf("allowedVolumeTypes [flexVolume] denies %s %s volume", a, t.name), framework.FlexVolumePolicy{AllowedVolumeTypes: []string{"flexVolume"}},
				podOf(volume(strings.ToLower(t.name), srcOf(t.name))), nil))
	}
	return append(cases,
		row("allowedVolumeTypes [downwardAPI, flexVolume] with an allowlist allow a downwardAPI volume and a listed driver",
			framework.FlexVolumePolicy{AllowedVolumeTypes: []string{"downwardAPI", "flexVolume"}, AllowedDrivers: []string{"a/b"}},
			podOf(volume("downwardapi", srcOf("downwardAPI")), flex("flex0", "a/b")), nil),
		row("an allowlist does not apply to a secret volume", framework.FlexVolumePolicy{AllowedDrivers: []string{"a/b"}},
			podOf(volume("secret", srcOf("secret"))), nil),
		row("an allowlist does not apply to a hostPath PersistentVolume", framework.FlexVolumePolicy{AllowedDrivers: []string{"a/b"}},
			nil, hostPathPV("volperm-hostpath-allowlist")),
		row("allowedVolumeTypes [flexVolume] denies a hostPath PersistentVolume", framework.FlexVolumePolicy{AllowedVolumeTypes: []string{"flexVolume"}},
			nil, hostPathPV("volperm-hostpath-denied")),
		row("allowedVolumeTypes [hostPath] allows a hostPath PersistentVolume", framework.FlexVolumePolicy{AllowedVolumeTypes: []string{"hostPath"}},
			nil, hostPathPV("volperm-hostpath-allowed")),
		row("allowedVolumeTypes [flexVolume] denies an nfs PersistentVolume", framework.FlexVolumePolicy{AllowedVolumeTypes: []string{"flexVolume"}},
			nil, func() *corev1.PersistentVolume {
				pv := flexPV("volperm-nfs-denied", "")
				pv.Spec.PersistentVolumeSource = corev1.PersistentVolumeSource{NFS: &corev1.NFSVolumeSource{Server: "nfs.example.com", Path: "/exports"}}
				return pv
			}()),
		row("a secret, then a flexVolume whose driver is not in the allowlist", framework.FlexVolumePolicy{AllowedDrivers: []string{"a/b"}},
			podOf(volume("secret", srcOf("secret")), flex("flex1", "example/nfs")), nil),
		row("an emptyDir, then a hostPath that allowedVolumeTypes [emptyDir] does not allow", framework.FlexVolumePolicy{AllowedVolumeTypes: []string{"emptyDir"}},
			podOf(volume("scratch", srcOf("emptyDir")), volume("host", srcOf("hostPath"))), nil),
	)
}
