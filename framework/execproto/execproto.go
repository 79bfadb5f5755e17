// Package execproto is the command-line protocol between volperm and an out-of-tree node agent
// (docs/exec-protocol.md): the JSON the harness writes to `AGENT setup` / `AGENT teardown` on
// stdin and the JSON it reads back on stdout, or the same as lines to one long-lived
// `AGENT serve`. Plain data, versioned.
package execproto

import (
	corev1 "k8s.io/api/core/v1"
)

// Version is the protocol version this harness speaks. An agent answering another version is
// refused with a verdict that names both.
const Version = "volperm.dev/exec/v1"

// VersionServe is the protocol version of the long-lived mode (`AGENT serve`): the same
// requests and answers, one JSON object per line, in one agent process for the whole run.
// Agents of Version, one process per call, keep working.
const VersionServe = "volperm.dev/exec/v2"

// Operations, the agent's first argument (setup, teardown, serve) or a Message's op (setup,
// teardown, hello).
const (
	OpSetUp    = "setup"
	OpTearDown = "teardown"
	OpServe    = "serve"
	OpHello    = "hello"
	// OpAdmit (protocol v2) asks the agent to be the apiserver: admit a pod or a
	// PersistentVolume (AdmitRequest -> AdmitResponse).
	OpAdmit = "admit"
)

// Message is one line the harness writes to `AGENT serve`: hello first (the agent answers with
// a Hello line), then setup and teardown calls, each answered by one line holding its
// SetUpResponse or TearDownResponse. Every protocolVersion is VersionServe. The agent exits
// when its stdin closes.
type Message struct {
	ProtocolVersion string   `json:"protocolVersion"`
	Op              string   `json:"op"`
	Request         *Request `json:"request,omitempty"`
	// Admit is the request of an admit message.
	Admit *AdmitRequest `json:"admit,omitempty"`
}

// AdmitRequest is what an apiserver is asked (docs/spec.md "Admission"): create Pod (or update
// OldPod to Pod), or create PersistentVolume, with the apiserver's gates and, when set, the
// flexVolume allowlist policy in force.
type AdmitRequest struct {
	ProtocolVersion  string                   `json:"protocolVersion"`
	Pod              *corev1.Pod              `json:"pod,omitempty"`
	OldPod           *corev1.Pod              `json:"oldPod,omitempty"`
	PersistentVolume *corev1.PersistentVolume `json:"persistentVolume,omitempty"`
	// PreservePermissions and OldPreservePermissions name the volumes carrying the proposed field
	// (seed 002) in Pod and OldPod.
	PreservePermissions    []string `json:"preservePermissions,omitempty"`
	OldPreservePermissions []string `json:"oldPreservePermissions,omitempty"`
	// APIServerGates is every feature gate the harness knows, with its value for this apiserver.
	APIServerGates map[string]bool `json:"apiserverGates"`
	// FlexVolumePolicy is the allowlist policy in force (seed 004), nil for none.
	FlexVolumePolicy *FlexVolumePolicy `json:"flexVolumePolicy,omitempty"`
	// FieldValidation is the request's field validation: "" (Warn, what client-go sends) or
	// FieldValidationStrict (kubectl's default). It matters to an apiserver of a release without
	// a field the pod carries (docs/spec.md "Releases").
	FieldValidation string `json:"fieldValidation,omitempty"`

	// RawPod is Pod as the harness sent it, before decoding: where an agent of an older release
	// finds the fields its API types lack (Main and Serve fill it for a LenientHandler; it is not
	// on the wire).
	RawPod []byte `json:"-"`
}

// FieldValidationStrict is AdmitRequest.FieldValidation of a client asking for strict field
// validation (k8s.io/apiserver handlers/rest.go fieldValidation).
const FieldValidationStrict = "Strict"

// FlexVolumePolicy is seed 004's policy: allowed volume types and flexVolume drivers.
type FlexVolumePolicy struct {
	AllowedVolumeTypes []string `json:"allowedVolumeTypes,omitempty"`
	AllowedDrivers     []string `json:"allowedDrivers,omitempty"`
}

// AdmitResponse is the apiserver's answer: allowed with the object as stored (defaults applied,
// disabled fields dropped, and the field paths it dropped), or refused with its error texts.
type AdmitResponse struct {
	ProtocolVersion     string      `json:"protocolVersion"`
	Allowed             bool        `json:"allowed"`
	Errors              []string    `json:"errors,omitempty"`
	Dropped             []string    `json:"dropped,omitempty"`
	PreservePermissions []string    `json:"preservePermissions,omitempty"`
	Pod                 *corev1.Pod `json:"pod,omitempty"`
	// Warnings are the apiserver's warnings on an allowed request: one per unknown field it
	// dropped (`unknown field "spec.volumes[0].emptyDir.mode"`), sorted.
	Warnings []string `json:"warnings,omitempty"`
}

// Hello is the agent's answer to the hello message: it serves (protocol v2), or, to `AGENT
// hello` (protocol v1), it lists its features.
type Hello struct {
	ProtocolVersion string `json:"protocolVersion"`
	Op              string `json:"op"`
	// Features are the optional parts of the protocol the agent implements (FeatureUserNamespaces).
	// An agent that lists none, or does not answer hello, implements none of them: the harness
	// does not run the cases that need one ("not run", with the reason).
	Features []string `json:"features,omitempty"`
}

