package catalogue

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
)

// LabelUserPain marks a case modelled on a Kubernetes issue a user filed: what they saw, what
// the spec promises instead (docs/user-pain.md). Each such case also carries "issue-NNNNN" and
// its description opens with "kubernetes issue NNNNN:".
const LabelUserPain = "user-pain"

// painLabels are the labels of a case from kubernetes issue n, before the case's own.
func painLabels(n int, more ...string) []string {
	return append([]string{LabelUserPain, "issue-" + strconv.Itoa(n)}, more...)
}

// painDesc opens a description with the issue it comes from.
func painDesc(n int, text string) string {
	return fmt.Sprintf("kubernetes issue %d: %s", n, text)
}

// painName ends a case name with the issue it comes from.
func painName(n int, name string) string {
	return fmt.Sprintf("%s (kubernetes issue %d)", name, n)
}

// userPainCases are cases from real user pain, one group per upstream issue (docs/user-pain.md
// lists them with what each checks). Cases of the rest of the catalogue that already covered
// an issue carry its number and labels where they are written (manifests/cases,
// conditions.go, hostpath.go) rather than being repeated here.
func userPainCases() []*framework.Case {
	var cases []*framework.Case
	for _, g := range [][]*framework.Case{
		worldWritableEmptyDir(), stickyTmp(), secretModeUnderFSGroup(), directoriesLackGroupExec(),
		hostPathCreatedAsRoot(), hostPathThroughSymlinkedParent(), hostPathSymlinkChain(),
		serviceAccountTokenMode(), largeVolumeWalk(),
	} {
		cases = append(cases, g...)
	}
	return cases
}

// The users of the user-pain probes: two unrelated users sharing a /tmp-like directory, a
// member of fsGroup 2000, a user in no group of the pod, and a non-root application.
var (
	painUser1   = framework.User{UID: 1001, GID: 1001}
	painUser2   = framework.User{UID: 1002, GID: 1002}
	painMember  = framework.User{UID: 1004, GID: 1004, Groups: []int64{fsGroup}}
	painOutside = framework.User{UID: 1003, GID: 1003}
	painApp     = framework.User{UID: 1000, GID: 1000} // a non-root application, as in 30378 and 82573
)

// painProbe is one probe of a case, by its parts (the user-pain and boundary cases share it).
func painProbe(name, vol string, as framework.User, op framework.ProbeOp, path string) framework.Probe {
	return framework.Probe{Name: name, Volume: vol, As: as, Op: op, Path: path}
}

// stickyProbes: uid 1001 creates f and g, uid 1002 tries to rename g and delete f: what the
// sticky bit decides. Probes of one user run in one process (framework/probe Run), and each
// process costs about 0.1 s here, so the user-pain probes are the fewest that show the pain.
func stickyProbes(vol string) []framework.Probe {
	return []framework.Probe{
		painProbe("uid 1001 creates f", vol, painUser1, framework.OpCreate, "f"),
		painProbe("uid 1001 creates g", vol, painUser1, framework.OpCreate, "g"),
		{Name: "uid 1002 renames g of uid 1001", Volume: vol, As: painUser2, Op: framework.OpRename, Path: "g", To: "h"},
		painProbe("uid 1002 deletes f of uid 1001", vol, painUser2, framework.OpDelete, "f"),
	}
}

