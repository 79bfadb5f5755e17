package catalogue

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
)

// ruleCases close the gaps the spec-rule coverage test found (docs/coverage.md,
// TestCatalogueCoversEveryRule): each group names the rule of docs/spec.md and the condition
// no case applied it under before.
func ruleCases() []*framework.Case {
	var cases []*framework.Case
	for _, g := range [][]*framework.Case{
		gatesLeftAtDefault(), admissionBoundaries(), hugePagesConditions(), emptyDirPolicy(),
		hostPathRoutes(), atomicWriterConditions(), chmodOnHostPath(), probeMatrix(),
	} {
		cases = append(cases, g...)
	}
	return cases
}

// gatesLeftAtDefault: [dropping.emptydir-mode] and [dropping.preserve-permissions] with no gate
// set at all: a stock v1.37 apiserver drops both fields (gate-source=default).
func gatesLeftAtDefault() []*framework.Case {
	secret := awSpec{defaultMode: ptr[int32](0400), fsGroup: true, preserve: true}.build(awTypes[0])
	secret.Name = fmt.Sprintf("secret volume with preservePermissions, defaultMode 0400 and fsGroup %d, no gate set", fsGroup)
	secret.Description = "Seed 002: PreservePermissions is off unless set, so the apiserver drops the field and the files get the walk's 0440."
	secret.Profile = framework.ProfileProposal
	return []*framework.Case{{
		Name:        "emptyDir mode 0700 on the default medium, no gate set",
		Area:        framework.AreaEmptyDir,
		Profile:     framework.ProfileConformance,
		Description: "KEP-5502: EmptyDirVolumeMode is alpha, off by default: a stock apiserver drops mode (reported) and the kubelet makes the usual 0777 root.",
		Pod:         emptyDirPod(media[0], ptr[int32](0700)),
	}, {
		Name:        "emptyDir mode 0700 on medium Memory, no gate set",
		Area:        framework.AreaEmptyDir,
		Profile:     framework.ProfileConformance,
		Description: "KEP-5502: with the gate at its default the mode is dropped on every medium; tmpfs' root stays 1777.",
		Pod:         emptyDirPod(media[1], ptr[int32](0700)),
	}, secret}
}

// admissionBoundaries: [validation.file-mode] below the range for a defaultMode and an item mode,
// [validation.volumes] rejecting a bad name, a duplicate name and two sources.
func admissionBoundaries() []*framework.Case {
	below := awSpec{defaultMode: ptr[int32](-1), admissionOnly: true}.build(awTypes[0])
	below.Name = "secret volume with defaultMode -1 at admission"
	below.Description = "v1.37 validateSecretVolumeSource: defaultMode below 0 is invalid (value printed in decimal)."
	itemBelow := awSpec{admissionOnly: true, items: []item{{key: "username", path: "username", mode: ptr[int32](-1)}}}.build(awTypes[1])
	itemBelow.Name = "configMap volume with item mode -1 at admission"
	itemBelow.Description = "v1.37 validateKeyToPath: an item mode below 0 is invalid."
	itemLowest := awSpec{items: []item{{key: "username", path: "username", mode: ptr[int32](0)}}}.build(awTypes[3])
	itemLowest.Name = "projected volume with item mode 0000"
	itemLowest.Description = "Mode 0 is the lowest valid file mode: the file is written 0000, the others get defaultMode 0644."
	empty := corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}
	admission := func(name, desc string, pod *corev1.Pod) *framework.Case {
		return &framework.Case{Name: name, Area: framework.AreaEmptyDir, Profile: framework.ProfileConformance,
			Description: desc, Pod: pod, AdmissionOnly: true}
	}
	return []*framework.Case{below, itemBelow, itemLowest,
		admission("an emptyDir volume named Scratch_1 at admission",
			"v1.37 validateVolumes: a volume name is a DNS-1123 label.",
			podOf(volume("Scratch_1", empty))),
		admission("two volumes named scratch at admission",
			"v1.37 validateVolumes: volume names are unique in a pod (one container mounts scratch once).",
			func() *corev1.Pod {
				p := podOf(volume("scratch", empty), volume("scratch", empty))
				p.Spec.Containers = []corev1.Container{{Name: "probe", Image: framework.ProbeImage, ImagePullPolicy: corev1.PullNever,
					VolumeMounts: []corev1.VolumeMount{{Name: "scratch", MountPath: "/volumes/scratch"}}}}
				return p
			}()),
		func() *framework.Case {
			c := admission("a projected serviceAccountToken in a pod without serviceAccountName at admission",
				"v1.37 ValidatePodCreate (pods, not templates): a token projection needs spec.serviceAccountName.",
				podOf(volume("token", corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}}}}})))
			c.Area = framework.AreaAtomicWriter
			return c
		}(),
		admission("a volume with an emptyDir and a hostPath at admission",
			"v1.37 validateVolumeSource: exactly one source per volume.",
			podOf(volume("both", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{},
				HostPath: &corev1.HostPathVolumeSource{Path: hostPathRoot + "both"}}))),
	}
}

