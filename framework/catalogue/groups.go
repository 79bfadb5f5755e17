package catalogue

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
)

// groupDirs are the storage of the groups cases' readOnly flexVolume (never walked, so the
// groups stay as written): one directory per group, root:GID 0750, so that listing it needs
// the group; and a file only group 50000 may read (kubernetes issue 112879: the image's
// /etc/group opening what the pod was not meant to reach).
var groupDirs = []int64{0, 2000, 3000, framework.ImageUserID, framework.ImageExtraGroup, 60000}

func groupStorage() []framework.File {
	out := []framework.File{{Path: ".", Dir: true, Mode: 0755}}
	for _, g := range groupDirs {
		out = append(out, framework.File{Path: fmt.Sprintf("g%d", g), Dir: true, Mode: 0750, GID: g})
	}
	return append(out, framework.File{Path: fmt.Sprintf("g%d/secret", framework.ImageExtraGroup), Mode: 0640, GID: framework.ImageExtraGroup})
}

// asContainer is the pod's container itself (framework.User.Container).
var asContainer = framework.User{Container: true}

// groupsCase is a case of the fsgroup area whose container probes list every group directory
// and read the 50000-only file.
func groupsCase(name, desc string, sc *corev1.PodSecurityContext, lacks bool) *framework.Case {
	pod := mountedAs(podOf(volume(flexVolumeName, corev1.VolumeSource{FlexVolume: &corev1.FlexVolumeSource{Driver: fixtureDriver, ReadOnly: true}})), nil, false)
	pod.Spec.SecurityContext = sc
	c := &framework.Case{Name: "container groups: " + name, Area: framework.AreaFSGroup, Profile: framework.ProfileConformance,
		Description: desc, Pod: pod, Storage: map[string][]framework.File{flexVolumeName: groupStorage()}}
	for _, g := range groupDirs {
		c.Probes = append(c.Probes, framework.Probe{Name: fmt.Sprintf("the container lists g%d", g), Volume: flexVolumeName, As: asContainer, Op: framework.OpList, Path: fmt.Sprintf("g%d", g)})
	}
	c.Probes = append(c.Probes, framework.Probe{Name: "the container reads the 50000-only file", Volume: flexVolumeName, As: asContainer, Op: framework.OpRead, Path: fmt.Sprintf("g%d/secret", framework.ImageExtraGroup)})
	if lacks {
		c.RuntimeLacks = []framework.RuntimeFeature{framework.RuntimeSupplementalGroupsPolicy}
	}
	return c
}