// worldWritableEmptyDir: kubernetes issue 76158, "World Writable emptydir directories": audit
// tools flag the 0777 root of every emptyDir, any uid deletes any other's files; the issue
// asks for 0770 with fsGroup instead. manifests/cases/emptydir.yaml has the 0777 default and
// KEP story 1 (0750, with and without fsGroup) with this issue's number.
func worldWritableEmptyDir() []*framework.Case {
	const issue = 76158
	on := gates(framework.GateEmptyDirVolumeMode, true, true)
	return []*framework.Case{{
		Name:    painName(issue, "emptyDir without mode on medium Memory keeps uid 1002 from deleting a file of uid 1001"),
		Area:    framework.AreaEmptyDir,
		Profile: framework.ProfileConformance,
		Description: painDesc(issue, "the default medium's 0777 root lets any uid delete another's file; on medium Memory the root is "+
			"tmpfs' own 1777, whose sticky bit allows that to the file's owner only (docs/spec.md [emptydir.default], [probes.sticky])."),
		Labels: painLabels(issue),
		Pod:    emptyDirPod(media[1], nil),
		Probes: stickyProbes(emptyDirVolume),
	}, {
		Name:    painName(issue, fmt.Sprintf("emptyDir without mode and with fsGroup %d stays writable by a uid outside fsGroup", fsGroup)),
		Area:    framework.AreaEmptyDir,
		Profile: framework.ProfileConformance,
		Description: painDesc(issue, "users asked whether fsGroup makes the world-writable default safe; the walk only adds bits "+
			"(0777 becomes 2777 gid 2000), so a uid in no group of the pod still creates and lists (docs/spec.md [emptydir.fsgroup], [walk.mask])."),
		Labels: painLabels(issue),
		Pod:    withFSGroup(emptyDirPod(media[0], nil), fsGroup),
		Probes: []framework.Probe{
			painProbe("uid 1003 outside fsGroup creates f", emptyDirVolume, painOutside, framework.OpCreate, "f"),
			painProbe("uid 1003 outside fsGroup lists the volume", emptyDirVolume, painOutside, framework.OpList, "."),
		},
	}, {
		Name:    painName(issue, fmt.Sprintf("emptyDir mode 0770 with fsGroup %d on medium Memory keeps a uid outside fsGroup out, both gates on", fsGroup)),
		Area:    framework.AreaEmptyDir,
		Profile: framework.ProfileAlpha,
		Description: painDesc(issue, "the issue's proposal, 0770 with fsGroup, on tmpfs: the spec gives mode on every medium, so the "+
			"root is 2770 gid 2000 and only fsGroup's members get in (docs/spec.md [emptydir.mode]; upstream v1.37 shows tmpfs' 1777: known difference)."),
		Labels: painLabels(issue),
		Gates:  on,
		Pod:    withFSGroup(emptyDirPod(media[1], ptr[int32](0770)), fsGroup),
		Probes: []framework.Probe{ // fsGroup's members get in: the snapshot's 2770 gid 2000
			painProbe("uid 1003 outside fsGroup creates g", emptyDirVolume, painOutside, framework.OpCreate, "g"),
			painProbe("uid 1003 outside fsGroup lists the volume", emptyDirVolume, painOutside, framework.OpList, "."),
		},
	}, {
		Name:    painName(issue, fmt.Sprintf("emptyDir mode 0770 with fsGroup %d stays 2770 after a kubelet restart, both gates on", fsGroup)),
		Area:    framework.AreaEmptyDir,
		Profile: framework.ProfileAlpha,
		Description: painDesc(issue, "0770 with fsGroup on the default medium, then a kubelet restart: a ready emptyDir is left "+
			"alone, so the root stays 2770 gid 2000, closed to other uids (docs/spec.md [emptydir.ready]; KEP story 1 probes it)."),
		Labels: painLabels(issue),
		Gates:  on,
		Pod:    withFSGroup(emptyDirPod(media[0], ptr[int32](0770)), fsGroup),
		After:  []framework.Step{restart},
	}}
}