// hugePagesConditions: [emptydir.hugepages-size] failing (no request, a request of another
// size) and [emptydir.mode-gate-off] on HugePages.
func hugePagesConditions() []*framework.Case {
	noRequest := emptyDirPod(media[2], nil)
	noRequest.Spec.Containers = nil
	otherSize := emptyDirPod(medium{corev1.StorageMediumHugePagesPrefix + "1Gi", "medium HugePages-1Gi"}, nil)
	otherSize.Spec.Containers = emptyDirPod(media[2], nil).Spec.Containers
	return []*framework.Case{{
		Name:        "emptyDir on medium HugePages-2Mi in a pod that requests no huge pages",
		Area:        framework.AreaEmptyDir,
		Profile:     framework.ProfileConformance,
		Description: "v1.37 getPageSizeMountOption: the page size comes from the pod's hugepages-<size> request; without one the SetUp fails with upstream's text.",
		Pod:         noRequest,
	}, {
		Name:        "emptyDir on medium HugePages-1Gi in a pod that requests hugepages-2Mi",
		Area:        framework.AreaEmptyDir,
		Profile:     framework.ProfileConformance,
		Description: "v1.37 getPageSizeMountOption: HugePages-<size> needs a request of that size; 2Mi pages do not serve a 1Gi medium.",
		Pod:         otherSize,
	}, {
		Name:        "emptyDir mode 0700 on medium HugePages-2Mi, apiserver gate on, kubelet gate off",
		Area:        framework.AreaSkew,
		Profile:     framework.ProfileAlpha,
		Description: "KEP-5502 skew: a kubelet without the gate ignores mode on every medium; hugetlbfs' root stays 0755.",
		Gates:       gates(framework.GateEmptyDirVolumeMode, true, false),
		Pod:         emptyDirPod(media[2], ptr[int32](0700)),
	}}
}

// emptyDirPolicy: [emptydir.fsgroup] under both fsGroupChangePolicy values: an emptyDir is walked
// whatever the policy (v1.37 empty_dir.go SetUpAt calls ChangePermissions without one).
func emptyDirPolicy() []*framework.Case {
	var cases []*framework.Case
	for i, p := range []corev1.PodFSGroupChangePolicy{corev1.FSGroupChangeAlways, corev1.FSGroupChangeOnRootMismatch} {
		m := media[i%2]
		pod := withFSGroup(emptyDirPod(m, ptr[int32](0700)), fsGroup)
		pod.Spec.SecurityContext.FSGroupChangePolicy = ptr(p)
		cases = append(cases, &framework.Case{
			Name:        fmt.Sprintf("emptyDir mode 0700 on %s with fsGroup %d and fsGroupChangePolicy %s, both gates on", m.phrase, fsGroup, p),
			Area:        framework.AreaFSGroup,
			Profile:     framework.ProfileAlpha,
			Description: "The emptyDir plugin walks after applying mode whatever fsGroupChangePolicy says: the root becomes 2770 gid 2000.",
			Gates:       gates(framework.GateEmptyDirVolumeMode, true, true),
			Pod:         pod,
		})
	}
	return cases
}

