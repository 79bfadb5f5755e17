// Package framework holds what every part of volperm shares: the Case (one situation, as data),
// the Observation (what an implementation did, one JSON schema), the Target interface with its
// registry, and the comparison of two Observations. It makes no syscalls of its own.
package framework

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Profile is the certification profile of a case (docs/commands.md "Profiles").
type Profile string

const (
	// ProfileConformance is GA behaviour every kubelet must have.
	ProfileConformance Profile = "conformance"
	// ProfileAlpha is behaviour behind an alpha gate (EmptyDirVolumeMode, KEP-5502).
	ProfileAlpha Profile = "alpha"
	// ProfileProposal is behaviour only proposed by a seed (preservePermissions, flexVolume allowlist).
	ProfileProposal Profile = "proposal"
)

// Profiles lists every profile in report order.
var Profiles = []Profile{ProfileConformance, ProfileAlpha, ProfileProposal}

// ProfileList names the profiles, comma-separated, for flag usages and errors.
func ProfileList() string {
	var out []string
	for _, p := range Profiles {
		out = append(out, string(p))
	}
	return strings.Join(out, ", ")
}

// ParseProfiles reads a comma-separated list of profiles (volperm run's --profile, the
// e2e-framework adapter's --volperm-profile); empty means every profile.
func ParseProfiles(spec string) ([]Profile, error) {
	if strings.TrimSpace(spec) == "" {
		return Profiles, nil
	}
	var out []Profile
	for _, p := range strings.Split(spec, ",") {
		p = strings.TrimSpace(p)
		if !slices.Contains(Profiles, Profile(p)) {
			return nil, fmt.Errorf("unknown profile %q: use one or more of %s, comma-separated", p, ProfileList())
		}
		out = append(out, Profile(p))
	}
	return out, nil
}

// Feature gate names a Case may set; what volperm knows of each is its row in gateTable
// (gate.go).
const (
	// GateEmptyDirVolumeMode is KEP-5502's gate (alpha in v1.37, default off), on both components.
	GateEmptyDirVolumeMode = "EmptyDirVolumeMode"
	// GatePreservePermissions is volperm's own gate for the preservePermissions proposal
	// (seed 002); it does not exist upstream. Default off, on both components.
	GatePreservePermissions = "PreservePermissions"
	// GateAtomicWriteVolumeUserFields is KEP-5936's gate (alpha in v1.37, default off), on both
	// components: defaultUser and item user on secret, configMap, downwardAPI and projected volumes.
	GateAtomicWriteVolumeUserFields = "AtomicWriteVolumeUserFields"
	// GateVolumeBindMountOptions is KEP-5855's gate (alpha in v1.37, default off), on both
	// components: volumeMounts[].bindMountOptions (noexec, nodev, nosuid).
	GateVolumeBindMountOptions = "VolumeBindMountOptions"
)

// Gates are the feature gates of the two components. A gate absent from a map has its default.
type Gates struct {
	// APIServer are the kube-apiserver's feature gates set for the case (unset: the release's default).
	APIServer map[string]bool `json:"apiserver,omitempty"`
	// Kubelet are the kubelet's feature gates set for the case (unset: the release's default).
	Kubelet map[string]bool `json:"kubelet,omitempty"`
}