// stickyTmp: kubernetes issue 110835, "Set Sticky bit for emptyDir folders": Ruby refuses a
// /tmp without the sticky bit, and without it one container deletes another's files; KEP-5502's
// mode 01777 is the answer. manifests/cases/emptydir.yaml has KEP story 2 on the default medium
// and Memory with this issue's number.
func stickyTmp() []*framework.Case {
	const issue = 110835
	on := gates(framework.GateEmptyDirVolumeMode, true, true)
	tmp := func(m medium) *corev1.Pod { return emptyDirPod(m, ptr[int32](01777)) }
	c := func(name, desc string, area framework.Area, g framework.Gates, pod *corev1.Pod, probed bool, after ...framework.Step) *framework.Case {
		fc := &framework.Case{Name: painName(issue, name), Area: area, Profile: framework.ProfileAlpha,
			Description: painDesc(issue, desc), Labels: painLabels(issue), Gates: g, Pod: pod, After: after}
		if probed {
			fc.Probes = stickyProbes(emptyDirVolume)
		}
		return fc
	}
	return []*framework.Case{
		c(fmt.Sprintf("emptyDir mode 01777 with fsGroup %d keeps the sticky bit: uid 1002 cannot remove files of uid 1001, both gates on", fsGroup),
			"users need /tmp semantics on an emptyDir (Ruby refuses a /tmp without the sticky bit, and without it one "+
				"container deletes another's files); in a pod that also sets fsGroup the walk ORs in setgid and group bits but never clears sticky "+
				"(3777), so uid 1002 still cannot delete or rename uid 1001's files (docs/spec.md [emptydir.fsgroup], [probes.sticky]).",
			framework.AreaEmptyDir, on, withFSGroup(tmp(media[0]), fsGroup), true),
		c(fmt.Sprintf("emptyDir mode 01777 with fsGroup %d on medium Memory keeps the sticky bit, both gates on", fsGroup),
			"the same on tmpfs: the root is 3777 gid 2000 (the default-medium case probes what that means; docs/spec.md "+
				"[emptydir.mode], [emptydir.fsgroup]).",
			framework.AreaEmptyDir, on, withFSGroup(tmp(media[1]), fsGroup), false),
		c("emptyDir mode 01777 keeps the sticky bit after a kubelet restart: uid 1002 cannot remove files of uid 1001, both gates on",
			"the /tmp-like 01777 users asked for must survive a kubelet restart, which sets a ready emptyDir up again: it "+
				"must neither chmod it back to 0777 nor drop the sticky bit "+
				"(docs/spec.md [emptydir.ready], [probes.sticky]).",
			framework.AreaEmptyDir, on, tmp(media[0]), true, restart),
		c("emptyDir mode 01777 with the apiserver gate on, kubelet gate off: uid 1002 removes files of uid 1001",
			"a node whose kubelet lacks EmptyDirVolumeMode ignores mode: the pod gets the 0777 root the issue complains about, "+
				"and uid 1002 deletes and renames uid 1001's files (docs/spec.md [emptydir.mode-gate-off], [probes.dac]).",
			framework.AreaSkew, gates(framework.GateEmptyDirVolumeMode, true, false), tmp(media[0]), true),
		c("emptyDir mode 01777 with the apiserver gate off, kubelet gate on: no sticky bit",
			"an apiserver without the gate drops mode before the kubelet sees it (reported as dropped): the user's 01777 silently "+
				"becomes a 0777 root without the sticky bit (docs/spec.md [dropping.emptydir-mode]).",
			framework.AreaSkew, gates(framework.GateEmptyDirVolumeMode, false, true), tmp(media[0]), false),
	}
}

// secretModeUnderFSGroup: kubernetes issue 57923, "Setting defaultMode is not Fully Respected
// When Pod.spec.securityContext.runAsUser is Set": a secret with defaultMode 256 (0400) in a
// pod with fsGroup 472 (Grafana's uid and group) shows 0440, and tools that insist on 0400
// (ssh) refuse the key; without fsGroup the non-root user cannot read the root-owned file at
// all. The ssh key case of seed 002 in manifests/cases/atomicwriter.yaml carries this issue too.
func secretModeUnderFSGroup() []*framework.Case {
	const issue = 57923
	const grafana = 472 // the reporter's runAsUser and fsGroup
	user := framework.User{UID: grafana, GID: grafana, Groups: []int64{grafana}}
	sources := func() map[string]map[string]string {
		return map[string]map[string]string{"secret/grafana-key": {"key.pem": "-----BEGIN PRIVATE KEY-----"}, "configmap/grafana-ini": {"grafana.ini": "[server]"}}
	}
	secretVol := func(dm int32) corev1.Volume {
		return volume("foo", corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "grafana-key", DefaultMode: ptr(dm)}})
	}
	// uid 472 reads the file, and uid 1001 (in no group of the pod) when the case says so.
	reads := func(file string, withGroup, other bool) []framework.Probe {
		ps := []framework.Probe{painProbe("uid 472 reads "+file, "foo", user, framework.OpRead, file)}
		if !withGroup {
			ps[0].As.Groups = nil
		}
		if other {
			ps = append(ps, painProbe("uid 1001 reads "+file, "foo", framework.User{UID: 1001, GID: 1001}, framework.OpRead, file))
		}
		return ps
	}
	c := func(name, desc string, pod *corev1.Pod, probes []framework.Probe, after ...framework.Step) *framework.Case {
		return &framework.Case{
			Name: painName(issue, name), Area: framework.AreaAtomicWriter, Profile: framework.ProfileConformance,
			Description: painDesc(issue, desc), Labels: painLabels(issue),
			Pod: pod, Sources: sources(), Probes: probes, After: after,
		}
	}
	withGroup := func(p *corev1.Pod) *corev1.Pod { return withFSGroup(p, grafana) }
	return []*framework.Case{
		c("secret defaultMode 0400 with fsGroup 472 is 0440: uid 472 of the group reads the key, uid 1001 does not",
			"the reporter's pod: defaultMode 256 and fsGroup 472 give 0440 gid 472, not the 0400 asked for; the group read is what "+
				"lets uid 472 read a root-owned file (docs/spec.md [atomicwriter.fsgroup], the read-only mask of [walk.mask]).",
			withGroup(podOf(secretVol(0400))), reads("key.pem", true, true)),
		c("secret defaultMode 0400 without fsGroup: uid 472 cannot read the root-owned key",
			"without fsGroup the file is exactly 0400 and owned by root, so the non-root user of the report cannot read it: the "+
				"other half of the pain (docs/spec.md [atomicwriter.layout], [probes.dac]).",
			podOf(secretVol(0400)), reads("key.pem", false, false)),
		c("secret defaultMode 0400 with fsGroup 472 is still 0440 after a kubelet restart",
			"a restart with the same secret writes nothing and walks nothing: the key stays 0440, neither back to 0400 nor "+
				"wider (docs/spec.md [atomicwriter.unchanged]).",
			withGroup(podOf(secretVol(0400))), nil, restart),
		c("projected secret with defaultMode 0400 and fsGroup 472 is 0440",
			"the same key through a projected volume: the projected defaultMode gets the same read-only walk (docs/spec.md [atomicwriter.fsgroup]).",
			withGroup(podOf(volume("foo", corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{DefaultMode: ptr[int32](0400),
				Sources: []corev1.VolumeProjection{{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "grafana-key"}}}}}}))),
			nil),
		c("configMap item mode 0400 with fsGroup 472 is 0440",
			"an item's own mode is walked like defaultMode: 0400 becomes 0440 gid 472 (docs/spec.md [atomicwriter.layout], [atomicwriter.fsgroup]).",
			withGroup(podOf(volume("foo", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: "grafana-ini"},
				Items:                []corev1.KeyToPath{{Key: "grafana.ini", Path: "grafana.ini", Mode: ptr[int32](0400)}},
			}}))), nil),
	}
}

