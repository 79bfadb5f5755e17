package catalogue

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
)

// conditionCases check rules under the conditions the rest of the catalogue left out, found by
// method with the mutation self-test (docs/mutants.md): each group names the condition (a
// medium, a volume type, a boundary, a restart, a pair of rules that meet) and the mutants of
// nodeimpl/mutant that survived or were caught by one case before it.
func conditionCases() []*framework.Case {
	var cases []*framework.Case
	for _, g := range [][]*framework.Case{
		emptyDirWalkPerMedium(), walkKeepsOwnersAndSpecialBits(), walkSymlinks(), policyRootConditions(),
		hostPathOwnership(), hostPathCreateConditions(),
		atomicWriterRestart(), atomicWriterModeBits(), preserveOneVolumeOfTwo(),
		admissionConditions(), kubeletGateDefault(),
	} {
		cases = append(cases, g...)
	}
	return cases
}

// emptyDirWalkPerMedium: the walk after the mode, and no walk on a restart, on every medium
// (mutants emptydir-walk-default-medium-only, walk-dir-no-exec, emptydir-restart-rewalk).
func emptyDirWalkPerMedium() []*framework.Case {
	var cases []*framework.Case
	on := gates(framework.GateEmptyDirVolumeMode, true, true)
	for _, m := range media {
		cases = append(cases, &framework.Case{
			Name:        fmt.Sprintf("emptyDir mode 0700 with fsGroup %d on %s, both gates on", fsGroup, m.phrase),
			Area:        framework.AreaEmptyDir,
			Profile:     framework.ProfileAlpha,
			Description: "The walk ORs 0660 and 0110 and setgid into the root after the mode: a 0700 root without group bits becomes 2770 on every medium.",
			Gates:       on,
			Pod:         withFSGroup(emptyDirPod(m, ptr[int32](0700)), fsGroup),
		})
		if m.value == corev1.StorageMediumDefault {
			continue // fsgroup.go has it on the default medium
		}
		cases = append(cases, &framework.Case{
			Name:        fmt.Sprintf("fsGroup %d is not applied again to an emptyDir on %s after a kubelet restart", fsGroup, m.phrase),
			Area:        framework.AreaFSGroup,
			Profile:     framework.ProfileConformance,
			Description: "A second SetUp of a ready emptyDir does nothing on every medium: the container's chmod of the root stays.",
			Pod:         withFSGroup(emptyDirPod(m, nil), fsGroup),
			After:       []framework.Step{{Chmod: &framework.Chmod{Volume: emptyDirVolume, Path: ".", Mode: 0755}}, restart},
		})
	}
	return cases
}

// fsGroupCase is a generated case of the fsgroup area on the fixture flexVolume "data".
func fsGroupCase(name, desc string, pod *corev1.Pod, storage []framework.File, after ...framework.Step) *framework.Case {
	return &framework.Case{
		Name: name, Area: framework.AreaFSGroup, Profile: framework.ProfileConformance, Description: desc,
		Pod: pod, Storage: map[string][]framework.File{flexVolumeName: storage}, After: after,
	}
}

