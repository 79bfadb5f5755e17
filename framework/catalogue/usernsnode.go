package catalogue

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
)

// unmappedID is an owner on disk outside every pod's 0..65535: a pod in a user namespace sees
// it as 65534 (docs/spec.md [userns.idmap]).
const unmappedID = 70000

// inUserNamespace sets hostUsers: false on p.
func inUserNamespace(p *corev1.Pod) *corev1.Pod {
	p.Spec.HostUsers = ptr(false)
	return p
}

// usernsNodeCases: docs/spec.md "User namespaces" on the node: what a pod with hostUsers: false
// sees of each kind of volume through its idmapped mounts, where what it makes lands on disk,
// and root's limits on entries outside its range (upstream e2e security_context.go only checks
// that files show 0 or the fsGroup inside; nothing writes there). Kills userns-no-idmap and
// userns-other-range: through a mount without the pod's range every owner shows as 65534 and
// nothing can be made.
func usernsNodeCases() []*framework.Case {
	pod1000 := framework.User{UID: 1000, GID: 1000, Groups: []int64{fsGroup}}
	mk := func(name, desc string, pod *corev1.Pod, probes ...framework.Probe) *framework.Case {
		return &framework.Case{
			Name:        "hostUsers false: " + name,
			Area:        framework.AreaUserNS,
			Profile:     framework.ProfileConformance,
			Description: desc,
			Pod:         inUserNamespace(pod),
			Probes:      probes,
		}
	}
	var cases []*framework.Case
	for _, m := range media {
		cases = append(cases, mk(fmt.Sprintf("an emptyDir on %s with fsGroup %d: files made by uid 1000 and root of the pod land on disk with their own ids", m.phrase, fsGroup),
			"[userns.idmap] the walk makes the root 2777 gid 2000 (seen as such inside); through the idmapped mount uid 1000 of the pod creates f as 1000:2000 on disk, not as the pod's first host id + 1000; root of the pod creates r as 0:2000 (A3/A4 of the v1.37 surface table).",
			withFSGroup(emptyDirPod(m, nil), fsGroup),
			framework.Probe{Name: "uid 1000 of the pod creates f", Volume: emptyDirVolume, As: pod1000, Op: framework.OpCreate, Path: "f"},
			framework.Probe{Name: "uid 1000 of the pod makes dir d", Volume: emptyDirVolume, As: pod1000, Op: framework.OpMkdir, Path: "d"},
			framework.Probe{Name: "root of the pod creates r", Volume: emptyDirVolume, As: asRoot, Op: framework.OpCreate, Path: "r"},
			framework.Probe{Name: "uid 1003 of the pod lists the root", Volume: emptyDirVolume, As: asOther, Op: framework.OpList, Path: "."},
		))
	}
	cases = append(cases, mk("secret, configMap, downwardAPI and projected volumes: every file 0:0 as on disk",
		"[userns.idmap] upstream e2e security_context.go \"should mount all volumes with proper permissions with hostUsers=false\": the files of every AtomicWriter volume show 0:0 in the pod; uid 1003 of the pod reads them (0644).",
		podOf(awVolumes(awTypes...)...),
		framework.Probe{Name: "uid 1003 of the pod reads the secret's username", Volume: "secret", As: asOther, Op: framework.OpRead, Path: "username"},
		framework.Probe{Name: "uid 1003 of the pod reads the configMap's password", Volume: "configmap", As: asOther, Op: framework.OpRead, Path: "password"},
	))
	cases[len(cases)-1].Sources = awSources()
	cfg := withFSGroup(podOf(awVolumes(awTypes[1])...), 200)
	cases = append(cases, mk("a configMap with fsGroup 200: files gid 200 in the pod as on disk",
		"[userns.idmap] upstream e2e security_context.go \"should set FSGroup to user inside the container with hostUsers=false\": the read-only walk's group 200 is seen as 200; a member of 200 reads the 0644|0440 file, others too.",
		cfg,
		framework.Probe{Name: "uid 1005 in group 200 reads username", Volume: "configmap", As: framework.User{UID: 1005, GID: 1005, Groups: []int64{200}}, Op: framework.OpRead, Path: "username"},
	))
	cases[len(cases)-1].Sources = awSources()

	// A flexVolume whose storage has owners outside the pod's range (70000) beside one inside.
	storage := []framework.File{
		openRoot,
		{Path: "far", Mode: 0666, UID: unmappedID, GID: unmappedID},
		{Path: "far-public", Mode: 0644, UID: unmappedID, GID: unmappedID},
		{Path: "far-private", Mode: 0600, UID: unmappedID, GID: unmappedID},
		{Path: "far-dir", Dir: true, Mode: 0777, UID: unmappedID, GID: unmappedID},
		{Path: "near", Mode: 0644, UID: 1000, GID: 1000},
	}
	flex := func(name string, as framework.User, op framework.ProbeOp, path string) framework.Probe {
		return framework.Probe{Name: name, Volume: flexVolumeName, As: as, Op: op, Path: path}
	}
	far := mk("a flexVolume with files owned 70000 on disk: they show as 65534, nobody in the pod writes them, root reads only what others may",
		"[userns.idmap] an owner outside the pod's 0..65535 has no mapping: 65534 in the pod. [userns.root] root of the pod has no override there (capable_wrt_inode_uidgid): it reads the 0644 file, not the 0600 one; writing an unmapped file, even 0666, or creating in an unmapped 0777 directory is EACCES for everyone (inode_permission HAS_UNMAPPED_ID); deleting or renaming an unmapped file is EOVERFLOW (may_delete). A mapped file (1000, 0644) root still writes (A7 of the v1.37 surface table).",
		flexPod(false, nil, true),
		flex("root of the pod reads far-public (0644, unmapped)", asRoot, framework.OpRead, "far-public"),
		flex("root of the pod reads far-private (0600, unmapped)", asRoot, framework.OpRead, "far-private"),
		flex("root of the pod writes far (0666, unmapped)", asRoot, framework.OpWrite, "far"),
		flex("root of the pod writes near (0644, uid 1000)", asRoot, framework.OpWrite, "near"),
		flex("root of the pod creates far-dir/r", asRoot, framework.OpCreate, "far-dir/r"),
		flex("uid 1003 of the pod reads far-public", asOther, framework.OpRead, "far-public"),
		flex("uid 1003 of the pod writes far (0666, unmapped)", asOther, framework.OpWrite, "far"),
		flex("uid 1000 of the pod writes near (its own, 0644)", asOwner, framework.OpWrite, "near"),
		flex("root of the pod deletes far-public", asRoot, framework.OpDelete, "far-public"),
		framework.Probe{Name: "uid 1000 of the pod renames far to moved", Volume: flexVolumeName, As: asOwner, Op: framework.OpRename, Path: "far", To: "moved"},
	)
	far.Storage = map[string][]framework.File{flexVolumeName: storage}
	cases = append(cases, far)

	// [userns.range] across a kubelet restart, on a volume of each kind the restart sets up
	// again (emptyDir on both memories, an AtomicWriter volume, a flexVolume walked again).
	const keptDesc = "[userns.range] the restarted kubelet reads the pod's range back from the pod's directory (v1.37 userns_manager.go readMappingsFromFile): the same 65536 ids, so the idmapped mounts still match the pod's processes."
	for _, m := range media[:2] {
		restarted := mk(fmt.Sprintf("an emptyDir on %s with fsGroup %d after a kubelet restart: the pod keeps its range, its uid 1000 still creates", m.phrase, fsGroup),
			keptDesc, withFSGroup(emptyDirPod(m, nil), fsGroup),
			framework.Probe{Name: "uid 1000 of the pod creates f", Volume: emptyDirVolume, As: pod1000, Op: framework.OpCreate, Path: "f"},
		)
		restarted.After = []framework.Step{restart}
		cases = append(cases, restarted)
	}
	cfgRestart := mk("a configMap with fsGroup 200 after a kubelet restart: the pod keeps its range",
		keptDesc, withFSGroup(podOf(awVolumes(awTypes[1])...), 200),
		framework.Probe{Name: "uid 1005 in group 200 reads username", Volume: "configmap", As: framework.User{UID: 1005, GID: 1005, Groups: []int64{200}}, Op: framework.OpRead, Path: "username"},
	)
	cfgRestart.Sources, cfgRestart.After = awSources(), []framework.Step{restart}
	flexRestart := mk(fmt.Sprintf("a flexVolume with fsGroup %d after a kubelet restart: the pod keeps its range, the walk's group still seen", fsGroup),
		keptDesc, flexPod(false, nil, false),
		framework.Probe{Name: "uid 1004 of fsGroup writes near", Volume: flexVolumeName, As: asFSGroup, Op: framework.OpWrite, Path: "near"},
	)
	flexRestart.Storage = map[string][]framework.File{flexVolumeName: {openRoot, {Path: "near", Mode: 0644, UID: 1000, GID: 1000}}}
	flexRestart.After = []framework.Step{restart}
	cases = append(cases, cfgRestart, flexRestart)
	cases = append(cases, usernsAttributes())
	cases = append(cases, usernsWithoutRuntime()...)
	cases = append(cases, usernsOwners()...)

	cases = append(cases, mk("a hostPath DirectoryOrCreate: made 0755 0:0, root of the pod creates in it, uid 1000 cannot",
		"[userns.idmap] the kubelet makes the directory as for any pod (0755 root's); root of the pod is root through the idmapped mount (0 is mapped: A6 of the v1.37 surface table), uid 1000 is other.",
		podOf(volume(usernsHostPath, corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/srv/userns", Type: ptr(corev1.HostPathDirectoryOrCreate)}})),
		framework.Probe{Name: "root of the pod creates r", Volume: usernsHostPath, As: asRoot, Op: framework.OpCreate, Path: "r"},
		framework.Probe{Name: "uid 1000 of the pod creates u", Volume: usernsHostPath, As: asOwner, Op: framework.OpCreate, Path: "u"},
	))
	return cases
}

// usernsOwners: every other owner a volume's entries get, seen through a pod's idmapped mounts
// (docs/spec.md [userns.idmap]): an emptyDir without fsGroup made by the kubelet (0777 root's),
// what runAsUser/runAsGroup processes make there, the projected token's FsUser and KEP-5936's
// defaultUser (owners a v1.37 kubelet writes on disk, inside every pod's range), a flexVolume
// walked for fsGroup and a hostPath FileOrCreate. Each is the same on disk as without a user
// namespace; the probes show the pod sees those owners, not 65534.
func usernsOwners() []*framework.Case {
	mk := func(name, desc string, pod *corev1.Pod, probes ...framework.Probe) *framework.Case {
		return &framework.Case{
			Name: "hostUsers false: " + name, Area: framework.AreaUserNS, Profile: framework.ProfileConformance,
			Description: desc, Pod: inUserNamespace(pod), Probes: probes,
		}
	}
	app := framework.User{UID: runAsApp, GID: 3000}
	var cases []*framework.Case

	ed := emptyDirPod(media[0], nil)
	ed.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: ptr(runAsApp), RunAsGroup: ptr[int64](3000)}
	cases = append(cases, mk("an emptyDir without fsGroup, runAsUser 1000 runAsGroup 3000: the root 0777 0:0, what uid 1000 makes is 1000:3000",
		"[userns.idmap] the kubelet makes the root 0777 root's (mapped: 0:0 in the pod); a process of the pod as 1000:3000 creates and makes a directory; another uid of the pod cannot write the 0644 file it made; root of the pod can (mapped owner).",
		ed,
		framework.Probe{Name: "uid 1000 of the pod creates f", Volume: emptyDirVolume, As: app, Op: framework.OpCreate, Path: "f"},
		framework.Probe{Name: "uid 1000 of the pod makes dir d", Volume: emptyDirVolume, As: app, Op: framework.OpMkdir, Path: "d"},
		framework.Probe{Name: "uid 1003 of the pod writes f", Volume: emptyDirVolume, As: asOther, Op: framework.OpWrite, Path: "f"},
		framework.Probe{Name: "uid 1003 of the pod creates d/g", Volume: emptyDirVolume, As: asOther, Op: framework.OpCreate, Path: "d/g"},
		framework.Probe{Name: "root of the pod writes f", Volume: emptyDirVolume, As: asRoot, Op: framework.OpWrite, Path: "f"},
	))

	const creds = "creds"
	tok := podOf(volume(creds, corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{DefaultMode: ptr[int32](0644), Sources: []corev1.VolumeProjection{
		{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr[int64](3600)}},
	}}}))
	tok.Spec.ServiceAccountName = "default"
	tok.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: ptr(runAsApp)}
	cases = append(cases, mk("a projected token with runAsUser 1000: 0600 owned by 1000 in the pod as on disk",
		"[userns.idmap] [atomicwriter.token] FsUserFrom gives the token to the pod's one uid, 1000, a uid of every pod's range: the pod sees 1000 and its uid 1000 reads the token (upstream e2e service_accounts.go, here in a user namespace).",
		tok,
		framework.Probe{Name: "uid 1000 of the pod reads the token", Volume: creds, As: asUid1000, Op: framework.OpRead, Path: "token"},
	))

	for _, typ := range []string{"secret", "projected"} {
		c := ownerSpec{
			name:        fmt.Sprintf("with defaultUser %d, defaultMode 0400 and hostUsers false, %s", ownerA, userGates(&[2]bool{true, true})),
			desc:        "[userns.idmap] KEP-5936 in a user namespace: the kubelet writes the files 0400 owned by 1001 on disk; the pod sees 1001, so its uid 1001 reads them and uid 1003 does not.",
			defaultMode: ptr[int32](0400), defaultUser: ptr(ownerA), gates: &[2]bool{true, true},
			probes: []framework.Probe{
				readProbe("uid 1001 of the pod reads ..data/username", asOwnerA, "..data/username"),
				readProbe("uid 1003 of the pod reads ..data/username", asStranger, "..data/username"),
			},
		}.build(typ)
		c.Name = "hostUsers false: " + c.Name
		c.Area = framework.AreaUserNS
		inUserNamespace(c.Pod)
		cases = append(cases, c)
	}

	flex := flexPod(false, nil, false)
	walked := mk(fmt.Sprintf("a flexVolume with fsGroup %d: the walk's group seen as %d, a member of it writes", fsGroup, fsGroup),
		"[userns.idmap] [flexvolume.walk] the walk makes near 0664 and the root 2775, both gid 2000 on disk, mapped: the pod's members of 2000 write near and create in the root; uid 1003 does neither.",
		flex,
		framework.Probe{Name: "uid 1004 of fsGroup writes near", Volume: flexVolumeName, As: asFSGroup, Op: framework.OpWrite, Path: "near"},
		framework.Probe{Name: "uid 1004 of fsGroup creates n", Volume: flexVolumeName, As: asFSGroup, Op: framework.OpCreate, Path: "n"},
		framework.Probe{Name: "uid 1003 of the pod writes near", Volume: flexVolumeName, As: asOther, Op: framework.OpWrite, Path: "near"},
		framework.Probe{Name: "uid 1003 of the pod creates o", Volume: flexVolumeName, As: asOther, Op: framework.OpCreate, Path: "o"},
	)
	walked.Storage = map[string][]framework.File{flexVolumeName: {openRoot, {Path: "near", Mode: 0644, UID: 1000, GID: 1000}}}
	cases = append(cases, walked)

	file := mk("a hostPath FileOrCreate: made 0644 0:0, root of the pod writes it, uid 1000 only reads",
		"[userns.idmap] the kubelet makes the file in the existing directory as for any pod (0644 root's, mapped): root of the pod writes it, another uid reads but does not write.",
		podOf(volume(usernsHostPath, corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: hostPathRoot + "userns/file", Type: ptr(corev1.HostPathFileOrCreate)}})),
		framework.Probe{Name: "root of the pod writes the file", Volume: usernsHostPath, As: asRoot, Op: framework.OpWrite, Path: "."},
		framework.Probe{Name: "uid 1000 of the pod reads the file", Volume: usernsHostPath, As: asOwner, Op: framework.OpRead, Path: "."},
		framework.Probe{Name: "uid 1000 of the pod writes the file", Volume: usernsHostPath, As: asOwner, Op: framework.OpWrite, Path: "."},
	)
	file.Host = []framework.HostObject{{Path: hostPathRoot + "userns", Kind: framework.KindDirectory}}
	// A file that exists (type File), and one the kubelet makes with a fsGroup'd pod: the runtime
	// mounts a file volume idmapped as it does a directory.
	existing := mk("a hostPath File 0600 root's on the node: root of the pod writes and chmods it, then uid 1003 reads it",
		"[userns.idmap] a file volume is bind-mounted idmapped like a directory: the node's 0600 0:0 file is the pod's root's (mapped), so root of the pod overrides its bits and may chmod it; uid 1000 of the pod may not write it.",
		podOf(volume(usernsHostPath, corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: hostPathRoot + "userns-file/f", Type: ptr(corev1.HostPathFile)}})),
		framework.Probe{Name: "uid 1000 of the pod writes the file", Volume: usernsHostPath, As: asOwner, Op: framework.OpWrite, Path: "."},
		framework.Probe{Name: "root of the pod writes the file", Volume: usernsHostPath, As: asRoot, Op: framework.OpWrite, Path: "."},
		framework.Probe{Name: "root of the pod chmods the file 0644", Volume: usernsHostPath, As: asRoot, Op: framework.OpChmod, Path: ".", Mode: ptr[uint32](0644)},
		framework.Probe{Name: "uid 1003 of the pod reads the file", Volume: usernsHostPath, As: asOther, Op: framework.OpRead, Path: "."},
	)
	existing.Host = []framework.HostObject{{Path: hostPathRoot + "userns-file/f", Kind: framework.KindFile, Mode: 0600}}
	public := mk("a hostPath File 0644 root's on the node: uid 1003 of the pod reads it, uid 1000 does not write it, root of the pod does",
		"[userns.idmap] the file's owner 0 is mapped: other's bits for the pod's other uids, root's override for its root.",
		podOf(volume(usernsHostPath, corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: hostPathRoot + "userns-public/f", Type: ptr(corev1.HostPathFile)}})),
		framework.Probe{Name: "uid 1003 of the pod reads the file", Volume: usernsHostPath, As: asOther, Op: framework.OpRead, Path: "."},
		framework.Probe{Name: "uid 1000 of the pod writes the file", Volume: usernsHostPath, As: asOwner, Op: framework.OpWrite, Path: "."},
		framework.Probe{Name: "root of the pod writes the file", Volume: usernsHostPath, As: asRoot, Op: framework.OpWrite, Path: "."},
		framework.Probe{Name: "root of the pod chowns the file to 1000:1000", Volume: usernsHostPath, As: asRoot, Op: framework.OpChown, Path: ".", Owner: &framework.Owner{UID: 1000, GID: 1000}},
	)
	public.Host = []framework.HostObject{{Path: hostPathRoot + "userns-public/f", Kind: framework.KindFile, Mode: 0644}}
	return append(cases, file, existing, public)
}