// groupsCases: docs/spec.md "Container groups (KEP-3619)". The probe image's /etc/group makes
// its user volperm (5000) a member of volperm-extra (50000); each case runs as that user (or
// another) with a supplementalGroupsPolicy and lists directories only one group may enter.
// Upstream's e2e (test/e2e/common/node/security_context.go) checks `id -G` and skips nodes
// without support, so the kubelet's refusal is never tested there; here it is, and the groups
// are checked by what they open.
func groupsCases() []*framework.Case {
	merge, strict := ptr(corev1.SupplementalGroupsPolicyMerge), ptr(corev1.SupplementalGroupsPolicyStrict)
	user := func(policy *corev1.SupplementalGroupsPolicy) *corev1.PodSecurityContext {
		return &corev1.PodSecurityContext{RunAsUser: ptr[int64](framework.ImageUserID), SupplementalGroups: []int64{60000}, SupplementalGroupsPolicy: policy}
	}
	withFS := func(sc *corev1.PodSecurityContext) *corev1.PodSecurityContext { sc.FSGroup = ptr(fsGroup); return sc }
	withGroup := func(sc *corev1.PodSecurityContext) *corev1.PodSecurityContext {
		sc.RunAsGroup = ptr[int64](3000)
		return sc
	}
	cases := []*framework.Case{
		groupsCase("runAsUser 5000, policy unset: the image's group 50000 merges in",
			"[groups.policy] unset is Merge (containerd WithAdditionalGIDs): gid 5000 from the image's /etc/passwd, groups 5000, 50000 (the image's /etc/group), 60000 (supplementalGroups); g50000 and its file open.",
			user(nil), false),
		groupsCase("runAsUser 5000, Merge: the image's group 50000 merges in",
			"[groups.policy] Merge, said outright: the same as unset; the container status lists 5000, 50000 and 60000.",
			user(merge), false),
		groupsCase("runAsUser 5000, Strict: only the pod's groups",
			"[groups.policy] Strict (KEP-3619): the image's /etc/group is not read: groups 5000 and 60000; g50000 and its file are refused (EACCES), the bypass of kubernetes issue 112879 closed.",
			user(strict), false),
		groupsCase("runAsUser 5000, Strict, fsGroup 2000: fsGroup is a group",
			"[groups.policy] determineEffectiveSecurityContext puts fsGroup first in supplementalGroups: under Strict the groups are 2000, 5000 and 60000 (the readOnly flexVolume is not walked, so g2000 is what fsGroup opens).",
			withFS(user(strict)), false),
		groupsCase("runAsUser 5000, runAsGroup 3000, Merge: the passwd group 5000 is no group",
			"[groups.policy] runAsGroup 3000 replaces the image's primary gid: groups 3000, 50000 (Merge reads /etc/group by the user's name), 60000; g5000 is refused.",
			withGroup(user(merge)), false),
		groupsCase("runAsUser 5000, runAsGroup 3000, Strict: gid 3000 and 60000 only",
			"[groups.policy] Strict with runAsGroup: groups 3000 and 60000.",
			withGroup(user(strict)), false),
		groupsCase("runAsUser 6000 (not in the image), Strict: gid 0",
			"[groups.policy] a runAsUser without an /etc/passwd line and without runAsGroup gets gid 0 (containerd oci.WithUserID): g0 opens through group root, a trap of images without the user.",
			&corev1.PodSecurityContext{RunAsUser: ptr[int64](6000), SupplementalGroupsPolicy: strict}, false),
		groupsCase("runAsUser 5000, Strict, on a runtime without the policy: rejected",
			"[groups.admit] predicate.go: Strict on a node whose status.features.supplementalGroupsPolicy is not true is rejected before any volume (SupplementalGroupsPolicyNotSupported); upstream's e2e skips such nodes.",
			user(strict), true),
		groupsCase("runAsUser 5000, Merge, on a runtime without the policy: runs merged, no status user",
			"[groups.admit] [groups.policy] Merge runs anywhere; a runtime without the policy merges /etc/group as it always did and reports no user in the container status (containerd 1.6).",
			user(merge), true),
		groupsCase("runAsUser 5000, policy unset, on a runtime without the policy: runs merged",
			"[groups.admit] unset is admitted on any node.",
			user(nil), true),
	}
	// fsGroup is a group under every policy (determineEffectiveSecurityContext).
	cases = append(cases,
		groupsCase("runAsUser 5000, Merge, fsGroup 2000: fsGroup and the image's group",
			"[groups.policy] groups 2000, 5000, 50000, 60000.", withFS(user(merge)), false),
		groupsCase("runAsUser 6000 (not in the image), fsGroup 2000, policy unset: gid 0 and fsGroup",
			"[groups.policy] no /etc/passwd line: gid 0; fsGroup 2000 a group; nothing from /etc/group.",
			&corev1.PodSecurityContext{RunAsUser: ptr[int64](6000), FSGroup: ptr(fsGroup)}, false),
	)
	// The container's runAsGroup over the pod's (securitycontext.DetermineEffectiveSecurityContext).
	for _, policy := range []*corev1.SupplementalGroupsPolicy{strict, merge, nil} {
		word := "unset"
		if policy != nil {
			word = string(*policy)
		}
		own := groupsCase("the container's runAsGroup 2000 over the pod's 3000, policy "+word,
			"[groups.policy] the container's securityContext wins: gid 2000; g3000 refused, g2000 open.",
			withGroup(user(policy)), false)
		own.Pod.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{RunAsGroup: ptr[int64](2000)}
		cases = append(cases, own)
	}
	// Strict is refused on a runtime without the policy whatever else the pod says.
	cases = append(cases,
		groupsCase("runAsUser 5000, Strict, fsGroup 2000, on a runtime without the policy: rejected",
			"[groups.admit] the refusal reads the policy only.", withFS(user(strict)), true),
		groupsCase("runAsUser 5000, runAsGroup 3000, Strict, on a runtime without the policy: rejected",
			"[groups.admit] the refusal reads the policy only.", withGroup(user(strict)), true),
	)

	// The container's own ids without a pod securityContext (DetermineEffectiveSecurityContext).
	for _, t := range []struct {
		title, desc string
		sc          *corev1.SecurityContext
	}{
		{"the container's runAsUser 5000, no pod securityContext: the image's gid and group", "[groups.policy] gid 5000 from /etc/passwd, 50000 from /etc/group (unset policy is Merge).", &corev1.SecurityContext{RunAsUser: ptr[int64](framework.ImageUserID)}},
		{"the container's runAsUser 6000, no pod securityContext: gid 0", "[groups.policy] no /etc/passwd line: gid 0, no image group.", &corev1.SecurityContext{RunAsUser: ptr[int64](6000)}},
		{"the container's runAsUser 5000 and runAsGroup 3000, no pod securityContext", "[groups.policy] gid 3000; 50000 merged by the user's name; 5000 is no group.", &corev1.SecurityContext{RunAsUser: ptr[int64](framework.ImageUserID), RunAsGroup: ptr[int64](3000)}},
	} {
		c := groupsCase(t.title, t.desc, nil, false)
		c.Pod.Spec.Containers[0].SecurityContext = t.sc
		cases = append(cases, c)
	}
	// Merge runs on a runtime without the policy whatever else the pod says; Strict keeps
	// fsGroup among the groups.
	cases = append(cases,
		groupsCase("runAsUser 5000, Merge, fsGroup 2000, on a runtime without the policy: runs merged", "[groups.admit] only Strict is refused.", withFS(user(merge)), true),
		groupsCase("runAsUser 5000, runAsGroup 3000, Merge, on a runtime without the policy: runs merged", "[groups.admit] only Strict is refused.", withGroup(user(merge)), true),
		groupsCase("runAsUser 5000, runAsGroup 3000, Strict, fsGroup 2000: 2000, 3000 and 60000", "[groups.policy] fsGroup stays a group under Strict.", withFS(withGroup(user(strict))), false),
		groupsCase("runAsUser 6000, Strict, fsGroup 2000: gid 0, 2000", "[groups.policy] fsGroup stays a group under Strict, for a user the image lacks too.",
			&corev1.PodSecurityContext{RunAsUser: ptr[int64](6000), FSGroup: ptr(fsGroup), SupplementalGroupsPolicy: strict}, false),
	)

	// [validation.supplemental-groups-policy]: the API's values, and windows pods. edit, when
	// set, reshapes the pod (its securityContext kept).
	admission := func(title, desc string, sc *corev1.PodSecurityContext, windows bool, edit func(*corev1.Pod) *corev1.Pod) *framework.Case {
		c := groupsCase("supplementalGroupsPolicy "+title, "[validation.supplemental-groups-policy] "+desc, sc, false)
		if edit != nil {
			c.Pod = edit(c.Pod)
			c.Pod.Spec.SecurityContext = sc
		}
		if windows {
			c.Pod.Spec.OS = &corev1.PodOS{Name: corev1.Windows}
		}
		c.AdmissionOnly, c.Probes, c.Storage = true, nil, nil
		return c
	}
	only := func(p *corev1.SupplementalGroupsPolicy) *corev1.PodSecurityContext {
		return &corev1.PodSecurityContext{SupplementalGroupsPolicy: p}
	}
	return append(cases,
		admission("Loose: NotSupported", "validateSupplementalGroupsPolicy: Merge and Strict only.", user(ptr(corev1.SupplementalGroupsPolicy("Loose"))), false, nil),
		admission("on a windows pod: Forbidden", "validateWindows: a windows pod may not set it.", only(merge), true, nil),
		admission("Strict on a windows pod: Forbidden", "validateWindows: any value.", only(strict), true, nil),
		admission("Merge on a windows pod of two containers: Forbidden", "validateWindows: any value.", only(merge), true,
			func(p *corev1.Pod) *corev1.Pod { return mountedAs(p, nil, true) }),
		admission("Merge on a windows pod with an emptyDir: Forbidden", "validateWindows: the volumes do not matter.", only(merge), true,
			func(*corev1.Pod) *corev1.Pod {
				return mountedAs(podOf(volume("scratch", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}})), nil, false)
			}),
	)
}