// walkKeepsOwnersAndSpecialBits: the walk changes the group only and only adds bits, so file
// owners and setuid/setgid/sticky survive it; a readOnly flexVolume is not walked at all
// (mutants walk-chowns-uid, walk-drops-setuid-sticky, flex-storage-owner-lost, flex-readonly-walks).
func walkKeepsOwnersAndSpecialBits() []*framework.Case {
	owned := []framework.File{
		{Path: "file", Mode: 0600, UID: 1000, GID: 1000},
		{Path: "sub", Dir: true, Mode: 0700, UID: 1001, GID: 3000},
		{Path: "sub/file", Mode: 0640, UID: 1001, GID: 3000},
	}
	special := []framework.File{
		{Path: "setuid", Mode: 04755, UID: 1000},
		{Path: "setgid", Mode: 02750, GID: 3000},
		{Path: "tmp", Dir: true, Mode: 01777},
		{Path: "shared", Dir: true, Mode: 02700},
		{Path: "shared/file", Mode: 04700, UID: 1000},
	}
	return []*framework.Case{
		fsGroupCase(fmt.Sprintf("fsGroup %d keeps the owner uid of every file of a flexVolume", fsGroup),
			"v1.37 changeFilePermission: Lchown(path, -1, fsGroup) changes the group only; the owner uid stays.",
			flexPod(false, nil, false), owned),
		fsGroupCase(fmt.Sprintf("a readOnly flexVolume with fsGroup %d keeps its files' owners and modes", fsGroup),
			"Seed 003: a readOnly flexVolume is not walked, so owners, groups and modes stay as the storage has them.",
			flexPod(true, nil, false), owned),
		fsGroupCase(fmt.Sprintf("a readOnly flexVolume with fsGroup %d is not walked after a kubelet restart either", fsGroup),
			"Seed 003: no SetUp of a readOnly flexVolume walks it, the first or a later one.",
			flexPod(true, nil, false), owned, restart),
		fsGroupCase(fmt.Sprintf("fsGroup %d keeps setuid, setgid and sticky bits in a flexVolume", fsGroup),
			"v1.37 changeFilePermission ORs the mask into the mode read before the lchown, so setuid/setgid that a chown clears come back and sticky stays: 4775, 2770, 3777, 2770, 4770.",
			flexPod(false, nil, false), special),
		fsGroupCase(fmt.Sprintf("fsGroup %d keeps setuid, setgid and sticky bits in a flexVolume after a kubelet restart", fsGroup),
			"Every SetUp walks again; the special bits survive the second walk too.",
			flexPod(false, nil, false), special, chmod("setuid", 04700), restart),
		fsGroupCase("a flexVolume without fsGroup keeps setuid, setgid and sticky bits and owners",
			"Without fsGroup nothing is walked: the storage's modes and owners are what the pod sees.",
			flexPod(false, nil, true), append(append([]framework.File{}, special...), owned...)),
	}
}

// walkSymlinks: symlinks are lchown'ed, never chmod'ed or followed, whatever they point to
// (mutant walk-chmods-symlinks).
func walkSymlinks() []*framework.Case {
	return []*framework.Case{
		fsGroupCase(fmt.Sprintf("fsGroup %d does not follow a symlink to a directory of a flexVolume", fsGroup),
			"v1.37 walkDeep never follows symlinks and never chmods one: the directory gets the mask once, as itself.",
			flexPod(false, nil, false), []framework.File{
				{Path: "sub", Dir: true, Mode: 0700}, {Path: "sub/file", Mode: 0600},
				{Path: "link", Symlink: "sub"}, {Path: "filelink", Symlink: "sub/file"},
			}),
		fsGroupCase(fmt.Sprintf("fsGroup %d leaves a dangling symlink and a symlink to a 0400 file of a flexVolume as they are", fsGroup),
			"Symlinks keep mode 0777 and get only the group; their targets are walked as themselves.",
			flexPod(false, nil, false), []framework.File{
				{Path: "broken", Symlink: "missing"}, {Path: "ro", Mode: 0400}, {Path: "rolink", Symlink: "ro"},
			}),
	}
}