// Case is one situation, as data: what is created, under which gates, on which host, and what
// happens afterwards. Canonical cases are YAML under manifests/; sweeps are generated in code.
type Case struct {
	// Name is unique within a catalogue and reads on its own in a JUnit file.
	Name string `json:"name"`
	// Area is the part of the spec the case belongs to (docs/spec.md; its Ginkgo label).
	Area Area `json:"area"`
	// Profile is what certifies the case: the GA behaviour, an alpha gate, or a proposal.
	Profile Profile `json:"profile"`
	// Description says what the case checks and why, with the rules it rests on.
	Description string `json:"description,omitempty"`
	// Labels are extra Ginkgo labels (area and profile are always added).
	Labels []string `json:"labels,omitempty"`

	// Gates are the gates in force when the pod is created.
	Gates Gates `json:"gates,omitempty"`
	// Releases are the Kubernetes releases of the apiserver and the kubelet ("" = the newest):
	// a cell of the release-skew matrix (docs/spec.md "Releases").
	Releases Releases `json:"releases,omitempty"`
	// FieldValidation is the create request's fieldValidation: "" (Warn, as client-go sends) or
	// "Strict" (as kubectl sends). It matters only to an apiserver that meets a field it does
	// not know (docs/spec.md "Releases").
	FieldValidation string `json:"fieldValidation,omitempty"`

	// Pod is the pod to admit and, if admitted, set up on the node. Volumes and securityContext
	// are what matter; containers may be omitted.
	Pod *corev1.Pod `json:"pod,omitempty"`
	// OldPod, when set, makes the admission an update of OldPod's spec (the pod-template update
	// of a workload), which decides field dropping (v1.37 pkg/api/pod dropDisabledFields).
	// Only admission is affected: the node sets up Pod.
	OldPod *corev1.Pod `json:"oldPod,omitempty"`
	// PersistentVolume, when set, is admitted instead of Pod (flexVolume allowlist on PVs).
	PersistentVolume *corev1.PersistentVolume `json:"persistentVolume,omitempty"`

	// PreservePermissions names the secret / configMap / downwardAPI / projected volumes of Pod
	// that carry the proposed field `preservePermissions: true` (seed 002). The field is not in
	// the v1 API, so it travels beside the pod.
	PreservePermissions []string `json:"preservePermissions,omitempty"`
	// OldPreservePermissions is the same for OldPod (decides dropping on update).
	OldPreservePermissions []string `json:"oldPreservePermissions,omitempty"`

	// SELinux, when set, is the node's SELinux side: SELinux on, the PersistentVolumes the
	// pod's claims are bound to, the CSIDrivers, the pods already running (docs/spec.md "SELinux
	// mount decisions"). Unset: a node with SELinux off, as every node here.
	SELinux *SELinux `json:"seLinux,omitempty"`

	// AdmissionOnly stops the case after the apiserver: nothing is set up on a node.
	AdmissionOnly bool `json:"admissionOnly,omitempty"`

	// FlexVolumePolicy, when set, is the driver allowlist in force at admission (seed 004).
	FlexVolumePolicy *FlexVolumePolicy `json:"flexVolumePolicy,omitempty"`

	// RuntimeLacks names what the node's container runtime does not support (its default
	// handler's features, as the kubelet reads them from the CRI): the "runtime cannot"
	// branches of the kubelet (docs/spec.md "Runtimes"). Empty: a runtime with every feature a
	// v1.37 kubelet asks of it.
	RuntimeLacks []RuntimeFeature `json:"runtimeLacks,omitempty"`

	// Host is what exists on the host before set-up (hostPath fixtures), by absolute path.
	Host []HostObject `json:"host,omitempty"`

	// Sources is the data of the objects AtomicWriter volumes project: "secret/NAME",
	// "configmap/NAME" -> key -> content. An object missing here is absent: a volume naming it
	// fails with the kubelet's NotFound unless optional ("secret/x": {} is an empty object).
	Sources map[string]map[string]string `json:"sources,omitempty"`

	// Storage is, per flexVolume volume name, the files its storage already holds when the
	// kubelet first sets it up (the blog seed's flexVolume). Volumes of driver FixtureDriver are
	// served by the harness.
	Storage map[string][]File `json:"storage,omitempty"`

	// After lists what happens once the pod is running, in order: containers changing modes,
	// gate flips, kubelet restarts (which run SetUp again).
	After []Step `json:"after,omitempty"`

	// Probes are behaviour checks run, in order, as the given users after the snapshot.
	Probes []Probe `json:"probes,omitempty"`
}

// RuntimeFeature is a feature a container runtime reports to the kubelet (CRI
// RuntimeHandlerFeatures), which decides what a pod may ask of it.
type RuntimeFeature string

