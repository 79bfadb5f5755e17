package rule

// The rules, by docs/spec.md section. Each ID appears in brackets at its line of docs/spec.md
// (TestSpecNamesEveryRule) and in at least one hit of the oracle (TestCatalogueCoversEveryRule).
const (
	DefaultMode       ID = "defaulting.default-mode"
	DefaultHostPath   ID = "defaulting.hostpath-type"
	DefaultNoSource   ID = "defaulting.no-source"
	DropEmptyDirMode  ID = "dropping.emptydir-mode"
	DropPreserve      ID = "dropping.preserve-permissions"
	DropUser          ID = "dropping.atomic-user"
	DropBeforeValid   ID = "dropping.before-validation"
	ValidEmptyDirMode ID = "validation.emptydir-mode"
	ValidFileMode     ID = "validation.file-mode"
	ValidHostPath     ID = "validation.hostpath"
	ValidFlexDriver   ID = "validation.flexvolume-driver"
	ValidVolumes      ID = "validation.volumes"
	ValidTokenSA      ID = "validation.token-service-account"
	ValidUser         ID = "validation.user"
	ValidHostUsers    ID = "validation.host-users"
	ValidPropagation  ID = "validation.mount-propagation"
	ValidRRO          ID = "validation.recursive-read-only"
	ValidProcMount    ID = "validation.proc-mount-unmasked"
	ValidWindowsUsers ID = "validation.host-users-windows"
	AllowPolicy       ID = "allowlist.policy"
	AllowType         ID = "allowlist.type"
	AllowDriver       ID = "allowlist.driver"

	EmptyDirMode          ID = "emptydir.mode"
	EmptyDirGateOff       ID = "emptydir.mode-gate-off"
	EmptyDirDefault       ID = "emptydir.default"
	EmptyDirHuge          ID = "emptydir.hugepages-size"
	EmptyDirFSGroup       ID = "emptydir.fsgroup"
	EmptyDirReady         ID = "emptydir.ready"
	EmptyDirSize          ID = "emptydir.size"
	HostPathCheck         ID = "hostpath.type-check"
	HostPathCreate        ID = "hostpath.create"
	HostPathSymlink       ID = "hostpath.symlinks"
	HostPathNoOwner       ID = "hostpath.no-ownership"
	HostPathRecheck       ID = "hostpath.recheck"
	WalkMask              ID = "walk.mask"
	WalkTree              ID = "walk.tree"
	WalkPolicy            ID = "walk.policy"
	AtomicRoot            ID = "atomicwriter.root"
	AtomicLayout          ID = "atomicwriter.layout"
	AtomicFSGroup         ID = "atomicwriter.fsgroup"
	AtomicUnchanged       ID = "atomicwriter.unchanged"
	AtomicSources         ID = "atomicwriter.sources"
	AtomicToken           ID = "atomicwriter.token"
	AtomicOwner           ID = "atomicwriter.owner"
	AtomicTokenUser       ID = "atomicwriter.token-owner"
	AtomicNested          ID = "atomicwriter.nested"
	FlexDir               ID = "flexvolume.dir"
	FlexPopulate          ID = "flexvolume.populate"
	FlexWalk              ID = "flexvolume.walk"
	StepChmod             ID = "steps.chmod"
	StepSetGates          ID = "steps.set-gates"
	StepRestart           ID = "steps.restart"
	StepUpdateSources     ID = "steps.update-sources"
	StepKubeletRelease    ID = "steps.kubelet-release"
	HostFixtures          ID = "fixtures.host"
	SnapshotAbsent        ID = "snapshot.hostpath-absent"
	ProbeDAC              ID = "probes.dac"
	ProbeSticky           ID = "probes.sticky"
	ProbeNewEntry         ID = "probes.new-entry"
	ProbeProtectedLinks   ID = "probes.protected-symlinks"
	ProbeAttributes       ID = "probes.attributes"
	ProbeReadOnly         ID = "probes.read-only"
	MountRRO              ID = "mounts.recursive-read-only"
	UsernsIDMap           ID = "userns.idmap"
	UsernsRoot            ID = "userns.root"
	UsernsRange           ID = "userns.range"
	UsernsRuntime         ID = "userns.runtime"
	MountImage            ID = "mounts.image-volume"
	MountBindOptions      ID = "mounts.bind-mount-options"
	ValidBindMountOptions ID = "validation.bind-mount-options"
	DropBindMountOptions  ID = "dropping.bind-mount-options"
	ValidImage            ID = "validation.image-volume"
	GroupsAdmit           ID = "groups.admit"
	GroupsPolicy          ID = "groups.policy"
	ValidGroupsPolicy     ID = "validation.supplemental-groups-policy"
	ValidSELinuxPolicy    ID = "validation.selinux-change-policy"
	SELinuxLabel          ID = "selinux.label"
	SELinuxMount          ID = "selinux.mount"
	SELinuxMultiple       ID = "selinux.multiple-labels"
	SELinuxConflict       ID = "selinux.conflict"

	ReleaseAPIServerField ID = "releases.apiserver-unknown-field"
	ReleaseKubeletField   ID = "releases.kubelet-unknown-field"
)