// directoriesLackGroupExec: kubernetes issue 67814, "Kubelet sets incomplete group permissions
// when using fsGroup": a local volume mounted 0700 became 2760, so the pod's non-root user,
// a member of fsGroup only, could not enter it; fixed upstream by ORing 0110 into directories
// (kubernetes PR 73533, v1.37 volume_linux.go).
func directoriesLackGroupExec() []*framework.Case {
	const issue = 67814
	onRootMismatch := corev1.FSGroupChangeOnRootMismatch
	storage := func(root uint32, gid int64) []framework.File {
		return []framework.File{
			{Path: ".", Dir: true, Mode: root, GID: gid},
			{Path: "html", Dir: true, Mode: 0700},
			{Path: "html/index.html", Mode: 0600},
		}
	}
	enters := []framework.Probe{
		painProbe("uid 1004 of fsGroup lists the volume", flexVolumeName, painMember, framework.OpList, "."),
		painProbe("uid 1004 of fsGroup creates f", flexVolumeName, painMember, framework.OpCreate, "f"),
		painProbe("uid 1004 of fsGroup lists html", flexVolumeName, painMember, framework.OpList, "html"),
		painProbe("uid 1004 of fsGroup reads html/index.html", flexVolumeName, painMember, framework.OpRead, "html/index.html"),
		painProbe("uid 1004 of fsGroup creates html/new.html", flexVolumeName, painMember, framework.OpCreate, "html/new.html"),
	}
	c := func(name, desc string, pod *corev1.Pod, files []framework.File, probes []framework.Probe, after ...framework.Step) *framework.Case {
		fc := fsGroupCase(painName(issue, name), painDesc(issue, desc), pod, files, after...)
		fc.Labels, fc.Probes = painLabels(issue), probes
		return fc
	}
	return []*framework.Case{
		c(fmt.Sprintf("fsGroup %d makes a flexVolume whose root is 0700 enterable by its group: 2770, not 2760", fsGroup),
			"the reporter's 0700 mount point: the walk ORs 0660 and, for directories, 0110 and setgid, so the root and html become "+
				"2770 and a member of fsGroup only lists, reads and creates in both (docs/spec.md [walk.mask]).",
			flexPod(false, nil, false), storage(0700, 0), enters),
		c(fmt.Sprintf("fsGroup %d makes a directory a container chmod'ed 0700 enterable by its group again after a kubelet restart", fsGroup),
			"a container closes html (0700); the next SetUp walks again and puts the group's x back, so the member enters html "+
				"(docs/spec.md [flexvolume.walk], [walk.mask]).",
			flexPod(false, nil, false), storage(0700, 0), enters[2:4], chmod("html", 0700), restart),
		c(fmt.Sprintf("a readOnly flexVolume whose root is 0700 stays closed to fsGroup %d", fsGroup),
			"a readOnly flexVolume is never walked, so the 0700 root keeps the member of fsGroup out: what the reporter saw, "+
				"on purpose here (docs/spec.md [flexvolume.walk]).",
			flexPod(true, nil, false), storage(0700, 0), enters[:1]),
		c(fmt.Sprintf("fsGroupChangePolicy OnRootMismatch leaves a 0700 directory below a matching root closed to fsGroup %d", fsGroup),
			"the root already has gid 2000, setgid and 0770, so the walk is skipped: html stays 0700 and the member cannot enter "+
				"it although it enters the root (docs/spec.md [walk.policy]).",
			flexPod(false, &onRootMismatch, false), storage(02770, fsGroup),
			[]framework.Probe{enters[0], enters[2]}),
		{
			Name:    painName(issue, fmt.Sprintf("emptyDir mode 0700 with fsGroup %d is enterable by its group, both gates on", fsGroup)),
			Area:    framework.AreaEmptyDir,
			Profile: framework.ProfileAlpha,
			Description: painDesc(issue, "the reporter's 0700 volume became 2760 and fsGroup's members could not enter it; "+
				"with mode 0700 on an emptyDir the walk after the mode makes it 2770, not 2760, so a member of fsGroup only creates a "+
				"directory and a file in it (docs/spec.md [emptydir.fsgroup], [walk.mask], [probes.new-entry])."),
			Labels: painLabels(issue),
			Gates:  gates(framework.GateEmptyDirVolumeMode, true, true),
			Pod:    withFSGroup(emptyDirPod(media[0], ptr[int32](0700)), fsGroup),
			Probes: []framework.Probe{
				painProbe("uid 1004 of fsGroup makes dir d", emptyDirVolume, painMember, framework.OpMkdir, "d"),
				painProbe("uid 1004 of fsGroup creates d/f", emptyDirVolume, painMember, framework.OpCreate, "d/f"),
			},
		},
	}
}