// FeatureUserNamespaces is the feature of an agent that runs a pod with hostUsers: false in a
// user namespace of its own: its setup answer for such a pod gives the pod's range as its
// kubelet allocated it (SetUpResponse.UserNamespace); the harness plays the runtime with it
// (docs/exec-protocol.md "User namespaces").
const FeatureUserNamespaces = "userNamespaces"

// FeatureSupplementalGroupsPolicy is the feature of an agent whose kubelet admits pods as
// docs/spec.md [groups.admit] says (SetUpResponse.Rejected) and gives its container's user
// config (SetUpResponse.Container); the harness plays the runtime with it (docs/exec-protocol.md
// "Container groups").
const FeatureSupplementalGroupsPolicy = "supplementalGroupsPolicy"

// FeatureVolumeBindMountOptions is the feature of an agent whose kubelet admits a pod whose
// volumeMounts use bindMountOptions as docs/spec.md [mounts.bind-mount-options] says
// (SetUpResponse.Rejected when it does not declare the node feature VolumeBindMountOptions);
// the harness applies the options as the runtime.
const FeatureVolumeBindMountOptions = "volumeBindMountOptions"

// FeatureSELinuxMount is the feature of an agent whose kubelet decides, on a node with SELinux
// on (Request.SELinux), which volumes it mounts with an SELinux context (VolumeResult.SELinuxMount)
// and fails the volumes whose labels conflict, as docs/spec.md "SELinux mount decisions" says;
// it mounts no persistentVolumeClaim volume (their Request.Volumes have no directory).
const FeatureSELinuxMount = "seLinuxMount"

// FeatureImageVolumes is the feature of an agent that answers an image volume ok and makes
// nothing: the runtime mounts it (docs/spec.md [mounts.image-volume]), and the request gives it
// no directory (Request.Volumes). Image volumes came after protocol v1 (issue 32, d2add48), whose
// requests gave every volume but hostPath ones a directory: an agent without the feature gets
// no pod with one (docs/exec-protocol.md "Image volumes").
const FeatureImageVolumes = "imageVolumes"

// Featured is a Handler with optional features, which Main and Serve list in the agent's hello.
type Featured interface {
	Features() []string
}

// features lists h's features (Featured), none for a handler without.
func features(h Handler) []string {
	if f, ok := h.(Featured); ok {
		return f.Features()
	}
	return nil
}

// Request is the same for setup and teardown.
type Request struct {
	ProtocolVersion string `json:"protocolVersion"`
	// Attempt is 1 for the first setup of the pod, 2 and more for a kubelet restart (setup of
	// the same pod again; the agent must be idempotent like a kubelet).
	Attempt int `json:"attempt"`
	// Pod is the pod as the apiserver admitted it: defaults applied, disabled fields dropped.
	Pod *corev1.Pod `json:"pod"`
	// PreservePermissions names the volumes carrying the proposed field (seed 002) after admission.
	PreservePermissions []string `json:"preservePermissions,omitempty"`
	// KubeletGates is every feature gate the harness knows, with its value for this kubelet.
	KubeletGates map[string]bool `json:"kubeletGates"`
	// Volumes gives, for every volume of the pod but hostPath and image ones, the directory the
	// agent must set up (it does not exist on the first setup; its parent does). An image
	// volume (FeatureImageVolumes) is the runtime's: the agent answers it ok and makes nothing;
	// a persistentVolumeClaim volume (FeatureSELinuxMount) has no directory either.
	Volumes []Volume `json:"volumes"`
	// HostRoot is where the host's filesystem is for hostPath volumes: the pod's path /a/b is
	// HostRoot/a/b. Error texts must name the pod's path (/a/b), not the HostRoot one.
	HostRoot string `json:"hostRoot"`
	// StateDir is the agent's own scratch directory for this pod (ready markers and the like),
	// kept from the first setup to the teardown. The agent's working directory is StateDir.
	StateDir string `json:"stateDir"`
	// Sources is the data of the secrets and configMaps the pod projects:
	// "secret/NAME" or "configmap/NAME" -> key -> content.
	Sources map[string]map[string]string `json:"sources,omitempty"`
	// RuntimeLacks names what the node's container runtime does not support (CRI runtime
	// handler features, "userNamespaces"): the agent's kubelet decides as it would on such a
	// node (docs/spec.md "Runtimes"). Each name reaches only an agent whose hello lists the
	// feature that carries it (RuntimeLackFeature); an agent of none gets no runtimeLacks.
	RuntimeLacks []string `json:"runtimeLacks,omitempty"`
	// SELinux, for an agent with FeatureSELinuxMount, puts SELinux on on the node and says what
	// its kubelet knows for the decision (docs/exec-protocol.md "SELinux mount decisions"): the
	// PersistentVolume of each persistentVolumeClaim, the CSIDrivers, the pods running already.
	// Absent: a node with SELinux off.
	SELinux *SELinux `json:"seLinux,omitempty"`
}