// policyRootConditions: OnRootMismatch compares the root's gid, its mask plus 0110 and setgid,
// each on its own, at the first SetUp (a storage root that already has them, as a large
// volume has after its first walk: kubernetes issue 69699, whose large volume userpain.go
// times) and after a restart; Always walks whatever the root (mutants policy-*).
func policyRootConditions() []*framework.Case {
	always, onRootMismatch := corev1.FSGroupChangeAlways, corev1.FSGroupChangeOnRootMismatch
	files := func(root framework.File) []framework.File {
		root.Path, root.Dir = ".", true
		return []framework.File{root, {Path: "file", Mode: 0600}, {Path: "sub", Dir: true, Mode: 0700}, {Path: "sub/file", Mode: 0600}}
	}
	rows := []struct {
		phrase string
		root   framework.File
		policy *corev1.PodFSGroupChangePolicy
		desc   string
		issue  int // the kubernetes issue the row comes from (userpain.go), 0 for none
	}{
		{"whose storage root already has gid 2000, setgid and 0770", framework.File{Mode: 02770, GID: fsGroup}, &onRootMismatch,
			"The root matches (gid fsGroup, setgid, 0660|0110): the walk is skipped and the files keep their modes, what users of large volumes asked for.", 69699},
		{"whose storage root has another group", framework.File{Mode: 02770, GID: 3000}, &onRootMismatch,
			"A root of another group does not match: the whole volume is walked.", 0},
		{"whose storage root has the root group", framework.File{Mode: 02770}, &onRootMismatch,
			"A root of group 0 does not match fsGroup: the whole volume is walked.", 0},
		{"whose storage root lacks setgid", framework.File{Mode: 0770, GID: fsGroup}, &onRootMismatch,
			"A root without setgid does not match: the whole volume is walked.", 0},
		{"whose storage root lacks 0110", framework.File{Mode: 02660, GID: fsGroup}, &onRootMismatch,
			"A root without the group and owner exec bits does not match: the whole volume is walked.", 0},
		{"whose storage root already matches", framework.File{Mode: 02770, GID: fsGroup}, &always,
			"Always walks the whole volume at every SetUp, whatever the root.", 0},
	}
	var cases []*framework.Case
	for _, r := range rows {
		c := fsGroupCase(
			fmt.Sprintf("fsGroupChangePolicy %s on a flexVolume %s", *r.policy, r.phrase), "v1.37 skipPermissionChange: "+r.desc,
			flexPod(false, r.policy, false), files(r.root))
		if r.issue != 0 {
			c.Description, c.Labels = painDesc(r.issue, c.Description), painLabels(r.issue)
		}
		cases = append(cases, c)
	}
	for _, r := range []struct {
		phrase string
		mode   uint32
	}{{"lost setgid only", 0770}, {"lost 0110 only", 02660}} {
		cases = append(cases, fsGroupCase(
			fmt.Sprintf("fsGroupChangePolicy OnRootMismatch walks a flexVolume whose root %s, after a kubelet restart", r.phrase),
			"OnRootMismatch: a container changed the root so that it no longer matches; the restart walks the whole volume again.",
			flexPod(false, &onRootMismatch, false), []framework.File{{Path: "file", Mode: 0644}},
			chmod(".", r.mode), chmod("file", 0400), restart))
	}
	return cases
}

// hostPathOwnership: fsGroup never changes a hostPath, existing or created by the kubelet
// (docs/spec.md "Never an ownership change"; mutants hostpath-walked-by-fsgroup,
// hostpath-create-chowns-fsgroup). A restart checks again and still changes nothing.
func hostPathOwnership() []*framework.Case {
	rows := []struct {
		t      corev1.HostPathType
		object framework.ObjectKind
		what   string
	}{
		{corev1.HostPathDirectory, framework.KindDirectory, "a directory"},
		{corev1.HostPathFile, framework.KindFile, "a file"},
		{corev1.HostPathUnset, framework.KindDirectory, "a directory"},
		{corev1.HostPathDirectoryOrCreate, framework.KindNothing, "nothing"},
		{corev1.HostPathFileOrCreate, framework.KindNothing, "nothing"},
	}
	var cases []*framework.Case
	for _, r := range rows {
		for _, restarted := range []bool{false, true} {
			path := hostPathRoot + "owned-" + typeSlug(r.t) + "-" + string(r.object)
			name := fmt.Sprintf("hostPath type %s with %s at the path and fsGroup %d keeps the host's owner and mode", typePhrase(r.t), r.what, fsGroup)
			var after []framework.Step
			if restarted {
				path += "-restart"
				name += ", after a kubelet restart"
				after = []framework.Step{restart}
			}
			cases = append(cases, &framework.Case{
				Name:        name,
				Area:        framework.AreaHostPath,
				Profile:     framework.ProfileConformance,
				Description: painDesc(30378, "the hostPath plugin never changes ownership: fsGroup does not apply to it, and what *OrCreate makes stays root-owned, where a non-root application cannot write (userpain.go has the probes)."),
				Labels:      painLabels(30378),
				Host:        []framework.HostObject{{Path: path, Kind: r.object}},
				Pod:         withFSGroup(hostPathPod(path, ptr(r.t)), fsGroup),
				After:       after,
			})
		}
	}
	return cases
}