// hostPathRoutes: [hostpath.symlinks] through a dangling symlink and through a file,
// [snapshot.hostpath-absent] for DirectoryOrCreate, [hostpath.recheck] failing again.
func hostPathRoutes() []*framework.Case {
	dir := corev1.HostPathDirectory
	dirOrCreate := corev1.HostPathDirectoryOrCreate
	file := corev1.HostPathFile
	dangling := hostPathRoot + "dangling-link"
	danglingDir := hostPathRoot + "dangling-dir-link"
	notDir := hostPathRoot + "plain-file"
	mismatch := hostPathRoot + "restart-mismatch"
	hp := func(name, desc string, host []framework.HostObject, path string, t *corev1.HostPathType, after ...framework.Step) *framework.Case {
		return &framework.Case{Name: name, Area: framework.AreaHostPath, Profile: framework.ProfileConformance,
			Description: desc, Host: host, Pod: hostPathPod(path, t), After: after}
	}
	return []*framework.Case{
		hp("hostPath type Directory with a dangling symlink at the path",
			"v1.37 checkType stats the path (symlinks followed): a symlink to nothing is 'does not exist'.",
			[]framework.HostObject{{Path: dangling, Kind: framework.KindSymlink, Target: hostPathRoot + "nowhere"}}, dangling, &dir),
		func() *framework.Case {
			c := hp("hostPath type DirectoryOrCreate with a dangling symlink at the path",
				"v1.37 makeDir: MkdirAll sees the symlink and stops (EEXIST is ignored); nothing is created behind it, so the set-up succeeds with nothing there.",
				[]framework.HostObject{{Path: danglingDir, Kind: framework.KindSymlink, Target: hostPathRoot + "nowhere-dir"}}, danglingDir, &dirOrCreate)
			c.Labels = []string{LabelRuntimeDefined}
			return c
		}(),
		hp("hostPath type File with a path below a file",
			"v1.37 checkType: a path whose parent is a file cannot be stat'ed (ENOTDIR): the check fails with the stat error.",
			[]framework.HostObject{{Path: notDir, Kind: framework.KindFile}}, notDir+"/below", &file),
		hp("hostPath type Directory with a file at the path, after a kubelet restart",
			"v1.37 hostPathMounter.SetUp checks the type on every SetUp: the restart fails with the same text.",
			[]framework.HostObject{{Path: mismatch, Kind: framework.KindFile}}, mismatch, &dir, restart),
		hp("hostPath type Socket with nothing at the path, after a kubelet restart",
			"v1.37 hostPathMounter.SetUp checks the type on every SetUp: a kubelet that remembered the first SetUp would set the volume up now.",
			[]framework.HostObject{{Path: mismatch + "-socket", Kind: framework.KindNothing}}, mismatch+"-socket", ptr(corev1.HostPathSocket), restart),
	}
}

// atomicWriterConditions: [atomicwriter.unchanged] without fsGroup, [atomicwriter.sources] with
// a missing key (failing, and optional).
func atomicWriterConditions() []*framework.Case {
	var cases []*framework.Case
	for _, t := range awTypes {
		c := awSpec{defaultMode: ptr[int32](0440)}.build(t)
		c.Name = fmt.Sprintf("%s volume with defaultMode 0440 and no fsGroup after a kubelet restart", t.name)
		c.Description = "v1.37 AtomicWriter.Write: an unchanged payload writes nothing on the second SetUp; files, links and the root stay as the first SetUp made them."
		c.After = []framework.Step{restart}
		cases = append(cases, c)
	}
	for _, t := range []awType{awTypes[0], awTypes[1], awTypes[3]} {
		c := awSpec{items: []item{{key: "username", path: "username"}, {key: "token", path: "token"}}}.build(t)
		c.Name = fmt.Sprintf("%s volume selecting a key the source does not have", t.name)
		c.Description = "v1.37 MakePayload: an item naming a missing key fails the SetUp with upstream's text unless the source is optional; nothing is written."
		cases = append(cases, c)
	}
	opt := awSpec{items: []item{{key: "username", path: "username"}, {key: "token", path: "token"}}}.build(awTypes[0])
	opt.Pod.Spec.Volumes[0].Secret.Optional = ptr(true)
	opt.Name = "optional secret volume selecting a key the secret does not have"
	opt.Description = "v1.37 secret MakePayload: an optional secret skips a missing key; the other items are written."
	return append(cases, opt)
}