// usernsWithoutRuntime: [userns.runtime] a node whose runtime reports no user namespace support
// (containerd 1.6: no runtime handlers in its CRI status): the kubelet mounts every volume as
// for any pod, then cannot create the sandbox and says why; no container runs (A13 of the
// v1.37 surface table). Runs on a node of such a runtime only (kind --runtime debian).
func usernsWithoutRuntime() []*framework.Case {
	const desc = "[userns.runtime] v1.37 userns_manager.go GetOrCreateUserNamespaceMappings: a runtime handler without user namespace support fails the sandbox with \"can't set `spec.hostUsers: false`, runtime does not support user namespaces\" (FailedCreatePodSandBox), after the volume manager mounted every volume as for any pod"
	mk := func(name, more string, pod *corev1.Pod) *framework.Case {
		return &framework.Case{
			Name:         "hostUsers false on a runtime without user namespaces: " + name,
			Area:         framework.AreaUserNS,
			Profile:      framework.ProfileConformance,
			Description:  desc + more,
			Pod:          inUserNamespace(pod),
			RuntimeLacks: []framework.RuntimeFeature{framework.RuntimeUserNamespaces},
		}
	}
	vols := []corev1.Volume{
		volume(emptyDirVolume, corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}),
		volume(usernsHostPath, corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: hostPathRoot + "userns-runtime", Type: ptr(corev1.HostPathDirectoryOrCreate)}}),
		volume(flexVolumeName, corev1.VolumeSource{FlexVolume: &corev1.FlexVolumeSource{Driver: fixtureDriver}}),
	}
	every := mk("every kind of volume is set up, then the pod's sandbox fails", " (fsGroup walk included).",
		withFSGroup(podOf(append(vols, awVolumes(awTypes...)...)...), fsGroup))
	every.Sources = awSources()
	every.Storage = map[string][]framework.File{flexVolumeName: {openRoot}}
	memory := mk("an emptyDir on medium Memory is mounted, then the pod's sandbox fails", ".", emptyDirPod(media[1], nil))
	tok := podOf(volume("creds", corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
		{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr[int64](3600)}},
	}}}))
	tok.Spec.ServiceAccountName = "default"
	tok.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: ptr(runAsApp)}
	token := mk("a projected token with runAsUser 1000 is written, then the pod's sandbox fails", " (the token already its FsUser's).", tok)
	return []*framework.Case{every, memory, token}
}