// hostPathCreatedAsRoot: kubernetes issue 30378, "hostpath is getting created as root": the
// application runs as a non-root user that owns /opt/volume on the host, the pod names
// /opt/volume/default/srv/test, and the kubelet creates default/srv/test as root 0755 where the
// application cannot write. The ownership cases of conditions.go carry this issue too.
func hostPathCreatedAsRoot() []*framework.Case {
	const issue = 30378
	dirOrCreate, fileOrCreate := corev1.HostPathDirectoryOrCreate, corev1.HostPathFileOrCreate
	base := hostPathRoot + "issue-30378/"
	app := framework.User{UID: painApp.UID, GID: painApp.GID, Groups: []int64{fsGroup}}
	c := func(name, desc, dir string, t corev1.HostPathType, path string, fsg bool, probes []framework.Probe, after ...framework.Step) *framework.Case {
		pod := hostPathPod(base+path, &t)
		if fsg {
			withFSGroup(pod, fsGroup)
		}
		return &framework.Case{
			Name: painName(issue, name), Area: framework.AreaHostPath, Profile: framework.ProfileConformance,
			Description: painDesc(issue, desc), Labels: painLabels(issue, "host-write"),
			// The directory the user prepared for the application: writable by it (0777 stands
			// for the reporter's "owned by the application's uid": fixtures are root-owned).
			Host:   []framework.HostObject{{Path: base + dir, Kind: framework.KindDirectory, Mode: 0777}},
			Pod:    pod,
			After:  after,
			Probes: probes,
		}
	}
	creates := []framework.Probe{painProbe("uid 1000 creates f", "host", painApp, framework.OpCreate, "f")}
	return []*framework.Case{
		c("hostPath type DirectoryOrCreate makes default/srv/test root-owned 0755 below a 0777 directory: uid 1000 cannot create in it",
			"what the reporter saw: the missing directories are made by the kubelet, root-owned 0755 whatever their parent, and "+
				"the application's uid cannot create anything there (docs/spec.md [hostpath.create], [hostpath.no-ownership]).",
			"volume", dirOrCreate, "volume/default/srv/test", false, creates),
		c(fmt.Sprintf("hostPath type DirectoryOrCreate with fsGroup %d still makes a directory uid 1000 of fsGroup cannot write", fsGroup),
			"fsGroup does not apply to hostPath: the created directory stays root:root 0755, so even a member of fsGroup is "+
				"denied (docs/spec.md [hostpath.no-ownership]).",
			"volume-fsgroup", dirOrCreate, "volume-fsgroup/default/srv/test", true,
			[]framework.Probe{painProbe("uid 1000 of fsGroup creates f", "host", app, framework.OpCreate, "f")}),
		c("hostPath type DirectoryOrCreate leaves the directory it made root-owned 0755 after a kubelet restart",
			"a restart checks the type again and finds the directory: nothing is chowned or chmod'ed then either, so the "+
				"application stays locked out (docs/spec.md [hostpath.recheck], [hostpath.no-ownership]).",
			"volume-restart", dirOrCreate, "volume-restart/default/srv/test", false, nil, restart),
		c("hostPath type FileOrCreate makes a root-owned 0644 file uid 1000 cannot write",
			"the file twin: FileOrCreate creates the missing file 0644 as root in the user's 0777 directory, so the application "+
				"reads but cannot write it (docs/spec.md [hostpath.create]).",
			"files", fileOrCreate, "files/app.log", false, []framework.Probe{
				painProbe("uid 1000 reads the file", "host", painApp, framework.OpRead, "."),
				painProbe("uid 1000 writes the file", "host", painApp, framework.OpWrite, "."),
			}),
	}
}