// hostPathCreateConditions: FileOrCreate below existing parents makes 0644, below a missing
// parent fails (mutants hostpath-fileorcreate-0600, hostpath-fileorcreate-makes-parents).
func hostPathCreateConditions() []*framework.Case {
	fileOrCreate := corev1.HostPathFileOrCreate
	deep := hostPathRoot + "deep/er/file"
	return []*framework.Case{{
		Name:        "hostPath type FileOrCreate with nothing at a path two directories down that exist",
		Area:        framework.AreaHostPath,
		Profile:     framework.ProfileConformance,
		Description: "Seed 001 FileOrCreate: a missing file is created 0644 in its existing directory.",
		Host:        []framework.HostObject{{Path: deep, Kind: framework.KindNothing}},
		Pod:         hostPathPod(deep, &fileOrCreate),
	}, {
		Name:        "hostPath type FileOrCreate whose grandparent exists but parent does not",
		Area:        framework.AreaHostPath,
		Profile:     framework.ProfileConformance,
		Description: "Seed 001 FileOrCreate: parents are never made; the open fails with the kernel's error.",
		Host:        []framework.HostObject{{Path: hostPathRoot + "grand/parent", Kind: framework.KindNothing}},
		Pod:         hostPathPod(hostPathRoot+"grand/parent/file", &fileOrCreate),
	}}
}

// atomicWriterRestart: a kubelet restart with an unchanged payload writes nothing and walks
// nothing, for every source type; shown by turning the kubelet's PreservePermissions gate off
// before the restart, so that a rewrite would walk (mutant atomic-rewrite-on-restart).
func atomicWriterRestart() []*framework.Case {
	var cases []*framework.Case
	for _, t := range awTypes {
		plain := awSpec{fsGroup: true}.build(t)
		plain.Name = fmt.Sprintf("%s volume with fsGroup %d after a kubelet restart", t.name, fsGroup)
		plain.Description = "A second SetUp with an unchanged payload writes nothing: the first SetUp's files and walk stay."
		plain.After = []framework.Step{restart}
		on := true
		kept := awSpec{fsGroup: true, preserve: true, gates: &[2]bool{on, on}}.build(t)
		kept.Name = fmt.Sprintf("%s volume with preservePermissions and fsGroup %d, the kubelet gate turned off and the kubelet restarted", t.name, fsGroup)
		kept.Description = "Seed 002 with an unchanged payload: the restart writes nothing, so the files stay unwalked although the gate is now off."
		kept.After = []framework.Step{{SetGates: &framework.Gates{Kubelet: map[string]bool{framework.GatePreservePermissions: false}}}, restart}
		cases = append(cases, plain, kept)
	}
	return cases
}

// atomicWriterModeBits: file modes with group and other write are written exactly, not through
// the umask (mutant atomic-file-umask).
func atomicWriterModeBits() []*framework.Case {
	var cases []*framework.Case
	for _, t := range awTypes[1:3] { // configMap, downwardAPI: the secret has such a case in fsgroup.go
		c := awSpec{defaultMode: ptr[int32](0666), items: []item{{key: "username", path: "username", mode: ptr[int32](0606)}}}.build(t)
		c.Name = fmt.Sprintf("%s volume with defaultMode 0666 and an item with mode 0606", t.name)
		c.Description = "v1.37 writePayloadToDir: each file gets exactly its mode (chmod after the write), group and other write included."
		cases = append(cases, c)
	}
	return cases
}

// preserveOneVolumeOfTwo: preservePermissions is per volume; the pod's other AtomicWriter
// volume is walked (mutant preserve-applies-to-every-volume).
func preserveOneVolumeOfTwo() []*framework.Case {
	var cases []*framework.Case
	for _, pair := range [][2]awType{{awTypes[0], awTypes[1]}, {awTypes[3], awTypes[2]}} {
		kept, walked := strings.ToLower(pair[0].name)+"-vol", strings.ToLower(pair[1].name)+"-vol"
		pod := withFSGroup(podOf(volume(kept, pair[0].source(nil, nil)), volume(walked, pair[1].source(nil, nil))), fsGroup)
		cases = append(cases, &framework.Case{
			Name:                fmt.Sprintf("preservePermissions on a %s volume beside a %s volume without it, fsGroup %d, both gates on", pair[0].name, pair[1].name, fsGroup),
			Area:                framework.AreaAtomicWriter,
			Profile:             framework.ProfileProposal,
			Description:         "Seed 002: the field is per volume; only the volume that carries it skips SetVolumeOwnership.",
			Gates:               gates(framework.GatePreservePermissions, true, true),
			Pod:                 pod,
			Sources:             awSources(),
			PreservePermissions: []string{kept},
		})
	}
	return cases
}