var atomicTypes = []string{"secret", "configMap", "downwardAPI", "projected"}

// volumeTypes are the volume types the kubelet sets up (an image volume is the runtime's:
// [mounts.image-volume]; the user-namespace and restart rules do not ask for one).
var volumeTypes = []string{"emptyDir", "hostPath", "secret", "configMap", "downwardAPI", "projected", "flexVolume"}

// walkedTypes are the volume types the ownership walk can reach (hostPath never).
var walkedTypes = []string{"emptyDir", "secret", "configMap", "downwardAPI", "projected", "flexVolume"}

// All is every rule, in docs/spec.md order.
var All = []Rule{
	{DefaultMode, "Admission: defaulting", "secret, configMap, downwardAPI, projected: defaultMode nil -> 0644",
		[]Need{{Dim: Type, Only: atomicTypes}}},
	{DefaultHostPath, "Admission: defaulting", "hostPath: type nil -> \"\" (HostPathUnset): nothing is checked", nil},
	{DefaultNoSource, "Admission: defaulting", "a volume with no source becomes an emptyDir", nil},

	{DropEmptyDirMode, "Admission: field dropping", "apiserver EmptyDirVolumeMode off clears every emptyDir mode unless the old pod had one",
		[]Need{{Dim: Gate}, {Dim: GateSource}, {Dim: Old}}},
	{DropPreserve, "Admission: field dropping", "apiserver PreservePermissions off clears preservePermissions unless the old pod had it",
		[]Need{{Dim: Gate}, {Dim: GateSource}, {Dim: Old}, {Dim: Type, Only: atomicTypes}}},
	{DropUser, "Admission: field dropping", "apiserver AtomicWriteVolumeUserFields off clears defaultUser and every item's user unless the old pod used one (KEP-5936)",
		[]Need{{Dim: Gate}, {Dim: GateSource}, {Dim: Old}, {Dim: Type, Only: atomicTypes}}},
	// Every case sets the gate (a v1.37 cell only): its default is the other rules' to show.
	{DropBindMountOptions, "Admission: field dropping", "apiserver VolumeBindMountOptions off clears every volumeMount's bindMountOptions unless the old pod used them (KEP-5855)",
		[]Need{{Dim: Gate}, {Dim: Old}}},
	{DropBeforeValid, "Admission: field dropping", "dropping happens before validation: a dropped out-of-range mode is allowed",
		[]Need{{Dim: Boundary, Only: []string{"below", "above"}}}},

	{ValidEmptyDirMode, "Admission: validation", "emptyDir mode within 0..01777, the text printing the value in decimal",
		[]Need{{Dim: Boundary}, {Dim: Gate}}},
	{ValidFileMode, "Admission: validation", "defaultMode and item mode within 0..0777",
		[]Need{{Dim: Boundary}, {Dim: Type, Only: atomicTypes}, {Dim: ModeFrom}}},
	{ValidHostPath, "Admission: validation", "hostPath path required, no '..' element, type one of the eight",
		[]Need{{Dim: Outcome}, {Dim: HostType}}},
	{ValidFlexDriver, "Admission: validation", "flexVolume driver required",
		[]Need{{Dim: Outcome}}},
	{ValidVolumes, "Admission: validation", "volume names DNS-1123 labels, unique; exactly one source per volume",
		[]Need{{Dim: Outcome}}},

	{ValidTokenSA, "Admission: validation", "a projected serviceAccountToken needs spec.serviceAccountName (pods, not templates)",
		[]Need{{Dim: Outcome}}},

	{ValidUser, "Admission: validation", "defaultUser and item user within 0..2147483647; a downwardAPI item's at its source's path (KEP-5936)",
		[]Need{{Dim: Boundary}, {Dim: Type, Only: atomicTypes}, {Dim: UserFrom, Only: []string{"defaultUser", "item", "token"}}}},
	{ValidPropagation, "Admission: volume mounts", "mountPropagation is None, HostToContainer or Bidirectional, Bidirectional only in a privileged container; the error's path has no mount index",
		[]Need{{Dim: Propagation}, {Dim: Outcome}}},
	{ValidRRO, "Admission: volume mounts", "recursiveReadOnly Enabled and IfPossible need readOnly and a mountPropagation of None or none; Disabled always passes; any other value is NotSupported",
		[]Need{{Dim: RRO, Only: []string{"Disabled", "Enabled", "IfPossible", "unknown"}}, {Dim: Outcome}}},
	{ValidHostUsers, "Admission: user namespaces (KEP-127)", "hostUsers false forbids hostNetwork (unless the old pod had both), hostPID, hostIPC and every container's volumeDevices (unless the old pod had both); hostUsers true or unset checks nothing; every volume type is allowed",
		[]Need{{Dim: HostUsers}, {Dim: HostField}, {Dim: Outcome}, {Dim: Old}, {Dim: Type, Only: volumeTypes}}},
	{ValidProcMount, "Admission: user namespaces (KEP-127)", "a container's procMount Unmasked needs hostUsers false",
		[]Need{{Dim: HostUsers}, {Dim: Outcome}, {Dim: Container}}},
	{ValidWindowsUsers, "Admission: user namespaces (KEP-127)", "a windows pod (spec.os.name windows) may not set hostUsers, true or false",
		[]Need{{Dim: HostUsers}, {Dim: Outcome}}},
	{AllowPolicy, "Admission: flexVolume allowlist", "an invalid policy (empty driver name, drivers without flexVolume allowed) rejects every request",
		[]Need{{Dim: Outcome}}},
	{AllowType, "Admission: flexVolume allowlist", "a volume type not in allowedVolumeTypes (nor '*') is forbidden",
		[]Need{{Dim: Outcome}, {Dim: Object}}},
	{AllowDriver, "Admission: flexVolume allowlist", "a flexVolume driver not in a non-empty allowedDrivers is forbidden (exact match); empty allows all",
		[]Need{{Dim: Outcome}, {Dim: Object}}},

	{EmptyDirMode, "Node: emptyDir", "kubelet gate on and mode set: exactly mode at the root, on every medium",
		[]Need{{Dim: Medium}, {Dim: Boundary, Only: []string{"lowest", "inside", "highest"}}, {Dim: FSGroup}}},
	{EmptyDirGateOff, "Node: emptyDir", "kubelet gate off: mode is ignored",
		[]Need{{Dim: Medium}, {Dim: GateSource}}},
	{EmptyDirDefault, "Node: emptyDir", "mode nil: default medium 0777, Memory 1777 (tmpfs), HugePages 0755 (hugetlbfs)",
		[]Need{{Dim: Medium}}},
	{EmptyDirHuge, "Node: emptyDir", "HugePages: pagesize from the pod's hugepages-<size> request; upstream's texts when missing",
		[]Need{{Dim: Outcome}}},
	{EmptyDirFSGroup, "Node: emptyDir", "fsGroup: the walk after the mode, policy ignored",
		[]Need{{Dim: Medium}, {Dim: Policy}}},
	{EmptyDirReady, "Node: emptyDir", "a second SetUp of a ready emptyDir does nothing: no chmod, no walk",
		[]Need{{Dim: Medium}, {Dim: FSGroup}}},

	{EmptyDirSize, "Node: emptyDir", "Memory: a positive sizeLimit is the tmpfs' size (whole pages), a write past it fails ENOSPC; sizeLimit 0 or unset, and the default medium, refuse nothing at write time",
		[]Need{{Dim: Medium, Only: []string{"default", "Memory"}}, {Dim: Outcome}}},

	{HostPathCheck, "Node: hostPath", "each type's check and its upstream failure text, naming the pod's path",
		[]Need{{Dim: HostCheck}}},
	{HostPathCreate, "Node: hostPath", "DirectoryOrCreate: MkdirAll 0755; FileOrCreate: 0644, the parent must exist",
		[]Need{{Dim: HostType, Only: []string{"DirectoryOrCreate", "FileOrCreate"}}, {Dim: Outcome}}},
	{HostPathSymlink, "Node: hostPath", "the type check follows symlinks",
		[]Need{{Dim: Path}}},
	{HostPathNoOwner, "Node: hostPath", "never an ownership change, fsGroup or not",
		[]Need{{Dim: FSGroup}, {Dim: SetUp}}},
	{HostPathRecheck, "Node: hostPath", "a second SetUp checks the type again",
		[]Need{{Dim: Outcome}}},

	{WalkMask, "Node: ownership walk", "files |= 0660 (read-only 0440), dirs also |= 0110 and setgid; bits only added",
		[]Need{{Dim: Access}, {Dim: Type, Only: walkedTypes}, {Dim: SetUp}}},
	{WalkTree, "Node: ownership walk", "every entry, root last, lchown(-1, fsGroup), symlinks never followed nor chmod'ed, special bits kept",
		[]Need{{Dim: Entry}}},
	{WalkPolicy, "Node: ownership walk", "OnRootMismatch skips the walk when the root has gid fsGroup, setgid and mask|0110",
		[]Need{{Dim: Root}, {Dim: SetUp}}},

	{AtomicRoot, "Node: AtomicWriter volumes", "root: a wrapped emptyDir, Memory (1777) but configMap on the default medium (0777)",
		[]Need{{Dim: Type, Only: atomicTypes}}},
	{AtomicLayout, "Node: AtomicWriter volumes", "..<timestamp> 0755 with the files (item mode or defaultMode, exactly), ..data and one link per name",
		[]Need{{Dim: Type, Only: atomicTypes}, {Dim: ModeFrom}}},
	{AtomicFSGroup, "Node: AtomicWriter volumes", "fsGroup: the read-only walk, unless preservePermissions and the kubelet gate are on",
		[]Need{{Dim: Type, Only: atomicTypes}, {Dim: Preserve}, {Dim: GateSource}}},
	{AtomicUnchanged, "Node: AtomicWriter volumes", "a second SetUp with an unchanged payload writes nothing and walks nothing",
		[]Need{{Dim: Type, Only: atomicTypes}, {Dim: FSGroup}}},
	{AtomicSources, "Node: AtomicWriter volumes", "items select keys; a missing key without optional fails with upstream's text",
		[]Need{{Dim: Outcome}, {Dim: Type, Only: []string{"secret", "configMap", "projected"}}}},
	{AtomicToken, "Node: AtomicWriter volumes", "a token, clusterTrustBundle or podCertificate file is owned by the pod's FsUser (every container's runAsUser) and has defaultMode, or 0600 when it has an owner or fsGroup is set",
		[]Need{{Dim: Projection}, {Dim: FsUser}, {Dim: FSGroup}}},
	{AtomicOwner, "Node: AtomicWriter volumes", "kubelet gate on: a file's owner is its item's user, else defaultUser, else root; lchown before the walk; top-level links too (KEP-5936)",
		[]Need{{Dim: Type, Only: atomicTypes}, {Dim: UserFrom, Only: []string{"defaultUser", "item", "none"}}, {Dim: Gate}, {Dim: FSGroup}, {Dim: Preserve}, {Dim: SetUp}}},
	{AtomicTokenUser, "Node: AtomicWriter volumes", "kubelet gate on: a token's owner is its user, else defaultUser, else the pod's FsUser; 0600 when it has an owner or fsGroup is set (KEP-5936)",
		[]Need{{Dim: UserFrom, Only: []string{"defaultUser", "token", "runAsUser", "none"}}, {Dim: Gate}, {Dim: FSGroup}}},

	{AtomicNested, "Node: AtomicWriter volumes", "a volume mounted below this one's mount path gets its mount point made in this volume (0755, root's), then walked",
		[]Need{{Dim: Type, Only: atomicTypes}, {Dim: FSGroup}}},

	{FlexDir, "Node: flexVolume", "the volume dir is created 0750", nil},
	{FlexPopulate, "Node: flexVolume", "the first SetUp populates from the storage, exact modes and owners; later SetUps do not",
		[]Need{{Dim: SetUp}}},
	{FlexWalk, "Node: flexVolume", "every SetUp walks (rw mask) when fsGroup is set and the volume is not readOnly, honouring the policy",
		[]Need{{Dim: Access}, {Dim: FSGroup}, {Dim: SetUp}, {Dim: Policy}}},

	{StepChmod, "The order of events", "chmod: a container sets a mode exactly, following symlinks",
		[]Need{{Dim: Type, Only: []string{"emptyDir", "flexVolume", "hostPath"}}}},
	{StepSetGates, "The order of events", "setGates: merged into the kubelet's gates in force",
		[]Need{{Dim: Gate}}},
	{StepRestart, "The order of events", "restartKubelet: SetUp of every volume again, with the gates now in force",
		[]Need{{Dim: Medium}, {Dim: Type, Only: volumeTypes}}},
	{StepUpdateSources, "The order of events", "updateSources: the objects' data change; the kubelet's sync sets up the AtomicWriter volumes again, writing only a changed payload",
		[]Need{{Dim: Type, Only: atomicTypes}}},
	{StepKubeletRelease, "The order of events", "kubeletRelease: the kubelet of another release, with the gates in force it has, sets every volume up again, decoding the pod as its release knows it",
		[]Need{{Dim: Medium, Only: []string{"default", "Memory"}}}},
	{HostFixtures, "The order of events", "host fixtures: parents 0755 root-owned, then objects, then symlinks; default modes per type", nil},

	{ValidBindMountOptions, "Admission: validation", "bindMountOptions: each of noexec, nodev, nosuid (NotSupported), each once (Duplicate), none on an image volume (Invalid)",
		[]Need{{Dim: Outcome}}},
	{ValidImage, "Admission: validation", "an image volume needs a reference; its pullPolicy is Always, IfNotPresent or Never (NotSupported otherwise)",
		[]Need{{Dim: Outcome}}},
	{ValidGroupsPolicy, "Admission: validation", "supplementalGroupsPolicy is Merge or Strict (NotSupported otherwise); a windows pod may not set it (Forbidden)",
		[]Need{{Dim: GroupsPolicyDim, Only: []string{"Merge", "Strict", "unknown"}}, {Dim: Outcome}}},
	{SnapshotAbsent, "Snapshot", "a hostPath with nothing there after a set-up that succeeded is 'absent'",
		[]Need{{Dim: HostType, Only: []string{"unset", "DirectoryOrCreate"}}}},

	{ProbeDAC, "Probes", "Linux DAC: root bypasses, else owner, group (gid or supplementary), other; search on every directory",
		[]Need{{Dim: Op, Only: []string{"create", "write", "read", "delete", "rename", "list", "mkdir", "fill"}}, {Dim: Class}, {Dim: Outcome}}},
	{ProbeSticky, "Probes", "a sticky parent: only the file's or the dir's owner may delete or rename (EPERM)",
		[]Need{{Dim: Op, Only: []string{"delete", "rename"}}, {Dim: Outcome}}},
	{ProbeAttributes, "Probes", "chmod: the owner or root; chown: root, or the owner keeping its uid to a group it is in; an id a pod's user namespace cannot name is EINVAL, an unmapped entry's mode EOVERFLOW",
		[]Need{{Dim: Op, Only: []string{"chmod", "chown"}}, {Dim: Class}, {Dim: Outcome}}},
	{ProbeReadOnly, "Probes", "a read-only mount (the volumeMount's readOnly, or a secret/configMap/downwardAPI/projected volume, a flexVolume with readOnly): every change is EROFS, after the lookup, an existing name (EEXIST) and, opening a file for writing, DAC",
		[]Need{{Dim: Op, Only: []string{"create", "write", "delete", "rename", "mkdir", "fill", "chmod", "chown"}}, {Dim: ReadOnlyFrom}}},
	{MountRRO, "Probes", "recursiveReadOnly on a readOnly mount: IfPossible is recursive when the runtime can, Enabled must be (else the container is refused: CreateContainerConfigError); recursive makes the mounts below EROFS too; the container status says Enabled or Disabled",
		[]Need{{Dim: RRO, Only: []string{"Disabled", "Enabled", "IfPossible", "unset"}}, {Dim: RuntimeRRO}, {Dim: Status}}},
	{MountBindOptions, "Probes", "bindMountOptions: the kubelet declares VolumeBindMountOptions with its gate on and a runtime that applies mount options, and rejects a pod using them otherwise (PodFeatureUnsupported); admitted, the runtime applies them: noexec refuses exec (EACCES)",
		[]Need{{Dim: Gate}, {Dim: RuntimeMount}}},
	{MountImage, "Probes", "an image volume: the kubelet makes and walks nothing (fsGroup has no effect), the runtime mounts the image's files with their owners and modes, read-only whatever the volumeMount says",
		[]Need{{Dim: FSGroup}, {Dim: Access}}},
	{GroupsAdmit, "Container groups (KEP-3619)", "the kubelet rejects a pod with supplementalGroupsPolicy Strict on a node whose runtime lacks it (SupplementalGroupsPolicyNotSupported: no volume is set up); Merge and unset run anywhere",
		[]Need{{Dim: GroupsPolicyDim, Only: []string{"unset", "Merge", "Strict"}}, {Dim: RuntimeGroups}}},
	{GroupsPolicy, "Container groups (KEP-3619)", "a container's groups: its gid, fsGroup, supplementalGroups and, unless Strict, those the image's /etc/group gives its uid; its gid runAsGroup, else the image's for its uid, else 0; the container status reports them where the runtime supports the policy",
		[]Need{{Dim: GroupsPolicyDim, Only: []string{"unset", "Merge", "Strict"}}, {Dim: RuntimeGroups}, {Dim: GroupFrom}}},
	{ProbeNewEntry, "Probes", "new entries: owner the prober, group the parent's when it is setgid (dirs inherit setgid)",
		[]Need{{Dim: Op, Only: []string{"create", "mkdir"}}, {Dim: Entry, Only: []string{"dir", "setgid"}}}},

	{ProbeProtectedLinks, "Probes", "fs.protected_symlinks=1: a symlink in a sticky world-writable dir is followed only by its owner or when the dir's owner owns it; root too (the case needs the host setting)",
		[]Need{{Dim: Class, Only: []string{"root", "other"}}}},

	{UsernsIDMap, "User namespaces", "hostUsers: false: every volume is mounted idmapped with the pod's range: the pod sees an owner of 0..65535 on disk as itself, any other as 65534; files it makes land on disk with its own ids",
		[]Need{{Dim: Mapped}, {Dim: Type, Only: []string{"emptyDir", "hostPath", "secret", "configMap", "downwardAPI", "projected"}}}},
	{UsernsRange, "User namespaces", "a pod gets one range of 65536 ids from a nonzero multiple of 65536, kept across kubelet restarts",
		[]Need{{Dim: SetUp}}},
	{UsernsRuntime, "User namespaces", "a runtime without user namespaces: the kubelet sets the volumes up, then fails the pod's sandbox with `can't set `spec.hostUsers: false`, runtime does not support user namespaces`",
		[]Need{{Dim: Type, Only: volumeTypes}}},
	{UsernsRoot, "User namespaces", "uid 0 of a pod in a user namespace overrides permission bits only on an entry whose owner and group are mapped; nobody in the pod writes to an unmapped entry",
		[]Need{{Dim: Mapped}, {Dim: Outcome}}},

	{ValidSELinuxPolicy, "SELinux mount decisions (KEP-1710)", "seLinuxChangePolicy is MountOption or Recursive; an apiserver with SELinuxMount off (v1.36 and older) allows only Recursive on a pod whose old spec has none; a windows pod may not set it (Forbidden)",
		[]Need{{Dim: SELinuxPolicyDim, Only: []string{"MountOption", "Recursive", "unknown"}}, {Dim: SELinuxMountGate}, {Dim: Outcome}}},
	{SELinuxLabel, "SELinux mount decisions (KEP-1710)", "a container's label is its effective seLinuxOptions (the container's replace the pod's whole), what they leave empty filled by volperm's translator (upstream's fake one)",
		[]Need{{Dim: SELinuxLabelFrom}}},
	{SELinuxMount, "SELinux mount decisions (KEP-1710)", "a node with SELinux on mounts a PersistentVolume with context=LABEL when its plugin supports it (iscsi, fc, a CSIDriver with seLinuxMount), the pod's containers give one label and its policy is not Recursive, with SELinuxMount on any access mode, off only exactly ReadWriteOncePod; never an inline volume",
		[]Need{{Dim: SELinuxSource}, {Dim: AccessModes}, {Dim: SELinuxPolicyDim, Only: []string{"unset", "MountOption", "Recursive"}}, {Dim: SELinuxMountGate}, {Dim: Decision, Only: []string{"label", "none"}}}},
	{SELinuxMultiple, "SELinux mount decisions (KEP-1710)", "containers of one pod giving one volume two labels: the volume fails (`multiple SELinux labels found: ...`) where a context mount is possible for its access mode, else no label",
		[]Need{{Dim: SELinuxMountGate}, {Dim: Decision, Only: []string{"error", "ignored"}}}},
	{SELinuxConflict, "SELinux mount decisions (KEP-1710)", "a pod whose label (empty for Recursive or no options) differs from the one a volume is mounted with for a running pod: the volume fails (`conflicting SELinux labels of volume ...`) where a context mount is possible, else it is ignored; the volume keeps its first label",
		[]Need{{Dim: SELinuxMountGate}, {Dim: Decision, Only: []string{"error", "ignored"}}}},

	{ReleaseAPIServerField, "Releases", "an apiserver of a release without a field: Warn keeps the pod without it and warns `unknown field \"PATH\"`; Strict rejects the request",
		[]Need{{Dim: FieldValidation}}},
	{ReleaseKubeletField, "Releases", "a kubelet of a release without a field never sees it: an emptyDir mode is ignored",
		[]Need{{Dim: Medium, Only: []string{"default", "Memory"}}}},
}