// hostPathThroughSymlinkedParent: kubernetes issue 83125, `hostPath type check failed: ... is
// not a directory` for a directory that exists on the host (/var/lib/cloud/data there; a
// kubelet in a container, which sees another filesystem, in some comments); the charts that
// cite it drop `type: Directory` as the workaround, and other reports of the same text name
// /lib/modules where /lib is a symlink to /usr/lib (piraeus-operator issue 434, cilium PR 7794).
// The spec's check follows symlinks, in the path's parents too.
func hostPathThroughSymlinkedParent() []*framework.Case {
	const issue = 83125
	dir := corev1.HostPathDirectory
	c := func(name, desc, slug string, modules bool, t *corev1.HostPathType, after ...framework.Step) *framework.Case {
		base := hostPathRoot + "issue-83125-" + slug + "/"
		host := []framework.HostObject{{Path: base + "usr/lib", Kind: framework.KindDirectory}}
		if modules { // its parents, usr/lib among them, are made 0755 (docs/spec.md [fixtures.host])
			host[0].Path += "/modules"
		}
		host = append(host, framework.HostObject{Path: base + "lib", Kind: framework.KindSymlink, Target: base + "usr/lib"})
		return &framework.Case{
			Name: painName(issue, name), Area: framework.AreaHostPath, Profile: framework.ProfileConformance,
			Description: painDesc(issue, desc), Labels: painLabels(issue),
			Host: host, Pod: hostPathPod(base+"lib/modules", t), After: after,
		}
	}
	return []*framework.Case{
		c("hostPath type Directory for lib/modules where lib is a symlink to usr/lib",
			"users saw `hostPath type check failed: /lib/modules is not a directory` for a directory "+
				"that exists; the check stats the path, following every symlink on the way: lib/modules is usr/lib/modules, a directory, "+
				"and the set-up succeeds; the pod sees that directory (docs/spec.md [hostpath.symlinks], [hostpath.type-check]).",
			"dir", true, &dir),
		c("hostPath without type for lib/modules where lib is a symlink to usr/lib",
			"the reporters' workaround, dropping the type: nothing is checked and the pod sees the same directory (docs/spec.md [defaulting.hostpath-type]).",
			"unset", true, nil),
		c("hostPath type Directory for lib/modules where lib is a symlink to a usr/lib without modules",
			"where the directory really is missing behind the symlink, the failure says that nothing is there, naming the pod's "+
				"path, not that it is not a directory (docs/spec.md [hostpath.type-check]).",
			"missing", false, &dir),
		c("hostPath type Directory for lib/modules where lib is a symlink to usr/lib, after a kubelet restart",
			"the check runs again at every SetUp and passes again through the symlink (docs/spec.md [hostpath.recheck]).",
			"restart", true, &dir, restart),
	}
}

