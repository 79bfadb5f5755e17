package catalogue

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
)

// readOnlyProbe is a probe on volume vol; mode and owner are set for chmod and chown.
func readOnlyProbe(vol, name string, as framework.User, op framework.ProbeOp, path string) framework.Probe {
	p := framework.Probe{Name: name, Volume: vol, As: as, Op: op, Path: path}
	switch op {
	case framework.OpRename:
		p.To = path + ".moved"
	case framework.OpFill:
		p.Size = 1
	case framework.OpChmod:
		p.Mode = ptr[uint32](0600)
	case framework.OpChown:
		p.Owner = &framework.Owner{UID: 1000, GID: 1000}
	}
	return p
}

// mountedAs gives pod a probe container (its first container's resources kept) mounting every
// volume, those in ro read-only, and, when second, a second container mounting every volume the
// other way round.
func mountedAs(pod *corev1.Pod, ro map[string]bool, second bool) *corev1.Pod {
	base := corev1.Container{Image: framework.ProbeImage, ImagePullPolicy: corev1.PullNever}
	if len(pod.Spec.Containers) > 0 {
		base = pod.Spec.Containers[0] // its resources (a HugePages emptyDir's request)
	}
	ctr := func(name string, flip bool) corev1.Container {
		c := *base.DeepCopy()
		c.Name, c.VolumeMounts = name, nil
		for _, v := range pod.Spec.Volumes {
			c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: v.Name, MountPath: "/volumes/" + v.Name, ReadOnly: ro[v.Name] != flip})
		}
		return c
	}
	pod.Spec.Containers = []corev1.Container{ctr("probe", false)}
	if second {
		pod.Spec.Containers = append(pod.Spec.Containers, ctr("other", true))
	}
	return pod
}

// readOnlyCase is a case of the mounts area on pod with probes.
func readOnlyCase(name, desc string, pod *corev1.Pod, probes ...framework.Probe) *framework.Case {
	return &framework.Case{Name: "read-only mount: " + name, Area: framework.AreaMounts, Profile: framework.ProfileConformance,
		Description: desc, Pod: pod, Probes: probes}
}