// chmodOnHostPath: [steps.chmod] on a hostPath: a container's chmod changes the host's directory
// itself, and a restart's type check does not put it back.
func chmodOnHostPath() []*framework.Case {
	dir := corev1.HostPathDirectory
	p := hostPathRoot + "chmod-dir"
	return []*framework.Case{{
		Name:        "hostPath type Directory chmod'ed 0700 by a container, then a kubelet restart",
		Area:        framework.AreaHostPath,
		Profile:     framework.ProfileConformance,
		Description: "A hostPath is the host's directory: a chmod inside the pod changes it, and no SetUp changes modes back (seed 001, seed 003).",
		Labels:      []string{"host-write"},
		Host:        []framework.HostObject{{Path: p, Kind: framework.KindDirectory}},
		Pod:         hostPathPod(p, &dir),
		After:       []framework.Step{{Chmod: &framework.Chmod{Volume: "host", Path: ".", Mode: 0700}}, restart},
	}}
}

// The users of probeMatrix: the owner of the storage's entries, a member of their group, a
// member of fsGroup only, somebody else, root.
var (
	asOwner   = framework.User{UID: 1000, GID: 1000}
	asGroup   = framework.User{UID: 1002, GID: 1002, Groups: []int64{3000}}
	asFSGroup = framework.User{UID: 1004, GID: 1004, Groups: []int64{fsGroup}}
	asOther   = framework.User{UID: 1003, GID: 1003}
	asRoot    = framework.User{UID: 0, GID: 0}
)

// openRoot is a flexVolume storage's root that everybody may search (the driver's directory is
// 0750 root's: a probe below it by anyone but root would be decided there, not where the case
// means; TestProbesReachTheirEntries).
var openRoot = framework.File{Path: ".", Dir: true, Mode: 0755}

// probeMatrix: [probes.dac] every op by every class (root, owner, group, other), allowed and
// denied, on a flexVolume whose storage gives owners and modes, without fsGroup and with it,
// where the walk's group bits decide ([probes.new-entry] in a setgid directory).
func probeMatrix() []*framework.Case {
	storage := []framework.File{
		openRoot,
		{Path: "f", Mode: 0640, UID: 1000, GID: 3000},
		{Path: "d", Dir: true, Mode: 0750, UID: 1000, GID: 3000},
		{Path: "d/x", Mode: 0644, UID: 1000, GID: 3000},
		{Path: "d/y", Mode: 0644, UID: 1000, GID: 3000},
	}
	probe := func(name string, as framework.User, op framework.ProbeOp, path, to string) framework.Probe {
		return framework.Probe{Name: name, Volume: flexVolumeName, As: as, Op: op, Path: path, To: to}
	}
	plain := []framework.Probe{
		probe("owner reads f", asOwner, framework.OpRead, "f", ""),
		probe("group reads f", asGroup, framework.OpRead, "f", ""),
		probe("other reads f", asOther, framework.OpRead, "f", ""),
		probe("owner writes f", asOwner, framework.OpWrite, "f", ""),
		probe("group writes f", asGroup, framework.OpWrite, "f", ""),
		probe("root writes f", asRoot, framework.OpWrite, "f", ""),
		probe("group lists d", asGroup, framework.OpList, "d", ""),
		probe("other lists d", asOther, framework.OpList, "d", ""),
		probe("group creates d/g", asGroup, framework.OpCreate, "d/g", ""),
		probe("owner creates d/o", asOwner, framework.OpCreate, "d/o", ""),
		probe("root makes dir d/r", asRoot, framework.OpMkdir, "d/r", ""),
		probe("group deletes d/x", asGroup, framework.OpDelete, "d/x", ""),
		probe("owner deletes d/x", asOwner, framework.OpDelete, "d/x", ""),
		probe("other renames f", asOther, framework.OpRename, "f", "g"),
		probe("owner renames d/y", asOwner, framework.OpRename, "d/y", "d/z"),
		probe("root deletes f", asRoot, framework.OpDelete, "f", ""),
	}
	walked := []framework.Probe{
		probe("fsGroup member writes f", asFSGroup, framework.OpWrite, "f", ""),
		probe("other writes f", asOther, framework.OpWrite, "f", ""),
		probe("fsGroup member creates d/n", asFSGroup, framework.OpCreate, "d/n", ""),
		probe("fsGroup member makes dir d/m", asFSGroup, framework.OpMkdir, "d/m", ""),
		probe("fsGroup member makes file d/m/f", asFSGroup, framework.OpCreate, "d/m/f", ""),
		probe("group lists d", asGroup, framework.OpList, "d", ""),
		probe("fsGroup member deletes d/x", asFSGroup, framework.OpDelete, "d/x", ""),
	}
	without := fsGroupCase("probes of every op by owner, group, other and root in a flexVolume without fsGroup",
		"Linux DAC on the storage's owners and modes: f is 0640 1000:3000, d 0750 1000:3000; root passes every check.",
		flexPod(false, nil, true), storage)
	without.Probes = plain
	with := fsGroupCase(fmt.Sprintf("probes by an fsGroup member and others in a flexVolume with fsGroup %d", fsGroup),
		"After the walk f is 0660 and d 2770, both gid 2000: a member of fsGroup only may write and create; what it creates in d takes gid 2000 and a new dir is setgid; group 3000 keeps only other's bits.",
		flexPod(false, nil, false), storage)
	with.Probes = walked
	return []*framework.Case{without, with, attributeProbes()}
}

