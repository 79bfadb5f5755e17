package framework

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Area names the spec area a case belongs to; it becomes a Ginkgo label and a JUnit prefix.
type Area string

const (
	AreaEmptyDir     Area = "emptydir"
	AreaHostPath     Area = "hostpath"
	AreaFSGroup      Area = "fsgroup"
	AreaAtomicWriter Area = "atomicwriter"
	AreaFlexVolume   Area = "flexvolume"
	AreaSkew         Area = "skew"
	AreaUserNS       Area = "userns"
	AreaMounts       Area = "mounts"
	AreaSELinux      Area = "selinux"
)

// AreaInfo is all volperm knows of an area, in one place: adding an area is an entry of areas
// (docs/architecture.md "Add an area").
type AreaInfo struct {
	Name Area
	// Description says what the area checks and from which source, for the reports.
	Description string
	// VolumeTypes are the volume types (VolumeType's names) that make a Pod manifest's case one
	// of this area (LoadFile); none for an area a manifest alone cannot be of.
	VolumeTypes []string
}

// areas is every area, in report order.
var areas = []AreaInfo{
	{AreaEmptyDir, "emptyDir `mode` (KEP-5502, seed 000): validation, field dropping, the mode on every medium, fsGroup after the mode, behaviour as other uids",
		[]string{"emptyDir"}},
	{AreaHostPath, "hostPath `type` checks (seed 001): every type against every host object, *OrCreate, failure texts, no ownership change",
		[]string{"hostPath"}},
	{AreaFSGroup, "fsGroup ownership walk (seed 003, volume_linux.go): OR-masks, setgid dirs, symlinks untouched, OnRootMismatch, re-run on kubelet restart; the container's groups (supplementalGroupsPolicy, KEP-3619)",
		nil},
	{AreaAtomicWriter, "secret/configMap/downwardAPI/projected (atomic_writer.go): layout, defaultMode and item modes, fsGroup read-only mask, preservePermissions (seed 002)",
		[]string{"secret", "configMap", "downwardAPI", "projected"}},
	{AreaFlexVolume, "flexVolume driver allowlist (seed 004) on pods and PersistentVolumes, policy validation, the fixture driver's set-up",
		[]string{"flexVolume"}},
	{AreaSkew, "feature-gate skew: apiserver gate x kubelet gate x pod created before/after a flip, upgrade -> downgrade -> upgrade (KEP-5502 version skew)",
		nil},
	{AreaUserNS, "user namespaces (`hostUsers: false`, KEP-127): the API's rules, idmapped volumes as the pod sees them and as they land on disk, ids outside the pod's range",
		nil},
	{AreaMounts, "how a container mounts a volume: mountPropagation, recursiveReadOnly (v1.37 ValidateVolumeMounts, KEP-3857); read-only mounts as the container sees them (makeMounts, EROFS in the kernel's order); image volumes (KEP-4639): the image's files as the runtime mounts them, read-only, never walked",
		[]string{"image"}},
	{AreaSELinux, "SELinux mount decisions (KEP-1710): seLinuxChangePolicy's validation; whether a node with SELinux on mounts a volume with `-o context` or leaves it to the runtime's relabel, per PersistentVolume access mode, plugin, policy and release; conflicting labels in a pod and between pods (decided in-process with volperm's label translator: this kernel has SELinux off)",
		[]string{"persistentVolumeClaim"}},
}

// Areas lists every area in report order.
var Areas = func() []Area {
	out := make([]Area, len(areas))
	for i, a := range areas {
		out[i] = a.Name
	}
	return out
}()

// RegisterArea adds an area after the others in report order, for an area a fork or a test
// binary adds without editing this file (cmd/volperm/tinyarea_test.go: the recipe of
// docs/architecture.md "Add an area", proven). Call it before any case is loaded or run; a name
// that is an area already, a row without a name or description, or a volume type another area
// claims panics.
func RegisterArea(a AreaInfo) {
	if a.Name == "" || a.Description == "" {
		panic(fmt.Sprintf("framework.RegisterArea(%+v): an area needs a name and a description", a))
	}
	if AreaDescription(a.Name) != "" {
		panic("framework.RegisterArea: " + string(a.Name) + " is an area already")
	}
	for _, t := range a.VolumeTypes {
		if other, ok := volumeArea(t); ok {
			panic(fmt.Sprintf("framework.RegisterArea: volume type %s is area %s's", t, other))
		}
	}
	areas = append(areas, a)
	Areas = append(Areas, a.Name)
}