// admissionConditions: defaulting of a sourceless volume beside others, a negative mode far
// below the range, the in-use rule across volume names, the allowlist on a later volume
// (mutants default-no-source-not-emptydir, valid-emptydir-mode-negative-accepted,
// drop-mode-in-use-same-volume-only, allow-first-volume-only).
func admissionConditions() []*framework.Case {
	on := gates(framework.GateEmptyDirVolumeMode, true, true)
	twoDirs := func(a, b *int32) *corev1.Pod {
		return podOf(
			volume("first", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Mode: a}}),
			volume("second", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Mode: b}}))
	}
	policy := framework.FlexVolumePolicy{AllowedVolumeTypes: []string{"emptyDir", "flexVolume"}, AllowedDrivers: []string{"a/b"}}
	return []*framework.Case{{
		Name:        "a volume with no source beside a secret becomes an emptyDir",
		Area:        framework.AreaEmptyDir,
		Profile:     framework.ProfileConformance,
		Description: "v1.37 SetDefaults_Volume: every volume with no source, wherever it is in the pod, is an emptyDir.",
		Pod:         podOf(volume("creds", awTypes[0].source(nil, nil)), volume("nothing", corev1.VolumeSource{})),
		Sources:     awSources(),
	}, {
		Name:          "emptyDir mode -512 at admission, both gates on",
		Area:          framework.AreaEmptyDir,
		Profile:       framework.ProfileAlpha,
		Description:   "Seed 000 validation: below 0 is invalid, however far below (value printed in decimal).",
		Gates:         on,
		Pod:           emptyDirPod(media[0], ptr[int32](-512)),
		AdmissionOnly: true,
	}, {
		Name:        fmt.Sprintf("pod update moving emptyDir mode from the first emptyDir to the second, %s", cell{false, true}.phrase()),
		Area:        framework.AreaSkew,
		Profile:     framework.ProfileAlpha,
		Description: "v1.37 emptyDirModeInUse looks at every emptyDir of the old spec: a mode on any of them keeps every mode of the update.",
		Gates:       cell{false, true}.gates(),
		OldPod:      twoDirs(ptr[int32](0700), nil),
		Pod:         twoDirs(nil, ptr[int32](0750)),
	}, {
		Name:             "flexVolume allowlist: an emptyDir and two flexVolumes, the last driver not in the allowlist (pod)",
		Area:             framework.AreaFlexVolume,
		Profile:          framework.ProfileProposal,
		Description:      "Seed 004: every volume of the pod is checked, not only the first.",
		FlexVolumePolicy: &policy,
		Pod: podOf(volume("scratch", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}),
			volume("flex0", corev1.VolumeSource{FlexVolume: &corev1.FlexVolumeSource{Driver: "a/b"}}),
			volume("flex1", corev1.VolumeSource{FlexVolume: &corev1.FlexVolumeSource{Driver: "example/nfs"}})),
		AdmissionOnly: true,
	}}
}

// kubeletGateDefault: a kubelet whose EmptyDirVolumeMode gate is not set has it off (alpha,
// default off in v1.37), on every medium (mutant gates-kubelet-mode-default-on).
func kubeletGateDefault() []*framework.Case {
	var cases []*framework.Case
	for _, m := range media[:2] {
		cases = append(cases, &framework.Case{
			Name:        fmt.Sprintf("emptyDir mode 0750 on %s, apiserver gate on, kubelet gate left at its default", m.phrase),
			Area:        framework.AreaSkew,
			Profile:     framework.ProfileAlpha,
			Description: "KEP-5502: EmptyDirVolumeMode is alpha, off unless set; a kubelet that does not set it ignores mode.",
			Gates:       framework.Gates{APIServer: map[string]bool{framework.GateEmptyDirVolumeMode: true}},
			Pod:         emptyDirPod(m, ptr[int32](0750)),
		})
	}
	return cases
}