// hostPathSymlinkChain: kubernetes issue 90263, hostPath through symlinks and "is not a
// directory" (the issue's text was not reachable from this machine: docs/user-pain.md). The
// hostPath matrix of hostpath.go has type Directory with a symlink to each kind of object,
// labelled with this issue; these add a chain of symlinks.
func hostPathSymlinkChain() []*framework.Case {
	const issue = 90263
	base := hostPathRoot + "issue-90263/"
	chain := func(slug string, target framework.ObjectKind) []framework.HostObject {
		return []framework.HostObject{
			{Path: base + slug + "-target", Kind: target},
			{Path: base + slug + "-hop", Kind: framework.KindSymlink, Target: base + slug + "-target"},
			{Path: base + slug, Kind: framework.KindSymlink, Target: base + slug + "-hop"},
		}
	}
	dir, file := corev1.HostPathDirectory, corev1.HostPathFile
	c := func(name, desc, slug string, target framework.ObjectKind, t corev1.HostPathType, after ...framework.Step) *framework.Case {
		return &framework.Case{
			Name: painName(issue, name), Area: framework.AreaHostPath, Profile: framework.ProfileConformance,
			Description: painDesc(issue, desc), Labels: painLabels(issue),
			Host: chain(slug, target), Pod: hostPathPod(base+slug, &t), After: after,
		}
	}
	return []*framework.Case{
		c("hostPath type Directory with a symlink to a symlink to a directory at the path",
			"\"is not a directory\" for a path reached through symlinks: two hops are followed like one, the type "+
				"check passes and the pod sees the directory (docs/spec.md [hostpath.symlinks]).",
			"dir", framework.KindDirectory, dir),
		c("hostPath type Directory with a symlink to a symlink to a file at the path",
			"\"is not a directory\" is right when the last hop ends at a file: the text names the pod's path and the kind found "+
				"behind the links (docs/spec.md [hostpath.type-check]).",
			"file", framework.KindFile, dir),
		c("hostPath type File with a symlink to a symlink to a file at the path, after a kubelet restart",
			"the File twin, checked again at the restart through both hops (docs/spec.md [hostpath.symlinks], [hostpath.recheck]).",
			"file-restart", framework.KindFile, file, restart),
	}
}