// readOnlyCases: docs/spec.md [probes.read-only], what a container may change through a
// read-only mount: v1.37 makeMounts makes the mount read-only when the volumeMount says
// readOnly or the volume is a secret, configMap, downwardAPI or projected one (or a flexVolume
// with readOnly); the kernel then refuses every change with EROFS, in its own order: an
// existing name is EEXIST and a missing parent ENOENT first, a file opened for writing is
// checked for permission (EACCES) before the mount; unlink and rename of a missing name, chown
// to an id the pod's user namespace cannot name, and an unmapped entry are EROFS all the same.
// Upstream has no e2e that writes through a readOnly volumeMount or into a secret volume.
func readOnlyCases() []*framework.Case {
	const rule = "[probes.read-only] "
	storage := []framework.File{
		openRoot,
		{Path: "f", Mode: 0644, UID: 1000, GID: 1000},
		{Path: "private", Mode: 0600, UID: 1000, GID: 1000},
		{Path: "d", Dir: true, Mode: 0777, UID: 1000, GID: 1000},
	}
	owner := framework.User{UID: 1000, GID: 1000}
	flex := func(name string, as framework.User, op framework.ProbeOp, path string) framework.Probe {
		return readOnlyProbe(flexVolumeName, name, as, op, path)
	}
	// Every change by root (who passes every permission check) and by the files' owner.
	changes := []framework.Probe{
		flex("root creates new", asRoot, framework.OpCreate, "new"),
		flex("the owner creates d/new in its 0777 dir", owner, framework.OpCreate, "d/new"),
		flex("uid 1003 creates new2 in the 0755 root (EROFS before the parent's permission)", asOther, framework.OpCreate, "new2"),
		flex("root creates f, which exists (EEXIST first)", asRoot, framework.OpCreate, "f"),
		flex("root makes dir nd", asRoot, framework.OpMkdir, "nd"),
		flex("root makes dir d, which exists (EEXIST first)", asRoot, framework.OpMkdir, "d"),
		flex("root fills fill", asRoot, framework.OpFill, "fill"),
		flex("root writes f", asRoot, framework.OpWrite, "f"),
		flex("the owner writes f", owner, framework.OpWrite, "f"),
		flex("uid 1003 writes f, 0644 (EACCES before the mount)", asOther, framework.OpWrite, "f"),
		flex("root deletes f", asRoot, framework.OpDelete, "f"),
		flex("root deletes missing (EROFS before the name is looked up)", asRoot, framework.OpDelete, "missing"),
		flex("root deletes nowhere/x (ENOENT: no parent)", asRoot, framework.OpDelete, "nowhere/x"),
		flex("the owner renames f", owner, framework.OpRename, "f"),
		flex("root renames missing", asRoot, framework.OpRename, "missing"),
		flex("the owner chmods f", owner, framework.OpChmod, "f"),
		flex("root chmods the root", asRoot, framework.OpChmod, "."),
		flex("root chmods missing (ENOENT: the lookup first)", asRoot, framework.OpChmod, "missing"),
		flex("root chowns f", asRoot, framework.OpChown, "f"),
		flex("root reads f", asRoot, framework.OpRead, "f"),
		flex("uid 1003 reads private (EACCES)", asOther, framework.OpRead, "private"),
		flex("uid 1003 lists d", asOther, framework.OpList, "d"),
	}
	withStorage := func(c *framework.Case) *framework.Case {
		c.Storage = map[string][]framework.File{flexVolumeName: storage}
		return c
	}
	cases := []*framework.Case{
		withStorage(readOnlyCase("a flexVolume mounted readOnly: every change is EROFS, after EEXIST, ENOENT and a write's EACCES",
			rule+"the volumeMount's readOnly; the storage is 0755 root, f 0644 and private 0600 owned 1000, d 0777 owned 1000. Root and the owner are refused every change, reads and lists pass.",
			mountedAs(flexPod(false, nil, true), map[string]bool{flexVolumeName: true}, false), changes...)),
		withStorage(readOnlyCase("a flexVolume with readOnly: true in its source: the container's mount is read-only too",
			rule+"makeMounts' mustMountRO: the flexVolume mounter's attributes say read-only, though the volumeMount does not.",
			flexPod(true, nil, true),
			flex("root creates new", asRoot, framework.OpCreate, "new"),
			flex("root writes f", asRoot, framework.OpWrite, "f"),
			flex("root deletes f", asRoot, framework.OpDelete, "f"),
			flex("root renames f", asRoot, framework.OpRename, "f"),
			flex("root makes dir nd", asRoot, framework.OpMkdir, "nd"),
			flex("root fills fill", asRoot, framework.OpFill, "fill"),
			flex("the owner chmods f", owner, framework.OpChmod, "f"),
			flex("root chowns f", asRoot, framework.OpChown, "f"),
			flex("root reads f", asRoot, framework.OpRead, "f"),
		)),
		withStorage(readOnlyCase("the first container mounts the flexVolume read-write, a second read-only: the probes change it",
			rule+"the probes act through the first mount of the volume across the pod's containers (framework.ProbeMount); the second container's read-only mount does not change the first's.",
			mountedAs(flexPod(false, nil, true), nil, true),
			flex("root creates new", asRoot, framework.OpCreate, "new"),
			flex("the owner writes f", owner, framework.OpWrite, "f"),
			flex("the owner chmods f", owner, framework.OpChmod, "f"),
		)),
		withStorage(readOnlyCase("the first container mounts the flexVolume read-only, a second read-write: the probes are refused",
			rule+"the first mount decides: read-only, whatever a later container mounts.",
			mountedAs(flexPod(false, nil, true), map[string]bool{flexVolumeName: true}, true),
			flex("root creates new", asRoot, framework.OpCreate, "new"),
			flex("the owner writes f", owner, framework.OpWrite, "f"),
			flex("the owner chmods f", owner, framework.OpChmod, "f"),
		)),
	}

	// A submount: the flexVolume's storage has a tmpfs of its own at mnt. runc binds a readOnly
	// volume recursively and remounts only the top read-only (opencontainers/runc#2823): below
	// mnt everything may still be changed; a rename between the two mounts is EXDEV.
	subStorage := []framework.File{
		openRoot,
		{Path: "f", Mode: 0644, UID: 1000, GID: 1000},
		{Path: "mnt", Mount: true, Mode: 0777},
		{Path: "mnt/g", Mode: 0666, UID: 1000, GID: 1000},
	}
	subProbes := func(ro bool) []framework.Probe {
		top := func(what string) string {
			if ro {
				return what + " (EROFS)"
			}
			return what
		}
		mv := readOnlyProbe(flexVolumeName, "the owner renames mnt/g to the top (EXDEV: another mount)", owner, framework.OpRename, "mnt/g")
		mv.To = "g-moved"
		return []framework.Probe{
			readOnlyProbe(flexVolumeName, top("root creates new at the top"), asRoot, framework.OpCreate, "new"),
			readOnlyProbe(flexVolumeName, "root creates mnt/new in the submount", asRoot, framework.OpCreate, "mnt/new"),
			readOnlyProbe(flexVolumeName, "uid 1003 makes dir mnt/d in the 0777 submount", asOther, framework.OpMkdir, "mnt/d"),
			readOnlyProbe(flexVolumeName, "the owner writes mnt/g", owner, framework.OpWrite, "mnt/g"),
			readOnlyProbe(flexVolumeName, top("the owner writes f"), owner, framework.OpWrite, "f"),
			readOnlyProbe(flexVolumeName, "the owner chmods mnt/g", owner, framework.OpChmod, "mnt/g"),
			mv,
			readOnlyProbe(flexVolumeName, "the owner renames mnt/g within the submount", owner, framework.OpRename, "mnt/g"),
			readOnlyProbe(flexVolumeName, "root deletes mnt/new", asRoot, framework.OpDelete, "mnt/new"),
			readOnlyProbe(flexVolumeName, "uid 1003 lists mnt", asOther, framework.OpList, "mnt"),
		}
	}
	subCase := func(name, desc string, ro bool) *framework.Case {
		pod := flexPod(false, nil, true)
		if ro {
			pod = mountedAs(pod, map[string]bool{flexVolumeName: true}, false)
		}
		c := readOnlyCase(name, desc, pod, subProbes(ro)...)
		c.Storage = map[string][]framework.File{flexVolumeName: subStorage}
		return c
	}
	cases = append(cases,
		subCase("a flexVolume mounted readOnly with a tmpfs mounted inside it: the submount stays writable",
			rule+"readOnly without recursiveReadOnly is the top mount only (runc remounts the bind read-only, not the mounts below it: opencontainers/runc#2823, the reason for KEP-3857); below mnt root and the owner change what they like; a rename from mnt to the top crosses mounts (EXDEV, before EROFS).", true),
		subCase("a flexVolume mounted read-write with a tmpfs mounted inside it: both writable, a rename between them EXDEV",
			rule+"the control: nothing read-only; do_renameat2 refuses a rename between two mounts with EXDEV.", false),
	)

	// recursiveReadOnly (KEP-3857): the kubelet asks the runtime for a read-only bind all the
	// way down when the mount says Enabled, or IfPossible and the runtime can; Enabled on a
	// runtime that cannot is refused (CreateContainerConfigError); the container status says
	// what the mount got. Upstream e2e_node mount_rro_linux_test.go checks a tmpfs below an
	// emptyDir; these put it in the volume's storage and probe both sides.
	rro := func(mode *corev1.RecursiveReadOnlyMode, lacks bool, name, desc string) *framework.Case {
		pod := mountedAs(flexPod(false, nil, true), map[string]bool{flexVolumeName: true}, false)
		pod.Spec.Containers[0].VolumeMounts[0].RecursiveReadOnly = mode
		c := readOnlyCase(name, "[mounts.recursive-read-only] "+desc, pod,
			readOnlyProbe(flexVolumeName, "root creates new at the top", asRoot, framework.OpCreate, "new"),
			readOnlyProbe(flexVolumeName, "root creates mnt/new in the submount", asRoot, framework.OpCreate, "mnt/new"),
			readOnlyProbe(flexVolumeName, "uid 1003 makes dir mnt/d in the 0777 submount", asOther, framework.OpMkdir, "mnt/d"),
			readOnlyProbe(flexVolumeName, "the owner writes mnt/g", owner, framework.OpWrite, "mnt/g"),
			readOnlyProbe(flexVolumeName, "the owner chmods mnt/g", owner, framework.OpChmod, "mnt/g"),
			readOnlyProbe(flexVolumeName, "the owner renames mnt/g within the submount", owner, framework.OpRename, "mnt/g"),
			readOnlyProbe(flexVolumeName, "uid 1003 lists mnt", asOther, framework.OpList, "mnt"),
		)
		c.Storage = map[string][]framework.File{flexVolumeName: subStorage}
		if lacks {
			c.RuntimeLacks = []framework.RuntimeFeature{framework.RuntimeRecursiveReadOnlyMounts}
		}
		return c
	}
	enabled, ifPossible, disabled := ptr(corev1.RecursiveReadOnlyEnabled), ptr(corev1.RecursiveReadOnlyIfPossible), ptr(corev1.RecursiveReadOnlyDisabled)
	cases = append(cases,
		rro(ifPossible, false, "recursiveReadOnly IfPossible on a runtime that can: status Enabled, the tmpfs below is read-only too",
			"resolveRecursiveReadOnly: IfPossible is recursive when the default handler reports recursive_read_only_mounts; runc sets MOUNT_ATTR_RDONLY with AT_RECURSIVE: every change below mnt is EROFS as at the top."),
		rro(enabled, false, "recursiveReadOnly Enabled on a runtime that can: status Enabled, the tmpfs below is read-only too",
			"Enabled asks for it outright; the runtime can, so the same as IfPossible."),
		rro(disabled, false, "recursiveReadOnly Disabled: status Disabled, the tmpfs below stays writable",
			"Disabled is the plain readOnly bind (the top only), status Disabled."),
		rro(ifPossible, true, "recursiveReadOnly IfPossible on a runtime that cannot: status Disabled, the tmpfs below stays writable",
			"the runtime reports no recursive_read_only_mounts (containerd 1.6): IfPossible falls back to the plain readOnly bind and the status says Disabled."),
		rro(enabled, true, "recursiveReadOnly Enabled on a runtime that cannot: the kubelet refuses the container (CreateContainerConfigError)",
			"makeMounts: \"failed to resolve recursive read-only mode: volume \\\"data\\\" requested recursive read-only mode, but it is not supported by the runtime\"; the volume is set up, no container runs, no probe (upstream e2e_node's \"should reject\" case on an unsupported runtime)."),
	)
	secretRRO := podOf(awVolumes(awTypes[0])...)
	mountedAs(secretRRO, map[string]bool{"secret": true}, false)
	secretRRO.Spec.Containers[0].VolumeMounts[0].RecursiveReadOnly = ifPossible
	sc := readOnlyCase("a secret mounted readOnly with recursiveReadOnly IfPossible: status Enabled, no change",
		"[mounts.recursive-read-only] [probes.read-only] a secret has no mounts below it; the status still says Enabled where the runtime can (upstream table C11).",
		secretRRO,
		readOnlyProbe("secret", "root writes username", asRoot, framework.OpWrite, "username"),
		readOnlyProbe("secret", "root reads username", asRoot, framework.OpRead, "username"),
	)
	sc.Sources = awSources()
	cases = append(cases, sc)

	// An emptyDir on every medium mounted readOnly: nothing can be made in it.
	for _, m := range media {
		cases = append(cases, readOnlyCase(fmt.Sprintf("an emptyDir on %s mounted readOnly: nothing can be made in it", m.phrase),
			rule+"the 0777 root would let anyone create; the mount refuses (EROFS), a list passes.",
			mountedAs(emptyDirPod(m, nil), map[string]bool{emptyDirVolume: true}, false),
			readOnlyProbe(emptyDirVolume, "root creates new", asRoot, framework.OpCreate, "new"),
			readOnlyProbe(emptyDirVolume, "uid 1003 makes dir nd", asOther, framework.OpMkdir, "nd"),
			readOnlyProbe(emptyDirVolume, "root chmods the root", asRoot, framework.OpChmod, "."),
			readOnlyProbe(emptyDirVolume, "uid 1003 lists the root", asOther, framework.OpList, "."),
		))
	}

	// Secret, configMap, downwardAPI and projected volumes are read-only in every container,
	// whatever the volumeMount says (makeMounts' mustMountRO), readOnly: false included.
	aw := func(name string, readOnlyFalse bool) *framework.Case {
		pod := podOf(awVolumes(awTypes...)...)
		if readOnlyFalse {
			mountedAs(pod, nil, false) // every mount readOnly: false, written out
		}
		var probes []framework.Probe
		for _, v := range pod.Spec.Volumes {
			probes = append(probes,
				readOnlyProbe(v.Name, "root writes "+v.Name+"'s username (through its symlink)", asRoot, framework.OpWrite, "username"),
				readOnlyProbe(v.Name, "root creates new in "+v.Name, asRoot, framework.OpCreate, "new"),
				readOnlyProbe(v.Name, "root deletes "+v.Name+"'s username", asRoot, framework.OpDelete, "username"),
				readOnlyProbe(v.Name, "root chmods "+v.Name+"'s ..data", asRoot, framework.OpChmod, "..data"),
				readOnlyProbe(v.Name, "root reads "+v.Name+"'s username", asRoot, framework.OpRead, "username"),
			)
		}
		c := readOnlyCase(name, rule+"v1.37 makeMounts `ReadOnly: mount.ReadOnly || mustMountRO`: these volumes' mounters always say read-only, so no container changes what the kubelet wrote (the kubelet itself rewrites it at its next sync).", pod, probes...)
		c.Sources = awSources()
		return c
	}
	cases = append(cases,
		aw("secret, configMap, downwardAPI and projected volumes: read-only in the container, every change EROFS", false),
		aw("secret, configMap, downwardAPI and projected volumes mounted with readOnly: false: still read-only", true),
	)

	// A hostPath directory mounted readOnly: the host's directory is not changed.
	host := hostPathPod("/srv/ro", ptr(corev1.HostPathDirectory))
	hc := readOnlyCase("a hostPath directory mounted readOnly: root of the pod cannot change the host's directory",
		rule+"the volumeMount's readOnly is the only way to keep a container from writing a hostPath (its mounter is read-write); the 0777 directory would let anyone create.",
		mountedAs(host, map[string]bool{"host": true}, false),
		readOnlyProbe("host", "root creates new", asRoot, framework.OpCreate, "new"),
		readOnlyProbe("host", "uid 1003 makes dir nd", asOther, framework.OpMkdir, "nd"),
		readOnlyProbe("host", "root chowns the root", asRoot, framework.OpChown, "."),
		readOnlyProbe("host", "uid 1003 lists the root", asOther, framework.OpList, "."),
	)
	hc.Host = []framework.HostObject{{Path: "/srv/ro", Kind: framework.KindDirectory, Mode: 0777}}
	cases = append(cases, hc)

	// In a user namespace: EROFS before chown's EINVAL and unlink's EOVERFLOW.
	far := []framework.File{
		openRoot,
		{Path: "far", Mode: 0666, UID: unmappedID, GID: unmappedID},
		{Path: "near", Mode: 0644, UID: 1000, GID: 1000},
	}
	uc := readOnlyCase("hostUsers false, a flexVolume mounted readOnly: EROFS before chown's EINVAL and the unmapped entry's EOVERFLOW",
		rule+"[userns.root] the mount's read-only check (mnt_want_write) comes before chown_common's EINVAL for an id the pod cannot name and may_delete's EOVERFLOW for an unmapped entry; the idmapped read-only mount still shows near as 1000 and far as 65534.",
		inUserNamespace(mountedAs(flexPod(false, nil, true), map[string]bool{flexVolumeName: true}, false)),
		flex("root of the pod chowns near to 70000", asRoot, framework.OpChown, "near"),
		flex("root of the pod deletes far", asRoot, framework.OpDelete, "far"),
		flex("root of the pod chmods far", asRoot, framework.OpChmod, "far"),
		flex("root of the pod writes near", asRoot, framework.OpWrite, "near"),
		flex("uid 1000 of the pod reads near", owner, framework.OpRead, "near"),
	)
	uc.Probes[0].Owner = &framework.Owner{UID: unmappedID, GID: unmappedID}
	uc.Storage = map[string][]framework.File{flexVolumeName: far}
	cases = append(cases, uc)
	return cases
}
