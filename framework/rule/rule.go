// Package rule names every rule of docs/spec.md and the conditions each one depends on, so that
// the catalogue's coverage can be read and tested (docs/coverage.md). The oracle reports, for
// one case, which rules it applied and under which conditions (oracle.Explain); Cover folds
// that over a catalogue; Rule.Needs says which conditions a rule must be seen under. The
// package is a leaf: it knows the words, not the cases.
package rule

import (
	"fmt"
	"sort"
	"strings"
)

// ID identifies one rule; docs/spec.md writes it in brackets at the rule's line: [walk.mask].
type ID string

// Dim is a condition a rule's outcome can depend on.
type Dim string

// The condition dimensions. Each has a fixed set of values (Values).
const (
	// Medium of an emptyDir (or of the wrapped emptyDir of an AtomicWriter volume).
	Medium Dim = "medium"
	// Type is the API name of the volume's source.
	Type Dim = "type"
	// SetUp says whether the rule ran in the first SetUp or in a later one (restartKubelet).
	SetUp Dim = "setup"
	// Access is the volume's access: a read-only walk mask, a readOnly flexVolume.
	Access Dim = "access"
	// Gate is the state of the gate the rule reads, in the component that reads it.
	Gate Dim = "gate"
	// GateSource says whether that gate was set by the case or left at its default.
	GateSource Dim = "gate-source"
	// Boundary is where a value lies against a range [lo, hi].
	Boundary Dim = "boundary"
	// Old is an admission's old pod: a create, or an update whose old pod did or did not use
	// the field.
	Old Dim = "old"
	// FSGroup is whether the pod has an fsGroup.
	FSGroup Dim = "fsgroup"
	// Entry is a kind of entry the ownership walk met.
	Entry Dim = "entry"
	// Policy is the pod's fsGroupChangePolicy.
	Policy Dim = "policy"
	// Root is the OnRootMismatch decision: the root matched, or the first check it failed.
	Root Dim = "root"
	// HostType is a hostPath volume's type ("" is "unset").
	HostType Dim = "hosttype"
	// HostCheck is a hostPath type check: the type, then what it found at the path (match,
	// another type, nothing, or nothing and so created it).
	HostCheck Dim = "hostcheck"
	// Path is how a hostPath's path reaches its object.
	Path Dim = "path"
	// Preserve is a volume's preservePermissions and the kubelet gate that honours it.
	Preserve Dim = "preserve"
	// ModeFrom is where a file's mode comes from in an AtomicWriter volume.
	ModeFrom Dim = "mode-from"
	// Outcome is the rule's result for the object checked: accepted / set up, or an error.
	Outcome Dim = "outcome"
	// Object is what is admitted: a pod or a PersistentVolume.
	Object Dim = "object"
	// Op is a probe's operation.
	Op Dim = "op"
	// Class is the permission class a probe's user falls in for the entry checked.
	Class Dim = "class"
	// FieldValidation is the create request's fieldValidation.
	FieldValidation Dim = "field-validation"
	// UserFrom is where a KEP-5936 field sits (the volume's defaultUser, an item's user, a
	// token's user), or, for a file's owner, which one decided it ("none": neither, or the
	// kubelet gate off).
	UserFrom Dim = "user-from"
	// FsUser is the pod's FsUser as v1.37 FsUserFrom finds it: every container's effective
	// runAsUser the same non-zero uid ("one") or 0 ("root"), or none because no container has
	// one ("none"), some container lacks one ("partial") or two differ ("mixed").
	FsUser Dim = "fs-user"
	// Projection is the kind of a projected source whose files get the pod's FsUser.
	Projection Dim = "projection"
	// Mapped: whether an entry's owner and group have a mapping in the pod's user namespace.
	Mapped Dim = "mapped"
	// HostUsers is the pod's spec.hostUsers: false (a user namespace, KEP-127), true, or unset
	// (which means true).
	HostUsers Dim = "host-users"
	// HostField is a field validateHostUsers forbids with hostUsers false that the pod sets
	// (a container's volumeDevices), or none of them.
	HostField Dim = "host-field"
	// Container is the kind of container a container rule was applied to.
	Container Dim = "container"
	// Propagation is a volumeMount's mountPropagation (a mode, or "unknown").
	Propagation Dim = "propagation"
	// RRO is a volumeMount's recursiveReadOnly (a mode, or "unknown").
	RRO Dim = "recursive-read-only"
	// ReadOnlyFrom is what made a probe's mount read-only: the volumeMount's readOnly, or the
	// volume's type (makeMounts' mustMountRO).
	ReadOnlyFrom Dim = "read-only-from"
	// RuntimeRRO is whether the node's runtime can make recursive read-only mounts.
	RuntimeRRO Dim = "runtime-rro"
	// GroupsPolicyDim is the pod's supplementalGroupsPolicy (a policy, "unset" or "unknown").
	GroupsPolicyDim Dim = "supplemental-groups-policy"
	// RuntimeGroups is whether the node's runtime supports supplementalGroupsPolicy.
	RuntimeGroups Dim = "runtime-groups"
	// RuntimeMount is whether the node's runtime applies a mount's bind options.
	RuntimeMount Dim = "runtime-mount-options"
	// GroupFrom is where a container's group ids come from besides its gid.
	GroupFrom Dim = "group-from"
	// SELinuxPolicyDim is the pod's seLinuxChangePolicy.
	SELinuxPolicyDim Dim = "selinux-change-policy"
	// SELinuxSource is what a volume is to the SELinux decision: a PersistentVolume's source
	// (csi by its CSIDriver's seLinuxMount) or an inline volume.
	SELinuxSource Dim = "selinux-source"
	// AccessModes is a PersistentVolume's access modes.
	AccessModes Dim = "access-modes"
	// SELinuxMountGate is the SELinuxMount gate of the component (by its release: on from v1.37).
	SELinuxMountGate Dim = "selinux-mount"
	// SELinuxLabelFrom is where a container's SELinux label comes from.
	SELinuxLabelFrom Dim = "selinux-label-from"
	// Decision is a node's SELinux decision for a volume: mounted with a label, without, the
	// volume failed, or a mismatch it ignored.
	Decision Dim = "decision"
	// Status is a container status value (a mount's recursiveReadOnly, or "error").
	Status Dim = "status"
)