// serviceAccountTokenMode: kubernetes issue 82573, "Projected serviceAccountToken has mode of
// mounted file hardcoded to 0600": non-root containers could not read their token; fixed by
// kubernetes PR 89193: defaultMode, or 0600 when fsGroup is set, which the walk makes 0640 so
// that fsGroup's members read it (v1.37 projected.go collectData).
func serviceAccountTokenMode() []*framework.Case {
	const issue = 82573
	const vol = "kube-api-access"
	token := corev1.VolumeProjection{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr[int64](3607)}}
	projected := func(dm *int32, sources ...corev1.VolumeProjection) *corev1.Pod {
		p := podOf(volume(vol, corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{DefaultMode: dm, Sources: sources}}))
		// What the ServiceAccount admission plugin sets: v1.37 ValidatePodCreate forbids a token
		// projection in a pod without serviceAccountName.
		p.Spec.ServiceAccountName = "default"
		return p
	}
	// kube-api-access-*: what the ServiceAccount admission plugin mounts in every pod.
	apiAccess := []corev1.VolumeProjection{token,
		{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
			Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
		{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{
			{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
	}
	reads := func(who string, as framework.User, file string) framework.Probe {
		return painProbe(who+" reads "+file, vol, as, framework.OpRead, file)
	}
	c := func(name, desc string, pod *corev1.Pod, probes []framework.Probe, after ...framework.Step) *framework.Case {
		return &framework.Case{
			Name: painName(issue, name), Area: framework.AreaAtomicWriter, Profile: framework.ProfileConformance,
			Description: painDesc(issue, desc), Labels: painLabels(issue),
			Pod: pod, Probes: probes, After: after,
			Sources: map[string]map[string]string{"configmap/kube-root-ca.crt": {"ca.crt": "-----BEGIN CERTIFICATE-----"}},
		}
	}
	return []*framework.Case{
		c("projected serviceAccountToken without fsGroup has defaultMode 0644: uid 1000 reads it",
			"the fix of the issue: without fsGroup the token gets defaultMode (here the default 0644), no longer a hard-coded "+
				"0600, so a non-root container reads it (docs/spec.md [atomicwriter.token]).",
			projected(nil, token), []framework.Probe{reads("uid 1000", painApp, "token")}),
		c("projected serviceAccountToken with defaultMode 0400 and no fsGroup: uid 1000 cannot read it",
			"defaultMode is honoured exactly, also when it is tighter: 0400 root-owned, which a non-root container cannot read, "+
				"the reporter's pain when the mode was 0600 whatever defaultMode said (docs/spec.md [atomicwriter.token]).",
			projected(ptr[int32](0400), token), []framework.Probe{reads("uid 1000", painApp, "token")}),
		c(fmt.Sprintf("projected serviceAccountToken with fsGroup %d is 0640: uid 1004 of fsGroup reads it, uid 1000 does not", fsGroup),
			"with fsGroup the token is written 0600 and the read-only walk makes it 0640 gid 2000: fsGroup's members read it, "+
				"other non-root users do not (docs/spec.md [atomicwriter.token], [atomicwriter.fsgroup]).",
			withFSGroup(projected(nil, token), fsGroup), []framework.Probe{reads("uid 1004 of fsGroup", painMember, "token"), reads("uid 1000", painApp, "token")}),
		c(fmt.Sprintf("projected serviceAccountToken with defaultMode 0444 and fsGroup %d is 0640, not 0444", fsGroup),
			"with fsGroup the token's mode does not follow defaultMode, what the reporter asked for, but 0600 then 0640: a "+
				"world-readable defaultMode does not let uid 1000 read it (docs/spec.md [atomicwriter.token]).",
			withFSGroup(projected(ptr[int32](0444), token), fsGroup), []framework.Probe{reads("uid 1000", painApp, "token")}),
		c(fmt.Sprintf("projected serviceAccountToken with fsGroup %d is still 0640 after a kubelet restart", fsGroup),
			"a restart with the same token writes nothing and walks nothing (docs/spec.md [atomicwriter.unchanged]).",
			withFSGroup(projected(nil, token), fsGroup), nil, restart),
		c(fmt.Sprintf("kube-api-access projected volume of token, ca.crt and namespace with fsGroup %d", fsGroup),
			"the volume every pod gets: only the token drops to 0600 (walked to 0640); ca.crt and namespace keep defaultMode 0644, "+
				"all gid 2000, so uid 1000 reads the CA but not the token (docs/spec.md [atomicwriter.token], [atomicwriter.layout]).",
			withFSGroup(projected(ptr[int32](0644), apiAccess...), fsGroup),
			[]framework.Probe{reads("uid 1000", painApp, "ca.crt"), reads("uid 1000", painApp, "token")}),
		c("kube-api-access projected volume of token, ca.crt and namespace without fsGroup",
			"the same volume without fsGroup: every file, the token included, has defaultMode 0644 (docs/spec.md [atomicwriter.token]).",
			projected(ptr[int32](0644), apiAccess...), nil),
	}
}

// largeFiles is the number of files of the large volume of kubernetes issue 69699's cases.
const largeFiles = 2000

// largeStorage is a flexVolume of largeFiles root-owned 0600 files in 20 directories 0755,
// below a root of rootMode and rootGID.
func largeStorage(rootMode uint32, rootGID int64) []framework.File {
	files := []framework.File{{Path: ".", Dir: true, Mode: rootMode, GID: rootGID}}
	const dirs = 20
	for d := 0; d < dirs; d++ {
		dir := fmt.Sprintf("d%02d", d)
		files = append(files, framework.File{Path: dir, Dir: true, Mode: 0755})
		for f := 0; f < largeFiles/dirs; f++ {
			files = append(files, framework.File{Path: fmt.Sprintf("%s/f%03d", dir, f), Mode: 0600})
		}
	}
	return files
}

// largeVolumeWalk: kubernetes issue 69699, "Allow volume ownership to be only set after fs
// formatting": the walk runs at every mount and makes the set-up of a volume with many files
// slow; fsGroupChangePolicy OnRootMismatch (Kubernetes 1.20) skips it when the root already
// matches. The cases are labelled timed: the reports name how long each took, nothing asserts
// it (framework.LabelTimed); what is asserted is which files were walked. Two cases, as each
// takes about half a second here: the walk after a restart is checked on small volumes
// (fsgroup.go, conditions.go).
func largeVolumeWalk() []*framework.Case {
	const issue = 69699
	always, onRootMismatch := corev1.FSGroupChangeAlways, corev1.FSGroupChangeOnRootMismatch
	c := func(name, desc string, policy *corev1.PodFSGroupChangePolicy, files []framework.File) *framework.Case {
		fc := fsGroupCase(painName(issue, name), painDesc(issue, desc), flexPod(false, policy, false), files)
		fc.Labels = painLabels(issue, framework.LabelTimed)
		return fc
	}
	return []*framework.Case{
		c(fmt.Sprintf("fsGroupChangePolicy OnRootMismatch skips the walk of a flexVolume of %d files whose root already matches", largeFiles),
			"a large volume whose root already has gid 2000, setgid and 0770 (walked by an earlier pod): no file is touched, "+
				"they keep 0600 gid 0 (docs/spec.md [walk.policy]); its time is reported beside Always's.",
			&onRootMismatch, largeStorage(02770, fsGroup)),
		c(fmt.Sprintf("fsGroupChangePolicy Always walks all %d files of a flexVolume whose root already matches", largeFiles),
			"the pain: the same volume is walked entry by entry at every mount, every file 0660 gid 2000 and every directory "+
				"2775 (docs/spec.md [walk.tree], [walk.mask]); its time is reported, not asserted.",
			&always, largeStorage(02770, fsGroup)),
	}
}