// RuntimeUserNamespaces: the runtime runs a pod in a user namespace of its own with idmapped
// volume mounts (CRI RuntimeHandlerFeatures.user_namespaces; containerd >= 2.0).
const RuntimeUserNamespaces RuntimeFeature = "userNamespaces"

// RuntimeRecursiveReadOnlyMounts: the runtime makes a read-only bind read-only all the way
// down (mount_setattr AT_RECURSIVE; CRI RuntimeHandlerFeatures.recursive_read_only_mounts;
// containerd >= 2.0 with runc >= 1.1 and Linux >= 5.12).
const RuntimeRecursiveReadOnlyMounts RuntimeFeature = "recursiveReadOnlyMounts"

// RuntimeSupplementalGroupsPolicy: the runtime honours supplementalGroupsPolicy Strict and
// reports each container's uid, gid and groups (CRI RuntimeFeatures.supplemental_groups_policy,
// the node's status.features.supplementalGroupsPolicy; containerd >= 2.0).
const RuntimeSupplementalGroupsPolicy RuntimeFeature = "supplementalGroupsPolicy"

// RuntimeMountOptions: the runtime applies a mount's bind options (CRI
// RuntimeFeatures.mount_options, KEP-5855; containerd 2.4.2 has none), which the kubelet
// declares as the node feature VolumeBindMountOptions.
const RuntimeMountOptions RuntimeFeature = "mountOptions"

// RuntimeFeatures are the runtime features a case may say the runtime lacks.
var RuntimeFeatures = []RuntimeFeature{RuntimeUserNamespaces, RuntimeRecursiveReadOnlyMounts, RuntimeSupplementalGroupsPolicy, RuntimeMountOptions}

// Lacks says whether c's runtime lacks f.
func (c *Case) Lacks(f RuntimeFeature) bool { return slices.Contains(c.RuntimeLacks, f) }

// SandboxFails says whether c's pod reaches a node whose runtime cannot create its sandbox: a
// pod with hostUsers: false on a runtime without user namespaces (docs/spec.md [userns.runtime]).
func (c *Case) SandboxFails() bool {
	return c.Pod != nil && !c.AdmissionOnly && InUserNamespace(c.Pod) && c.Lacks(RuntimeUserNamespaces)
}

// LabelTimed marks a case whose duration the reports name (summary.md "Timings", the run log's
// and the CLI's last lines): a slow case whose time is the point, such as the ownership walk of
// a volume with thousands of files (kubernetes issue 69699). The time is reported, never asserted.
const LabelTimed = "timed"

// FlexVolumePolicy is the allowlist of seed 004 (PodSecurityPolicy's allowedFlexVolumes and
// volumes fields), enforced today by a ValidatingAdmissionPolicy.
type FlexVolumePolicy struct {
	// AllowedVolumeTypes is PSP's `volumes`: which volume types are allowed ("*" = all).
	// Empty means all types.
	AllowedVolumeTypes []string `json:"allowedVolumeTypes,omitempty"`
	// AllowedDrivers is PSP's `allowedFlexVolumes[].driver`. Empty = every driver allowed.
	AllowedDrivers []string `json:"allowedDrivers,omitempty"`
}

// ObjectKind is what exists at a host path.
type ObjectKind string

const (
	KindNothing   ObjectKind = "nothing"
	KindDirectory ObjectKind = "directory"
	KindFile      ObjectKind = "file"
	KindSocket    ObjectKind = "socket"
	KindCharDev   ObjectKind = "chardev"
	KindBlockDev  ObjectKind = "blockdev"
	KindSymlink   ObjectKind = "symlink"
)

// HostObject is one thing on the host at Path (absolute, as the pod names it).
type HostObject struct {
	// Path is absolute, as the pod's hostPath names it.
	Path string `json:"path"`
	// Kind is what is made there.
	Kind ObjectKind `json:"kind"`
	// Target is where a symlink points (absolute host path, as the pod would name it).
	Target string `json:"target,omitempty"`
	// Mode is the permission bits to create with (0 means the kind's usual: dir 0755, file 0644).
	Mode uint32 `json:"mode,omitempty"`
}