// Values lists every value of each dimension, in report order.
var Values = map[Dim][]string{
	Medium:     {"default", "Memory", "HugePages"},
	Type:       {"emptyDir", "hostPath", "secret", "configMap", "downwardAPI", "projected", "flexVolume", "image"},
	SetUp:      {"first", "restart"},
	Access:     {"read-write", "read-only"},
	Gate:       {"on", "off"},
	GateSource: {"default", "set"},
	Boundary:   {"below", "lowest", "inside", "highest", "above"},
	Old:        {"create", "update-in-use", "update-not-in-use"},
	FSGroup:    {"unset", "set"},
	Entry:      {"root", "dir", "file", "symlink", "nested", "setuid", "setgid", "sticky", "other-owner"},
	Policy:     {"unset", "Always", "OnRootMismatch"},
	Root:       {"match", "gid", "setgid", "bits"},
	HostType:   {"unset", "DirectoryOrCreate", "Directory", "FileOrCreate", "File", "Socket", "CharDevice", "BlockDevice"},
	HostCheck:  hostChecks(),
	Path:       {"direct", "symlink", "dangling-symlink", "through-file"},
	Preserve:   {"none", "field-gate-off", "field-gate-on"},
	ModeFrom:   {"defaultMode", "item"},
	Outcome:    {"ok", "error"},
	Object:     {"pod", "persistentVolume"},
	Op:         {"create", "write", "read", "delete", "rename", "list", "mkdir", "fill", "chmod", "chown", "exec"},
	Class:      {"root", "owner", "group", "other"},

	FieldValidation:  {"warn", "strict"},
	UserFrom:         {"defaultUser", "item", "token", "runAsUser", "none"},
	FsUser:           {"one", "root", "none", "partial", "mixed"},
	Projection:       {"serviceAccountToken", "clusterTrustBundle", "podCertificate"},
	Mapped:           {"yes", "no"},
	HostUsers:        {"false", "true", "unset"},
	HostField:        {"hostNetwork", "hostPID", "hostIPC", "volumeDevices", "none"},
	Container:        {"container", "initContainer"},
	Propagation:      {"None", "HostToContainer", "Bidirectional", "unknown"},
	RRO:              {"Disabled", "Enabled", "IfPossible", "unknown", "unset"},
	ReadOnlyFrom:     {"volumeMount", "secret", "configMap", "downwardAPI", "projected", "flexVolume", "image"},
	RuntimeRRO:       {"supports", "lacks"},
	Status:           {"Enabled", "Disabled", "error"},
	GroupsPolicyDim:  {"unset", "Merge", "Strict", "unknown"},
	RuntimeGroups:    {"supports", "lacks"},
	RuntimeMount:     {"supports", "lacks"},
	GroupFrom:        {"image", "fsGroup", "supplementalGroups", "runAsGroup", "none"},
	SELinuxPolicyDim: {"unset", "MountOption", "Recursive", "unknown"},
	SELinuxSource:    {"csi-supported", "csi-unsupported", "csi-no-driver", "iscsi", "fc", "nfs", "inline"},
	AccessModes:      {"ReadWriteOncePod", "ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "several"},
	SELinuxMountGate: {"on", "off"},
	Decision:         {"label", "none", "error", "ignored"},
	SELinuxLabelFrom: {"pod", "container", "defaults"},
}

// Cond is one condition a rule was applied under.
type Cond struct {
	Dim   Dim
	Value string
}

func (c Cond) String() string { return string(c.Dim) + "=" + c.Value }

// Rule is one rule of docs/spec.md.
type Rule struct {
	ID ID
	// Section is the docs/spec.md heading the rule sits under.
	Section string
	// Says is the rule in one line.
	Says string
	// Needs are the dimensions whose every value (or the listed ones) the catalogue must apply
	// the rule under: both sides of each condition the rule depends on.
	Needs []Need
}

// Need is one dimension a rule must be covered in, with the values required (all of
// Values[Dim] when Only is empty).
type Need struct {
	Dim  Dim
	Only []string
}

// Want returns the values n requires.
func (n Need) Want() []string {
	if len(n.Only) > 0 {
		return n.Only
	}
	return Values[n.Dim]
}

// Hit is one application of a rule, under its conditions, as the oracle saw it.
type Hit struct {
	Rule  ID
	Conds []Cond
}

// Get returns the rule of id, or false.
func Get(id ID) (Rule, bool) {
	for _, r := range All {
		if r.ID == id {
			return r, true
		}
	}
	return Rule{}, false
}

// hostChecks is every hostPath type with each result its check can have (host_path.go
// checkTypeInternal): "" checks nothing; *OrCreate creates what is missing.
func hostChecks() []string {
	out := []string{"unset/any"}
	for _, t := range []string{"DirectoryOrCreate", "FileOrCreate"} {
		out = append(out, t+"/match", t+"/other-type", t+"/created")
	}
	for _, t := range []string{"Directory", "File", "Socket", "CharDevice", "BlockDevice"} {
		out = append(out, t+"/match", t+"/other-type", t+"/missing")
	}
	return out
}

// BoundaryOf classifies v against the inclusive range [lo, hi].
func BoundaryOf(v, lo, hi int64) string {
	switch {
	case v < lo:
		return "below"
	case v == lo:
		return "lowest"
	case v < hi:
		return "inside"
	case v == hi:
		return "highest"
	}
	return "above"
}

// Coverage is, per rule, the cases that apply it and the conditions they cover.
type Coverage struct {
	Rules []RuleCoverage
}

// RuleCoverage is one rule's coverage.
type RuleCoverage struct {
	Rule Rule
	// Cases apply the rule, in catalogue order.
	Cases []string
	// Seen maps each condition to the cases that apply the rule under it.
	Seen map[Cond][]string
	// Missing are the conditions the rule needs and no case covers.
	Missing []Cond
}

// Cover folds the hits of every case (case name -> hits, in catalogue order names) into the
// coverage of every rule of All. A hit of a rule that is not in All is an error: the oracle
// and the table disagree.
func Cover(names []string, hits map[string][]Hit) (*Coverage, error) {
	byRule := map[ID]*RuleCoverage{}
	cov := &Coverage{}
	for _, r := range All {
		cov.Rules = append(cov.Rules, RuleCoverage{Rule: r, Seen: map[Cond][]string{}})
	}
	for i := range cov.Rules {
		byRule[cov.Rules[i].Rule.ID] = &cov.Rules[i]
	}
	for _, name := range names {
		counted := map[ID]bool{}
		seen := map[ID]map[Cond]bool{}
		for _, h := range hits[name] {
			rc := byRule[h.Rule]
			if rc == nil {
				return nil, fmt.Errorf("case %q: the oracle applied rule %q, which is not in rule.All", name, h.Rule)
			}
			if !counted[h.Rule] {
				counted[h.Rule] = true
				rc.Cases = append(rc.Cases, name)
				seen[h.Rule] = map[Cond]bool{}
			}
			for _, c := range h.Conds {
				if !seen[h.Rule][c] {
					seen[h.Rule][c] = true
					rc.Seen[c] = append(rc.Seen[c], name)
				}
			}
		}
	}
	for i := range cov.Rules {
		rc := &cov.Rules[i]
		for _, n := range rc.Rule.Needs {
			for _, v := range n.Want() {
				if c := (Cond{n.Dim, v}); len(rc.Seen[c]) == 0 {
					rc.Missing = append(rc.Missing, c)
				}
			}
		}
	}
	return cov, nil
}

// Gaps lists every rule no case applies and every needed condition no case covers, one line
// each.
func (c *Coverage) Gaps() []string {
	var out []string
	for _, rc := range c.Rules {
		if len(rc.Cases) == 0 {
			out = append(out, fmt.Sprintf("%s: no case applies it (%s)", rc.Rule.ID, rc.Rule.Says))
			continue
		}
		for _, m := range rc.Missing {
			out = append(out, fmt.Sprintf("%s: no case under %s (%s)", rc.Rule.ID, m, rc.Rule.Says))
		}
	}
	return out
}

// Text writes the coverage for a reader: per rule its cases and, per needed dimension, how
// many cases cover each value. With cases, every case is named; else the first few.
func (c *Coverage) Text(cases bool) string {
	var b strings.Builder
	covered := 0
	for _, rc := range c.Rules {
		if len(rc.Cases) > 0 && len(rc.Missing) == 0 {
			covered++
		}
	}
	fmt.Fprintf(&b, "%d rules of docs/spec.md, %d covered under every condition they need\n", len(c.Rules), covered)
	section := ""
	for _, rc := range c.Rules {
		if rc.Rule.Section != section {
			section = rc.Rule.Section
			fmt.Fprintf(&b, "\n## %s\n", section)
		}
		status := "ok"
		if len(rc.Cases) == 0 || len(rc.Missing) > 0 {
			status = "GAP"
		}
		fmt.Fprintf(&b, "\n[%s] %s  (%d cases, %s)\n", rc.Rule.ID, rc.Rule.Says, len(rc.Cases), status)
		for _, d := range dimsOf(rc) {
			var parts []string
			for _, v := range Values[d] {
				if n := len(rc.Seen[Cond{d, v}]); n > 0 || needs(rc.Rule, d, v) {
					parts = append(parts, fmt.Sprintf("%s %d", v, n))
				}
			}
			fmt.Fprintf(&b, "    %-12s %s\n", d, strings.Join(parts, ", "))
		}
		for _, m := range rc.Missing {
			fmt.Fprintf(&b, "    missing      %s\n", m)
		}
		names := rc.Cases
		more := 0
		if !cases && len(names) > 3 {
			names, more = names[:3], len(names)-3
		}
		for _, n := range names {
			fmt.Fprintf(&b, "    case         %s\n", n)
		}
		if more > 0 {
			fmt.Fprintf(&b, "    ...          and %d more (--cases lists them all)\n", more)
		}
	}
	return b.String()
}

// dimsOf returns the dimensions rc needs, then any other it was seen under, in Values order.
func dimsOf(rc RuleCoverage) []Dim {
	have := map[Dim]bool{}
	var out []Dim
	for _, n := range rc.Rule.Needs {
		if !have[n.Dim] {
			have[n.Dim] = true
			out = append(out, n.Dim)
		}
	}
	var extra []Dim
	for c := range rc.Seen {
		if !have[c.Dim] {
			have[c.Dim] = true
			extra = append(extra, c.Dim)
		}
	}
	sort.Slice(extra, func(i, j int) bool { return extra[i] < extra[j] })
	return append(out, extra...)
}

func needs(r Rule, d Dim, v string) bool {
	for _, n := range r.Needs {
		if n.Dim != d {
			continue
		}
		for _, w := range n.Want() {
			if w == v {
				return true
			}
		}
	}
	return false
}
