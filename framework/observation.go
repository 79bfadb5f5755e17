package framework

import (
	corev1 "k8s.io/api/core/v1"
	"slices"

	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

// ObservationVersion is the schema version written into every Observation.
const ObservationVersion = "volperm.dev/v1"

// Observation is what an implementation did with a Case (or what the oracle says it must do).
// One schema for `volperm expect`, `volperm observe`, the suites and the reports (docs/observation.md).
type Observation struct {
	APIVersion string `json:"apiVersion"`
	Case       string `json:"case"`
	// Source is "oracle" or the target's name; it is not compared.
	Source    string              `json:"source,omitempty"`
	Admission Admission           `json:"admission"`
	Volumes   []VolumeObservation `json:"volumes,omitempty"`
	// SandboxError is the kubelet's error when it could not create the pod's sandbox (the
	// FailedCreatePodSandBox event's "Failed to create pod sandbox: " and this); the volumes are
	// set up before, no container runs after (docs/spec.md [userns.runtime]).
	SandboxError string `json:"sandboxError,omitempty"`
	// ContainerError is the kubelet's error when it could not create the pod's container (its
	// status Waiting, reason CreateContainerConfigError, this message): the volumes are set up,
	// no container runs, no probe (docs/spec.md [mounts.recursive-read-only]).
	ContainerError string `json:"containerError,omitempty"`
	// Rejected is the kubelet's refusal to admit the pod ("REASON: MESSAGE" of the pod's status,
	// phase Failed): no volume is set up, no container runs (docs/spec.md [groups.admit]).
	Rejected string `json:"rejected,omitempty"`
	// ContainerUser is the container status's user (uid, gid, supplementalGroups) of the
	// container the case's container probes run as (Probe.As.Container), when its runtime
	// reports one (docs/spec.md [groups.policy]).
	ContainerUser *ContainerUser `json:"containerUser,omitempty"`
	// UserNamespace is the pod's user namespace, for a pod with hostUsers: false that reached
	// the node.
	UserNamespace *UserNamespace `json:"userNamespace,omitempty"`
	Probes        []ProbeResult  `json:"probes,omitempty"`
}

// UserNamespace is a pod's user namespace as its node gave it (docs/observation.md "User
// namespace"; docs/spec.md [userns.range]): what of its range a kubelet decides, not where it
// is (a random free slot).
type UserNamespace struct {
	// IDs is how many ids the pod's one range has, uids and gids alike from id 0; 0 when its
	// uid and gid maps are not one such range.
	IDs uint32 `json:"ids"`
	// Aligned: the range starts on the node at a nonzero multiple of IDs.
	Aligned bool `json:"aligned"`
	// Kept: every kubelet start after the first (restartKubelet, kubeletRelease) found the
	// pod's range as the first left it; set only for a case that restarts the kubelet.
	Kept *bool `json:"kept,omitempty"`
	// HostID is the node's first id of the range, for the reader: a free slot the kubelet
	// picks, never compared.
	HostID uint32 `json:"hostID,omitempty"`
	// SharedWith names another pod, running on the node at the same time, whose range has host
	// ids of this one's (docs/spec.md [userns.range]: disjoint); empty when none does. Where a
	// target sees several pods at once (kind, cluster).
	SharedWith string `json:"sharedWith,omitempty"`
}

// UserNamespaceOf is the UserNamespace of a pod whose range was ranges[0] at its first set-up
// and ranges[i] after its i-th kubelet restart; nil for none.
func UserNamespaceOf(ranges []IDMap) *UserNamespace {
	if len(ranges) == 0 {
		return nil
	}
	first := ranges[0]
	u := &UserNamespace{IDs: first.Length, Aligned: first.Length > 0 && first.HostID > 0 && first.HostID%first.Length == 0, HostID: first.HostID}
	if len(ranges) > 1 {
		kept := !slices.ContainsFunc(ranges[1:], func(m IDMap) bool { return m != first })
		u.Kept = &kept
	}
	return u
}

func (u *UserNamespace) String() string {
	if u == nil {
		return "none (the node's)"
	}
	s := fmt.Sprintf("%d ids", u.IDs)
	if u.Aligned {
		s += ", aligned"
	} else {
		s += ", not aligned"
	}
	if u.Kept != nil {
		s += fmt.Sprintf(", kept across restarts %v", *u.Kept)
	}
	if u.SharedWith != "" {
		s += ", host ids shared with running pod " + u.SharedWith
	}
	return s
}

// Admission is the apiserver's answer.
type Admission struct {
	Allowed bool `json:"allowed"`
	// Errors are the rejection texts (field path + message), sorted, each once (as the
	// apiserver's message gives them).
	Errors []string `json:"errors,omitempty"`
	// Dropped are the field paths the apiserver cleared (e.g. "spec.volumes[0].emptyDir.mode"), sorted.
	Dropped []string `json:"dropped,omitempty"`
	// PreservePermissions are the volumes that still carry the proposed field after admission.
	PreservePermissions []string `json:"preservePermissions,omitempty"`
	// Warnings are the apiserver's warnings on an allowed request (an unknown field it
	// dropped: docs/spec.md "Releases"), sorted.
	Warnings []string `json:"warnings,omitempty"`
}

// VolumeObservation is one volume of the pod after set-up (and after the Case's steps).
type VolumeObservation struct {
	Name string `json:"name"`
	// Type is the volume source: emptyDir, hostPath, secret, configMap, downwardAPI, projected, flexVolume.
	Type string `json:"type"`
	// Medium is an emptyDir's medium as the pod spec writes it: "", "Memory", "HugePages", "HugePages-2Mi".
	Medium string `json:"medium,omitempty"`
	// SetUp is "ok" or the error text of the failed set-up.
	SetUp string `json:"setUp"`
	// RecursiveReadOnly is the container status of the volume's probe mount when its
	// volumeMount is readOnly (status.containerStatuses[].volumeMounts[].recursiveReadOnly):
	// Enabled or Disabled; empty for a read-write volumeMount or a volume no container mounts
	// (docs/spec.md [mounts.recursive-read-only]).
	RecursiveReadOnly string `json:"recursiveReadOnly,omitempty"`
	// SELinuxMount is the SELinux label a node with SELinux on (Case.SELinux) mounts the volume
	// with (the mount option context="LABEL"); empty: no context mount, the runtime relabels or
	// nothing does (docs/spec.md "SELinux mount decisions").
	SELinuxMount string `json:"seLinuxMount,omitempty"`
	// Paths is every entry of the volume, the root "." first, then sorted by path.
	Paths []PathObservation `json:"paths,omitempty"`
}

// SetUpOK is VolumeObservation.SetUp for a successful set-up.
const SetUpOK = "ok"

// PathObservation is lstat of one entry, relative to the volume root.
type PathObservation struct {
	// Path is relative to the volume root; "." is the root. AtomicWriter timestamp directories
	// are written as "..TIMESTAMP" so that observations compare.
	Path string `json:"path"`
	// Type is dir, file, symlink, socket, chardev, blockdev, fifo.
	Type string `json:"type"`
	// Mode is the permission bits with setuid/setgid/sticky, as 4-digit octal ("2770").
	Mode string `json:"mode"`
	UID  int64  `json:"uid"`
	GID  int64  `json:"gid"`
	// Link is a symlink's target, as written.
	Link string `json:"link,omitempty"`
	// PodUID and PodGID are the owner as the pod sees it through its user namespace's idmapped
	// mount (hostUsers: false), set only where it differs from the owner on disk
	// (docs/observation.md "Two views").
	PodUID *int64 `json:"podUID,omitempty"`
	PodGID *int64 `json:"podGID,omitempty"`
}

// IDMap is a pod's user namespace: ids 0..Length-1 inside are HostID.. on the node, for uids
// and gids alike (v1.37 userns_manager.go: one range per pod).
type IDMap struct {
	HostID uint32 `json:"hostID"`
	Length uint32 `json:"length"`
}

// PodOwners gives each entry of disk the owner the pod sees of the same entry of pod (by path,
// ids as inside the pod) as PodUID/PodGID, where it differs from the disk's (docs/observation.md
// "Two views"). It returns the paths of pod that disk lacks.
func PodOwners(disk, pod []PathObservation) (missing []string) {
	by := map[string]PathObservation{}
	for _, p := range pod {
		by[p.Path] = p
	}
	for i := range disk {
		p, ok := by[disk[i].Path]
		if !ok {
			continue
		}
		delete(by, p.Path)
		if uid := p.UID; uid != disk[i].UID {
			disk[i].PodUID = &uid
		}
		if gid := p.GID; gid != disk[i].GID {
			disk[i].PodGID = &gid
		}
	}
	for path := range by {
		missing = append(missing, path)
	}
	slices.Sort(missing)
	return missing
}

// Overflow is the id the kernel shows for an id that has no mapping (/proc/sys/kernel/overflowuid).
const Overflow = 65534

// Inside is host id x as a process of the user namespace m sees it: x-HostID in the range,
// else Overflow.
func (m IDMap) Inside(x int64) int64 {
	if x >= int64(m.HostID) && x < int64(m.HostID)+int64(m.Length) {
		return x - int64(m.HostID)
	}
	return Overflow
}

// ProbeResult is the outcome of one Probe.
type ProbeResult struct {
	Name    string `json:"name"`
	Allowed bool   `json:"allowed"`
	// Errno is the error's name (EACCES, EPERM, ENOENT, ...) when not allowed.
	Errno string `json:"errno,omitempty"`
	// Made is, in a pod with hostUsers: false, what an allowed create, mkdir, fill, chmod or
	// chown left at its path once every probe of the case ran: the entry on the node's disk
	// (symlinks followed), with the pod's view of its owner where it differs (docs/observation.md
	// "Two views"). It is where a runtime's idmap shows: what uid 1000 of the pod makes is 1000
	// on disk, not the pod's first host id + 1000.
	Made *PathObservation `json:"made,omitempty"`
}

// MakesEntry says whether op makes or changes the entry at its path (ProbeResult.Made).
func MakesEntry(op ProbeOp) bool {
	switch op {
	case OpCreate, OpMkdir, OpFill, OpChmod, OpChown:
		return true
	}
	return false
}

// FileMode converts Unix permission bits (with setuid 04000, setgid 02000, sticky 01000) to an
// os.FileMode for os.Chmod.
func FileMode(m uint32) os.FileMode {
	fm := os.FileMode(m & 0777)
	if m&04000 != 0 {
		fm |= os.ModeSetuid
	}
	if m&02000 != 0 {
		fm |= os.ModeSetgid
	}
	if m&01000 != 0 {
		fm |= os.ModeSticky
	}
	return fm
}

// FormatMode renders permission bits (including 07000) as 4-digit octal.
func FormatMode(m uint32) string { return fmt.Sprintf("%04o", m&07777) }

// Normalize sorts what has no meaningful order, so two Observations compare by content.
func (o *Observation) Normalize() {
	if o.APIVersion == "" {
		o.APIVersion = ObservationVersion
	}
	// Each text once: the apiserver's message is field.ErrorList.ToAggregate(), which drops a
	// repeated text (two bad mounts of one container give one recursiveReadOnly error there).
	sort.Strings(o.Admission.Errors)
	o.Admission.Errors = slices.Compact(o.Admission.Errors)
	sort.Strings(o.Admission.Dropped)
	sort.Strings(o.Admission.PreservePermissions)
	sort.Strings(o.Admission.Warnings)
	for i := range o.Volumes {
		p := o.Volumes[i].Paths
		sort.SliceStable(p, func(a, b int) bool {
			if (p[a].Path == ".") != (p[b].Path == ".") {
				return p[a].Path == "."
			}
			return p[a].Path < p[b].Path
		})
	}
}

// JSON renders the Observation as indented JSON.
func (o *Observation) JSON() []byte {
	b, err := json.MarshalIndent(o, "", "  ")
	if err != nil {
		panic(err) // only plain data types: cannot fail
	}
	return append(b, '\n')
}

// Diff lists how observed differs from expected, one line per difference; empty when they agree.
// Source is not compared.
func Diff(expected, observed *Observation) []string {
	e, o := *expected, *observed
	e.Normalize()
	o.Normalize()
	var d []string
	add := func(format string, a ...any) { d = append(d, fmt.Sprintf(format, a...)) }
	if e.Admission.Allowed != o.Admission.Allowed {
		add("admission.allowed: expected %v, observed %v", e.Admission.Allowed, o.Admission.Allowed)
	}
	diffStrings(&d, "admission.errors", e.Admission.Errors, o.Admission.Errors)
	diffStrings(&d, "admission.dropped", e.Admission.Dropped, o.Admission.Dropped)
	diffStrings(&d, "admission.preservePermissions", e.Admission.PreservePermissions, o.Admission.PreservePermissions)
	diffStrings(&d, "admission.warnings", e.Admission.Warnings, o.Admission.Warnings)

	ov := map[string]VolumeObservation{}
	for _, v := range o.Volumes {
		ov[v.Name] = v
	}
	seen := map[string]bool{}
	for _, ev := range e.Volumes {
		seen[ev.Name] = true
		got, ok := ov[ev.Name]
		if !ok {
			add("volume %q: expected, not observed", ev.Name)
			continue
		}
		p := fmt.Sprintf("volume %q", ev.Name)
		if ev.Type != got.Type {
			add("%s type: expected %s, observed %s", p, ev.Type, got.Type)
		}
		if ev.Medium != got.Medium {
			add("%s medium: expected %q, observed %q", p, ev.Medium, got.Medium)
		}
		if ev.SetUp != got.SetUp {
			add("%s setUp: expected %q, observed %q", p, ev.SetUp, got.SetUp)
		}
		if ev.SELinuxMount != got.SELinuxMount {
			add("%s seLinuxMount (the context mount option): expected %q, observed %q", p, ev.SELinuxMount, got.SELinuxMount)
		}
		if ev.RecursiveReadOnly != got.RecursiveReadOnly {
			add("%s recursiveReadOnly (container status): expected %q, observed %q", p, ev.RecursiveReadOnly, got.RecursiveReadOnly)
		}
		diffPaths(&d, p, ev.Paths, got.Paths)
	}
	for _, v := range o.Volumes {
		if !seen[v.Name] {
			add("volume %q: observed, not expected", v.Name)
		}
	}

	if e.SandboxError != o.SandboxError {
		add("sandboxError: expected %q, observed %q", e.SandboxError, o.SandboxError)
	}
	if e.ContainerError != o.ContainerError {
		add("containerError: expected %q, observed %q", e.ContainerError, o.ContainerError)
	}
	if e.Rejected != o.Rejected {
		add("rejected: expected %q, observed %q", e.Rejected, o.Rejected)
	}
	if e.ContainerUser.String() != o.ContainerUser.String() {
		add("containerUser (container status): expected %s, observed %s", e.ContainerUser, o.ContainerUser)
	}
	if e.UserNamespace.String() != o.UserNamespace.String() {
		add("userNamespace: expected %s, observed %s", e.UserNamespace, o.UserNamespace)
	}

	op := map[string]ProbeResult{}
	for _, r := range o.Probes {
		op[r.Name] = r
	}
	for _, er := range e.Probes {
		got, ok := op[er.Name]
		switch {
		case !ok:
			add("probe %q: expected, not run", er.Name)
		case er.Allowed != got.Allowed || er.Errno != got.Errno:
			add("probe %q: expected %s, observed %s", er.Name, er.verdict(), got.verdict())
		case er.Made != nil && got.Made == nil:
			add("probe %q: expected it to leave %s, observed nothing", er.Name, er.Made.describe())
		case er.Made == nil && got.Made != nil:
			add("probe %q: observed it left %s, expected nothing", er.Name, got.Made.describe())
		case er.Made != nil && !er.Made.Same(*got.Made):
			add("probe %q: expected it to leave %s, observed %s", er.Name, er.Made.describe(), got.Made.describe())
		}
		delete(op, er.Name)
	}
	for name := range op {
		add("probe %q: observed, not expected", name)
	}
	return d
}

// DiffSubject is what a line of Diff is about: a volume (Volume; Field the volume's field the
// line compares, "path" with Path for an entry, "" for the volume itself), a probe (Probe), or
// neither (Field the line's first word: "admission.allowed", "sandboxError", "userNamespace",
// ...). The format is Diff's, read here beside it (TestDiffSubjectOfEveryLine).
type DiffSubject struct {
	Volume, Path, Probe, Field string
}

// DiffLineSubject reads the subject of a line of Diff.
func DiffLineSubject(line string) DiffSubject {
	if rest, ok := strings.CutPrefix(line, "probe "); ok {
		if name, _, ok := unquotePrefix(rest); ok {
			return DiffSubject{Probe: name}
		}
	}
	rest, ok := strings.CutPrefix(line, "volume ")
	if !ok {
		word, _, _ := strings.Cut(line, ":")
		word, _, _ = strings.Cut(word, " ")
		return DiffSubject{Field: word}
	}
	volume, rest, ok := unquotePrefix(rest)
	if !ok {
		return DiffSubject{}
	}
	s := DiffSubject{Volume: volume}
	rest = strings.TrimPrefix(rest, " ")
	if p, ok := strings.CutPrefix(rest, "path "); ok {
		s.Field = "path"
		s.Path, _, _ = unquotePrefix(p)
		return s
	}
	word, _, _ := strings.Cut(rest, ":")
	s.Field, _, _ = strings.Cut(word, " ")
	return s
}

// unquotePrefix is the Go-quoted string s begins with, and what follows it.
func unquotePrefix(s string) (string, string, bool) {
	q, err := strconv.QuotedPrefix(s)
	if err != nil {
		return "", s, false
	}
	u, err := strconv.Unquote(q)
	return u, s[len(q):], err == nil
}

func (r ProbeResult) verdict() string {
	if r.Allowed {
		return "allowed"
	}
	return "denied (" + r.Errno + ")"
}

func diffStrings(d *[]string, field string, e, o []string) {
	if strings.Join(e, "\n") == strings.Join(o, "\n") {
		return
	}
	*d = append(*d, fmt.Sprintf("%s: expected %q, observed %q", field, e, o))
}

func diffPaths(d *[]string, prefix string, e, o []PathObservation) {
	om := map[string]PathObservation{}
	for _, p := range o {
		om[p.Path] = p
	}
	for _, ep := range e {
		got, ok := om[ep.Path]
		if !ok {
			*d = append(*d, fmt.Sprintf("%s path %q: expected %s, not observed", prefix, ep.Path, ep.describe()))
			continue
		}
		if !ep.Same(got) {
			*d = append(*d, fmt.Sprintf("%s path %q: expected %s, observed %s", prefix, ep.Path, ep.describe(), got.describe()))
		}
		delete(om, ep.Path)
	}
	for _, p := range o {
		if _, extra := om[p.Path]; extra {
			*d = append(*d, fmt.Sprintf("%s path %q: observed %s, not expected", prefix, p.Path, p.describe()))
		}
	}
}

func (p PathObservation) describe() string {
	s := fmt.Sprintf("%s %s %d:%d", p.Type, p.Mode, p.UID, p.GID)
	if p.PodUID != nil || p.PodGID != nil {
		s += fmt.Sprintf(" (in the pod %d:%d)", deref(p.PodUID, p.UID), deref(p.PodGID, p.GID))
	}
	if p.Link != "" {
		s += " -> " + p.Link
	}
	return s
}

// Same says whether p and o observe the same entry alike (the pod's view included).
func (p PathObservation) Same(o PathObservation) bool {
	return p.Path == o.Path && p.Type == o.Type && p.Mode == o.Mode && p.UID == o.UID && p.GID == o.GID &&
		p.Link == o.Link && deref(p.PodUID, p.UID) == deref(o.PodUID, o.UID) && deref(p.PodGID, p.GID) == deref(o.PodGID, o.GID)
}

func deref(p *int64, def int64) int64 {
	if p == nil {
		return def
	}
	return *p
}

// InUserNamespace says whether pod runs in a user namespace of its own (spec.hostUsers: false,
// KEP-127; docs/spec.md "User namespaces").
func InUserNamespace(pod *corev1.Pod) bool {
	return pod != nil && pod.Spec.HostUsers != nil && !*pod.Spec.HostUsers
}