// File is a file or directory inside a volume, relative to the volume root.
type File struct {
	// Path is relative to the volume's root ("." for the root itself).
	Path string `json:"path"`
	// Dir makes it a directory.
	Dir bool `json:"dir,omitempty"`
	// Symlink makes it a symlink to this (relative) target.
	Symlink string `json:"symlink,omitempty"`
	// Mount makes it a directory on which the driver mounts a tmpfs of its own (a submount of
	// the volume: docs/spec.md [probes.read-only] and recursiveReadOnly); Mode, UID and GID are
	// the tmpfs root's, and the entries below it live in the tmpfs.
	Mount bool `json:"mount,omitempty"`
	// Mode is its permission bits, with setuid, setgid and sticky (0..07777).
	Mode uint32 `json:"mode"`
	// UID is its owner.
	UID int64 `json:"uid,omitempty"`
	// GID is its group.
	GID int64 `json:"gid,omitempty"`
}

// Step is one thing that happens after the pod is set up. Exactly one field is set.
type Step struct {
	// Chmod is a container changing a mode inside a volume.
	Chmod *Chmod `json:"chmod,omitempty"`
	// SetGates flips gates; maps merge into the gates in force.
	SetGates *Gates `json:"setGates,omitempty"`
	// RestartKubelet makes the kubelet set up every volume of the running pod again.
	RestartKubelet bool `json:"restartKubelet,omitempty"`
	// UpdateSources changes the data of secrets and configMaps ("secret/NAME",
	// "configmap/NAME" -> key -> content; each object's keys replace the ones it had): the
	// kubelet's sync then sets up again the volumes that need a remount (secret, configMap,
	// downwardAPI, projected) with the new data (docs/spec.md [steps.update-sources]).
	UpdateSources map[string]map[string]string `json:"updateSources,omitempty"`
	// KubeletRelease replaces the node's kubelet by one of this release ("v1.36"), which
	// restarts it: it sets every volume of the running pod up again, decoding the pod as its
	// release knows it, with the kubelet gates in force that its release has (the others are
	// removed from its configuration: a kubelet refuses a gate it does not know) (docs/spec.md
	// [steps.kubelet-release]). The case is created under c.Releases' kubelet.
	KubeletRelease string `json:"kubeletRelease,omitempty"`
}

// ChangesKubeletRelease reports whether a step of c replaces the kubelet by another release's:
// a node that cannot (one agent of one release) must say so in its Supports.
func ChangesKubeletRelease(c *Case) bool {
	for _, s := range c.After {
		if s.KubeletRelease != "" {
			return true
		}
	}
	return false
}

// ObservedReleases are the releases c is observed under: its apiserver's, and the kubelet's
// after its last kubeletRelease step (c.Releases' kubelet when none). framework.Matrix runs a
// case in the cell it is observed in.
func ObservedReleases(c *Case) Releases {
	r := Releases{APIServer: c.Releases.Of(true), Kubelet: c.Releases.Of(false)}
	for _, s := range c.After {
		if s.KubeletRelease != "" {
			r.Kubelet = s.KubeletRelease
		}
	}
	return r
}

// GatesOfRelease is gates without the ones volperm knows that release lacks (a kubelet of a
// release refuses a gate it does not know: [steps.kubelet-release]).
func GatesOfRelease(gates map[string]bool, release string) map[string]bool {
	out := map[string]bool{}
	for name, on := range gates {
		if _, known := KnownGates[name]; known && !ReleaseHas(release, name) {
			continue
		}
		out[name] = on
	}
	return out
}

// UpdatesSources reports whether a step of c updates sources: a node whose lifecycle.Pod is no
// lifecycle.SourceUpdater must say in SupportsNode that it cannot run c.
func UpdatesSources(c *Case) bool {
	for _, s := range c.After {
		if len(s.UpdateSources) > 0 {
			return true
		}
	}
	return false
}

