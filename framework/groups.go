package framework

import (
	"fmt"
	"slices"

	"github.com/volperm/volperm/framework/probe/image"
)

// The container's process identity (docs/spec.md [groups.policy], KEP-3619): the kubelet turns
// the pod's securityContext into the CRI container's user (ContainerSecurity), the runtime
// turns that and the image's /etc/passwd and /etc/group into the process's uid, gid and groups
// (RuntimeUser), and reports them in the container's status (ContainerUser).

// ImageUserID is the probe image's user volperm; ImageExtraGroup the group its /etc/group gives
// that user besides its own (framework/probe/image Users and Groups).
const (
	ImageUserID     = image.UserID
	ImageExtraGroup = image.ExtraGroup
)

// ImageLookup is what a runtime reads of the probe image for uid: the primary gid of its
// /etc/passwd line (ok false when it has none) and the gids of the /etc/group lines that list
// its name as a member (containerd oci.WithAdditionalGIDs: a group named as the user is not
// one), in file order.
func ImageLookup(uid int64) (gid int64, ok bool, groups []int64) {
	i := slices.IndexFunc(image.Users, func(u image.User) bool { return u.UID == uid })
	if i < 0 {
		return 0, false, nil
	}
	u := image.Users[i]
	for _, g := range image.Groups {
		if g.Name != u.Name && slices.Contains(g.Members, u.Name) {
			groups = append(groups, g.GID)
		}
	}
	return u.GID, true, groups
}

// ContainerSecurity is the user part of the CRI container config a kubelet gives its runtime
// (v1.37 kuberuntime/security_context.go determineEffectiveSecurityContext): runAsUser and
// runAsGroup (nil: unset; the image has no USER), supplementalGroups (fsGroup, then the pod's
// supplementalGroups, then the groups of its volumes), and the policy.
type ContainerSecurity struct {
	RunAsUser          *int64  `json:"runAsUser,omitempty"`
	RunAsGroup         *int64  `json:"runAsGroup,omitempty"`
	SupplementalGroups []int64 `json:"supplementalGroups,omitempty"`
	// Strict is supplementalGroupsPolicy Strict; false is Merge (or unset).
	Strict bool `json:"strict,omitempty"`
}

// RuntimeUser is the process identity a runtime gives a container of the probe image with sec
// (containerd 2 internal/cri/server/container_create_linux.go: oci.WithUser, then
// oci.WithAdditionalGIDs unless the policy is Strict and the runtime honours it, then
// WithSupplementalGroups): uid runAsUser (else 0); gid runAsGroup, else the image's primary gid
// of uid, else 0; groups the gid, the image's groups of uid (Merge), sec's groups, sorted,
// each once. strict says the runtime honours Strict (RuntimeSupplementalGroupsPolicy).
func RuntimeUser(sec ContainerSecurity, strict bool) User {
	var u User
	if sec.RunAsUser != nil {
		u.UID = *sec.RunAsUser
	}
	gid, _, imageGroups := ImageLookup(u.UID)
	u.GID = gid
	if sec.RunAsGroup != nil {
		u.GID = *sec.RunAsGroup
	}
	groups := []int64{u.GID}
	if !(sec.Strict && strict) {
		groups = append(groups, imageGroups...)
	}
	u.Groups = NormalGroups(append(groups, sec.SupplementalGroups...))
	return u
}

// NormalGroups is groups sorted, each once: how a process's groups and a container status's
// supplementalGroups are compared (the kernel keeps a set; runtimes differ in order).
func NormalGroups(groups []int64) []int64 {
	out := slices.Clone(groups)
	slices.Sort(out)
	return slices.Compact(out)
}

// ContainerUser is a container's status.containerStatuses[].user.linux (v1.37 kubelet_pods.go
// convertToAPIContainerStatuses): the uid, gid and supplementalGroups its runtime reports,
// supplementalGroups sorted, each once (NormalGroups). A runtime without
// RuntimeSupplementalGroupsPolicy reports none.
type ContainerUser struct {
	UID                int64   `json:"uid"`
	GID                int64   `json:"gid"`
	SupplementalGroups []int64 `json:"supplementalGroups,omitempty"`
}

// String is u as the reports show it ("none" for nil).
func (u *ContainerUser) String() string {
	if u == nil {
		return "none"
	}
	return fmt.Sprintf("uid %d gid %d groups %v", u.UID, u.GID, u.SupplementalGroups)
}

// ContainerUserOf is the status a runtime reports of a process of identity u.
func ContainerUserOf(u User) *ContainerUser {
	return &ContainerUser{UID: u.UID, GID: u.GID, SupplementalGroups: NormalGroups(u.Groups)}
}

// HasContainerProbes says whether a probe of c runs as the container itself (User.Container).
func HasContainerProbes(c *Case) bool {
	return slices.ContainsFunc(c.Probes, func(p Probe) bool { return p.As.Container })
}

// WithContainerUser is probes with every container probe's user replaced by u.
func WithContainerUser(probes []Probe, u User) []Probe {
	out := slices.Clone(probes)
	for i := range out {
		if out[i].As.Container {
			out[i].As = u
		}
	}
	return out
}