// SELinux is a node with SELinux on, with volperm's label translator (docs/spec.md
// [selinux.label]).
type SELinux struct {
	// Claims is the PersistentVolume each claim (by claimName) of the pod and of Running is
	// bound to.
	Claims map[string]*corev1.PersistentVolume `json:"claims,omitempty"`
	// CSIDrivers are the CSIDriver objects' spec.seLinuxMount by driver name; a driver not
	// listed has no CSIDriver object.
	CSIDrivers map[string]bool `json:"csiDrivers,omitempty"`
	// Running are the pods the kubelet runs already, in the order it took them.
	Running []*corev1.Pod `json:"running,omitempty"`
}

// RuntimeUserNamespaces is Request.RuntimeLacks' name for user namespace support.
const RuntimeUserNamespaces = "userNamespaces"

// RuntimeMountOptions is Request.RuntimeLacks' name for a runtime that applies no bind mount
// options (CRI RuntimeFeatures.mount_options).
const RuntimeMountOptions = "mountOptions"

// RuntimeSupplementalGroupsPolicy is Request.RuntimeLacks' name for supplementalGroupsPolicy
// support (the node's status.features.supplementalGroupsPolicy).
const RuntimeSupplementalGroupsPolicy = "supplementalGroupsPolicy"

// RuntimeLackFeature is the feature that carries each name of Request.RuntimeLacks: the name
// came with it (issues 31, 32) and only its agents' kubelets decide by it. The harness tells
// an agent only the names of the features its hello lists (issue 51: the protocol never moves
// silently); a name of no feature (recursiveReadOnlyMounts: the harness plays the kubelet's
// makeMounts and the runtime for it) reaches no agent.
var RuntimeLackFeature = map[string]string{
	RuntimeUserNamespaces:           FeatureUserNamespaces,
	RuntimeSupplementalGroupsPolicy: FeatureSupplementalGroupsPolicy,
	RuntimeMountOptions:             FeatureVolumeBindMountOptions,
}

// Rejection is the kubelet refusing to admit a pod: its status reason and message
// ("Pod was rejected: ..."), as v1.37 kubelet.go rejectPod writes them.
type Rejection struct {
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// ContainerSecurity is the user part of the CRI config the kubelet gives a container (v1.37
// kuberuntime determineEffectiveSecurityContext): runAsUser and runAsGroup (absent: unset),
// supplementalGroups in the kubelet's order, and whether the policy is Strict.
type ContainerSecurity struct {
	RunAsUser          *int64  `json:"runAsUser,omitempty"`
	RunAsGroup         *int64  `json:"runAsGroup,omitempty"`
	SupplementalGroups []int64 `json:"supplementalGroups,omitempty"`
	Strict             bool    `json:"strict,omitempty"`
}

// Volume is one directory to set up.
type Volume struct {
	Name string `json:"name"`
	Dir  string `json:"dir"`
}

// SetUpResponse is the agent's answer to setup: one result per volume of the pod, hostPath
// ones included, in any order.
type SetUpResponse struct {
	ProtocolVersion string         `json:"protocolVersion"`
	Volumes         []VolumeResult `json:"volumes"`
	// UserNamespace is, for a pod with hostUsers: false, the pod's user namespace as the
	// kubelet allocated it (FeatureUserNamespaces): ids 0..Length-1 in the pod are HostID.. on
	// the node, the same for uids and gids, the same range on every setup of the pod (a restarted
	// kubelet reads it back). Absent for any other pod.
	UserNamespace *UserNamespace `json:"userNamespace,omitempty"`
	// Rejected is the kubelet's refusal to admit the pod (FeatureSupplementalGroupsPolicy): the
	// agent sets nothing up and answers no volumes.
	Rejected *Rejection `json:"rejected,omitempty"`
	// Container is the user part of the CRI config of the pod's first container
	// (FeatureSupplementalGroupsPolicy), for every pod the agent admits.
	Container *ContainerSecurity `json:"container,omitempty"`
	// SandboxError is the kubelet's error when it cannot create the pod's sandbox after setting
	// its volumes up (the text after "Failed to create pod sandbox: "; docs/spec.md
	// [userns.runtime]); then no userNamespace.
	SandboxError string `json:"sandboxError,omitempty"`
}

// UserNamespace is a pod's range of ids (CRI IDMapping with containerID 0, uids and gids alike).
type UserNamespace struct {
	HostID uint32 `json:"hostID"`
	Length uint32 `json:"length"`
}

// VolumeResult is ok, or the error text a kubelet would report for the volume.
type VolumeResult struct {
	Name  string `json:"name"`
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
	// SELinuxMount is the label the kubelet mounts the volume with (the mount option
	// context="LABEL"), on a node with SELinux on (Request.SELinux); absent for none.
	SELinuxMount string `json:"seLinuxMount,omitempty"`
}

// TearDownResponse is the agent's answer to teardown.
type TearDownResponse struct {
	ProtocolVersion string `json:"protocolVersion"`
	OK              bool   `json:"ok"`
	Error           string `json:"error,omitempty"`
}