// AreaInfos lists every area with what volperm knows of it, in report order.
func AreaInfos() []AreaInfo { return append([]AreaInfo(nil), areas...) }

// AreasOf names the areas of cases in report order, "[emptydir]" or "[fsgroup, skew]": what a
// batch of cases is, in a target's log of its batches.
func AreasOf(cases []*Case) string {
	seen := map[Area]bool{}
	for _, c := range cases {
		seen[c.Area] = true
	}
	var names []string
	for _, a := range Areas {
		if seen[a] {
			names = append(names, string(a))
			delete(seen, a)
		}
	}
	for _, a := range slices.Sorted(maps.Keys(seen)) {
		names = append(names, string(a)) // not an area: as the case names it
	}
	return "[" + strings.Join(names, ", ") + "]"
}

// AreaDescription is the description of a, "" for an unknown area.
func AreaDescription(a Area) string {
	for _, i := range areas {
		if i.Name == a {
			return i.Description
		}
	}
	return ""
}

// FixtureDriver is the flexVolume driver the harness serves (Case.Storage; docs/spec.md
// "flexVolume"): every target installs or models this one name
// (framework/fixturedriver).
const FixtureDriver = "volperm/fixture"

// volumeTypes are the volume sources volperm checks, by the API's field name: VolumeType and
// every switch over volume types read this table.
var volumeTypes = []struct {
	name string
	is   func(*corev1.VolumeSource) bool
}{
	{"emptyDir", func(s *corev1.VolumeSource) bool { return s.EmptyDir != nil }},
	{"hostPath", func(s *corev1.VolumeSource) bool { return s.HostPath != nil }},
	{"secret", func(s *corev1.VolumeSource) bool { return s.Secret != nil }},
	{"configMap", func(s *corev1.VolumeSource) bool { return s.ConfigMap != nil }},
	{"downwardAPI", func(s *corev1.VolumeSource) bool { return s.DownwardAPI != nil }},
	{"projected", func(s *corev1.VolumeSource) bool { return s.Projected != nil }},
	{"flexVolume", func(s *corev1.VolumeSource) bool { return s.FlexVolume != nil }},
	{"image", func(s *corev1.VolumeSource) bool { return s.Image != nil }},
	// Only on a node with SELinux on (Case.SELinux): its decision, never a mount here.
	{"persistentVolumeClaim", func(s *corev1.VolumeSource) bool { return s.PersistentVolumeClaim != nil }},
}

// VolumeTypeUnsupported is VolumeType of a source volperm does not check.
const VolumeTypeUnsupported = "unsupported"

// VolumeType names v's source as VolumeObservation.Type does (the API's field name), or
// VolumeTypeUnsupported.
func VolumeType(v corev1.Volume) string {
	for _, t := range volumeTypes {
		if t.is(&v.VolumeSource) {
			return t.name
		}
	}
	return VolumeTypeUnsupported
}

// VolumeTypes lists the volume types volperm checks.
func VolumeTypes() []string {
	out := make([]string, len(volumeTypes))
	for i, t := range volumeTypes {
		out[i] = t.name
	}
	return out
}

// volumeArea is the area a Pod manifest whose first checked volume is of type t belongs to.
func volumeArea(t string) (Area, bool) {
	for _, a := range areas {
		for _, vt := range a.VolumeTypes {
			if vt == t {
				return a.Name, true
			}
		}
	}
	return "", false
}

// joinTypes lists volume types as "a, b or c".
func joinTypes(ts []string) string {
	if len(ts) < 2 {
		return strings.Join(ts, "")
	}
	return strings.Join(ts[:len(ts)-1], ", ") + " or " + ts[len(ts)-1]
}