// flexChmod and flexChown are a chmod and a chown probe on the flexVolume ([probes.attributes]).
func flexChmod(name string, as framework.User, path string, mode uint32) framework.Probe {
	return framework.Probe{Name: name, Volume: flexVolumeName, As: as, Op: framework.OpChmod, Path: path, Mode: &mode}
}

func flexChown(name string, as framework.User, path string, uid, gid int64) framework.Probe {
	return framework.Probe{Name: name, Volume: flexVolumeName, As: as, Op: framework.OpChown, Path: path, Owner: &framework.Owner{UID: uid, GID: gid}}
}

// attributeProbes: [probes.attributes] chmod and chown by the owner, a group member, somebody
// else and root on a flexVolume's storage; the probes after each change show that it took.
func attributeProbes() *framework.Case {
	storage := []framework.File{
		openRoot,
		{Path: "f", Mode: 0640, UID: 1000, GID: 3000},
		{Path: "d", Dir: true, Mode: 0750, UID: 1000, GID: 3000},
		{Path: "link", Mode: 0777, Symlink: "d"},
	}
	probe := func(name string, as framework.User, op framework.ProbeOp, path string) framework.Probe {
		return framework.Probe{Name: name, Volume: flexVolumeName, As: as, Op: op, Path: path}
	}
	c := fsGroupCase("chmod and chown by owner, group, other and root in a flexVolume without fsGroup",
		"[probes.attributes] f is 0640 and d 0750, both 1000:3000. Only the owner and root chmod; only root gives a file away; the owner gives it a group it is in, not another; chmod through a symlink changes its target; a missing path is ENOENT. The reads and writes after each change show that it took.",
		flexPod(false, nil, true), storage)
	c.Probes = []framework.Probe{
		flexChmod("group chmods f 0666", asGroup, "f", 0666),
		flexChmod("other chmods d 0777", asOther, "d", 0777),
		flexChmod("owner chmods f 0600", asOwner, "f", 0600),
		probe("group reads f after the owner's chmod", asGroup, framework.OpRead, "f"),
		flexChmod("root chmods f 0644", asRoot, "f", 0644),
		probe("group reads f after root's chmod", asGroup, framework.OpRead, "f"),
		flexChown("owner chowns f to its own gid 1000", asOwner, "f", 1000, 1000),
		probe("group reads f after the owner's chown (0644: other's bits)", asGroup, framework.OpRead, "f"),
		flexChown("owner chowns f to group 4000, not one of its groups", asOwner, "f", 1000, 4000),
		flexChown("owner gives f to uid 1003", asOwner, "f", 1003, 1000),
		flexChown("group chowns f to itself", asGroup, "f", 1002, 1002),
		flexChown("root gives f to 1003:1003", asRoot, "f", 1003, 1003),
		probe("uid 1003 writes f, now its own", asOther, framework.OpWrite, "f"),
		probe("owner writes f, no longer its own", asOwner, framework.OpWrite, "f"),
		flexChmod("owner chmods d 0700 through link", asOwner, "link", 0700),
		probe("group lists d after the chmod", asGroup, framework.OpList, "d"),
		flexChown("root chowns d to 1000:1002 through link", asRoot, "link", 1000, 1002),
		flexChmod("owner chmods missing", asOwner, "missing", 0600),
	}
	return c
}