// MergeSources returns sources with update applied: each object update names replaces that
// object's data (docs/spec.md [steps.update-sources]); sources itself is not changed.
func MergeSources(sources, update map[string]map[string]string) map[string]map[string]string {
	out := make(map[string]map[string]string, len(sources)+len(update))
	for k, v := range sources {
		out[k] = v
	}
	for k, v := range update {
		out[k] = v
	}
	return out
}

// Chmod changes Path (relative to Volume's root) to Mode.
type Chmod struct {
	// Volume names the pod's volume.
	Volume string `json:"volume"`
	// Path is relative to the volume's root ("." for the root).
	Path string `json:"path"`
	// Mode is what the container sets (0..07777).
	Mode uint32 `json:"mode"`
}

// User is a process identity inside the pod.
type User struct {
	// UID is the process's user id (inside the pod's user namespace when it has one).
	UID int64 `json:"uid"`
	// GID is the process's primary group id.
	GID int64 `json:"gid"`
	// Groups are its supplementary group ids.
	Groups []int64 `json:"groups,omitempty"`
	// Container: the process is the pod's first container itself, with the uid, gid and groups
	// its kubelet and runtime gave it (securityContext, supplementalGroupsPolicy, the image's
	// /etc/group: docs/spec.md [groups.policy]); uid, gid and groups stay unset.
	Container bool `json:"container,omitempty"`
}

// ProbeOp is a behaviour check.
type ProbeOp string

const (
	OpCreate ProbeOp = "create" // create file Path (O_CREAT|O_EXCL, 0644)
	OpWrite  ProbeOp = "write"  // open existing Path for writing
	OpRead   ProbeOp = "read"   // open Path for reading
	OpDelete ProbeOp = "delete" // unlink Path
	OpRename ProbeOp = "rename" // rename Path to To
	OpList   ProbeOp = "list"   // read the directory Path
	OpMkdir  ProbeOp = "mkdir"  // create directory Path (0755)
	OpFill   ProbeOp = "fill"   // create file Path (O_CREAT|O_EXCL, 0644), then write Size bytes to it
	OpExec   ProbeOp = "exec"   // execve Path: allowed when the kernel lets it run (a format it cannot run, ENOEXEC, counts as allowed)
	OpChmod  ProbeOp = "chmod"  // chmod(2) Path to Mode (following symlinks)
	OpChown  ProbeOp = "chown"  // chown(2) Path to Owner (following symlinks)
)

// ProbeOps are the probe ops, in the order docs/spec.md "Probes" lists them.
var ProbeOps = []ProbeOp{OpCreate, OpWrite, OpRead, OpDelete, OpRename, OpList, OpMkdir, OpFill, OpChmod, OpChown, OpExec}

// Owner is a uid and a gid, as the process that makes a probe names them (ids of its user
// namespace).
type Owner struct {
	// UID is the new owner.
	UID int64 `json:"uid"`
	// GID is the new group.
	GID int64 `json:"gid"`
}

// MaxFill bounds a fill probe's Size: enough to pass a small tmpfs limit, little enough for
// every node's memory and disk.
const MaxFill = 16 << 20

// Probe runs Op on Path inside Volume as As.
type Probe struct {
	// Name is unique within the case; the Observation's probes carry it.
	Name string `json:"name"`
	// Volume names the pod's volume the probe acts in (through its mount: docs/spec.md [probes.read-only]).
	Volume string `json:"volume"`
	// As is the process that makes the call.
	As User `json:"as"`
	// Op is the call (docs/spec.md "Probes").
	Op ProbeOp `json:"op"`
	// Path is relative to the volume's root and never leaves it ("." for the root).
	Path string `json:"path"`
	// To is where a rename probe moves Path (only op rename), relative to the volume's root.
	To string `json:"to,omitempty"`
	// Size is how many bytes a fill probe writes (only op fill; 1..MaxFill).
	Size int64 `json:"size,omitempty"`
	// Mode is what a chmod probe sets (only op chmod; 0..07777).
	Mode *uint32 `json:"mode,omitempty"`
	// Owner is what a chown probe sets (only op chown).
	Owner *Owner `json:"owner,omitempty"`
}