// usernsAttributes: chown and chmod by processes of a pod's user namespace on a flexVolume with
// owners inside and outside its range ([probes.attributes], [userns.root]): the pod names only
// ids 0..65535 (EINVAL past them), root gives away and chmods a mapped entry, an unmapped
// entry's mode cannot change (EOVERFLOW) nor its owner (EPERM: no capability over it).
func usernsAttributes() *framework.Case {
	storage := []framework.File{
		openRoot,
		{Path: "far", Mode: 0666, UID: unmappedID, GID: unmappedID},
		{Path: "near", Mode: 0644, UID: 1000, GID: 1000},
		{Path: "mine", Mode: 0600, UID: 1000, GID: 1000},
	}
	pod1000 := framework.User{UID: 1000, GID: 1000, Groups: []int64{fsGroup}}
	c := &framework.Case{
		Name:        "hostUsers false: chown and chmod on a flexVolume with owners inside and outside the pod's range",
		Area:        framework.AreaUserNS,
		Profile:     framework.ProfileConformance,
		Description: "[probes.attributes] [userns.root] near and mine are 1000:1000 on disk, far 70000:70000. Root of the pod chowns near to 1003 (mapped: it has CAP_CHOWN over it) but cannot name 70000 (EINVAL); it cannot chmod far (EOVERFLOW: no mapping) nor chown it (EPERM); uid 1000 chmods its own mine, gives it its group 2000, and cannot give it group 70000 (EINVAL before any permission check); uid 1003 reads near after it became its own and cannot chmod mine.",
		Pod:         inUserNamespace(flexPod(false, nil, true)),
		Storage:     map[string][]framework.File{flexVolumeName: storage},
		Probes: []framework.Probe{
			flexChown("root of the pod chowns near to 1003:1003", asRoot, "near", 1003, 1003),
			{Name: "uid 1003 of the pod writes near, now its own", Volume: flexVolumeName, As: asOther, Op: framework.OpWrite, Path: "near"},
			flexChown("root of the pod chowns near to 70000:70000", asRoot, "near", unmappedID, unmappedID),
			flexChmod("root of the pod chmods far 0600", asRoot, "far", 0600),
			flexChown("root of the pod chowns far to 0:0", asRoot, "far", 0, 0),
			flexChmod("uid 1000 of the pod chmods mine 0640", pod1000, "mine", 0640),
			flexChown("uid 1000 of the pod gives mine group 2000", pod1000, "mine", 1000, fsGroup),
			flexChown("uid 1000 of the pod gives mine group 70000", pod1000, "mine", 1000, unmappedID),
			flexChmod("uid 1003 of the pod chmods mine 0666", asOther, "mine", 0666),
		},
	}
	return c
}

// usernsHostPath is the hostPath volume of a user-namespace case.
const usernsHostPath = "host"

// awVolumes is one volume of each type, named as the type in lower case, with the default mode
// and every key.
func awVolumes(types ...awType) []corev1.Volume {
	var out []corev1.Volume
	for _, t := range types {
		out = append(out, volume(strings.ToLower(t.name), t.source(nil, nil)))
	}
	return out
}
