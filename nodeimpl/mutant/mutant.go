// Package mutant is the test-only seam of volperm's mutation self-test (docs/mutants.md): a
// list of realistic one-change bugs in the reference node, each behind `if mutant.On(X)` at
// the line it changes. A normal build has no seam (On is a constant false, seam_off.go);
// `make mutants` builds with -tags volperm_mutants and runs the catalogue once per mutant,
// which must fail at least one case. The package is a leaf: nodeimpl imports it, it imports
// nothing of volperm.
package mutant

import "strings"

// Name identifies one mutant; it is also the value of VOLPERM_MUTANT for an agent.
type Name string

// Family is the group of spec rules a mutant breaks (docs/spec.md sections).
type Family string

const (
	FamEmptyDirMode      Family = "emptydir-mode"       // applying `mode` (KEP-5502)
	FamEmptyDirDefault   Family = "emptydir-default"    // the root without `mode`, per medium
	FamEmptyDirRestart   Family = "emptydir-restart"    // a second SetUp of a ready emptyDir
	FamEmptyDirFSGroup   Family = "emptydir-fsgroup"    // the walk on an emptyDir
	FamEmptyDirSize      Family = "emptydir-size"       // a Memory emptyDir's tmpfs size
	FamUserns            Family = "userns"              // user namespaces: range and idmapped mounts
	FamWalkMask          Family = "walk-mask"           // the bits the ownership walk ORs in
	FamWalkTree          Family = "walk-tree"           // what the walk visits and keeps
	FamWalkPolicy        Family = "walk-policy"         // fsGroupChangePolicy OnRootMismatch
	FamFlexVolume        Family = "flexvolume"          // the fixture driver's set-up
	FamHostPathType      Family = "hostpath-type"       // hostPath type checks and texts
	FamHostPathCreate    Family = "hostpath-create"     // DirectoryOrCreate / FileOrCreate
	FamAtomicWriter      Family = "atomicwriter"        // layout and file modes
	FamAtomicWriterOwner Family = "atomicwriter-owner"  // fsGroup and preservePermissions
	FamAtomicUser        Family = "atomicwriter-user"   // KEP-5936 file owners: defaultUser and user
	FamAtomicUpdate      Family = "atomicwriter-update" // a write after the sources changed
	FamDefaulting        Family = "defaulting"          // the apiserver's defaults
	FamDropping          Family = "dropping"            // field dropping by gate
	FamValidation        Family = "validation"          // ranges and texts
	FamAllowlist         Family = "allowlist"           // the flexVolume allowlist (seed 004)
	FamGates             Family = "gates"               // the kubelet's gates across steps
	FamReleases          Family = "releases"            // what an older release knows
	FamUserNS            Family = "userns"              // the API rules of hostUsers (KEP-127)
	FamMounts            Family = "mounts"              // volumeMount modes (mountPropagation, recursiveReadOnly)
	FamGroups            Family = "groups"              // the container's groups (supplementalGroupsPolicy, KEP-3619)
	FamSELinux           Family = "selinux"             // SELinux mount decisions (KEP-1710)
)

// IsBlind says whether m is of the blind set (blind.go, issue 30): written by someone who had
// read only docs/spec.md and nodeimpl/, not the catalogue or the other mutants.
func (m Mutant) IsBlind() bool { return strings.HasPrefix(string(m.Name), "blind-") }

// Mutant is one realistic bug.
type Mutant struct {
	Name   Name
	Family Family
	// Bug says what the node does wrong, as a vendor's change log would.
	Bug string
	// Equivalent, when set, is the one-line proof that no observation can tell the mutant
	// from the reference node; such a mutant is run but not required to be killed.
	Equivalent string
}

// The mutants, by family. Each name appears in exactly one `mutant.On` call under nodeimpl/
// (TestEverySeamOnce).
const (
	ImageVolumeRefused                Name = "image-volume-refused"
	SELinuxConflictIgnored            Name = "selinux-conflict-ignored"
	SELinuxAnyAccessModeWithoutGate   Name = "selinux-any-access-mode-without-gate"
	SELinuxRecursiveKeepsLabel        Name = "selinux-recursive-keeps-label"
	SELinuxPolicyMountOptionOld       Name = "selinux-policy-mountoption-on-old-apiserver"
	BindOptionsAdmitted               Name = "bind-options-admitted"
	BindOptionsDeclaredWithoutRuntime Name = "bind-options-declared-without-runtime"
	GroupsStrictAdmitted              Name = "groups-strict-admitted"
	GroupsNoFSGroup                   Name = "groups-no-fsgroup"
	GroupsPolicyNotPassed             Name = "groups-policy-not-passed"
	GroupsPodRunAsGroupWins           Name = "groups-pod-run-as-group-wins"
	ReleaseWarnSilently               Name = "release-unknown-field-no-warning"
	ReleaseStrictIgnored              Name = "release-strict-ignored"
	ReleaseKubeletKnowsAll            Name = "release-kubelet-knows-every-field"
	EmptyDirModeDropsSticky           Name = "emptydir-mode-drops-sticky"
	EmptyDirModeStickyAsSetgid        Name = "emptydir-mode-sticky-as-setgid"
	EmptyDirModeUmask                 Name = "emptydir-mode-umask"
	EmptyDirModeNotOnMemory           Name = "emptydir-mode-not-on-memory"
	EmptyDirModeNotOnHugePages        Name = "emptydir-mode-not-on-hugepages"
	EmptyDirModeZeroIsUnset           Name = "emptydir-mode-zero-is-unset"
	EmptyDirModeIgnoresGate           Name = "emptydir-mode-ignores-gate"
	EmptyDirModeOtherWriteOnly        Name = "emptydir-mode-other-write-dropped"
	EmptyDirDefaultUmask              Name = "emptydir-default-umask"
	EmptyDirDefaultMemory0777         Name = "emptydir-default-memory-0777"
	EmptyDirDefaultHugePages777       Name = "emptydir-default-hugepages-0777"
	EmptyDirRestartRechmod            Name = "emptydir-restart-rechmod"
	EmptyDirRestartRewalk             Name = "emptydir-restart-rewalk"
	EmptyDirRestartNotReady           Name = "emptydir-restart-not-ready"
	EmptyDirNoWalk                    Name = "emptydir-no-walk"
	EmptyDirWalkBeforeMode            Name = "emptydir-walk-before-mode"
	EmptyDirWalkDefaultOnly           Name = "emptydir-walk-default-medium-only"
	EmptyDirMemoryNoSize              Name = "emptydir-memory-no-size"
	EmptyDirMemorySizeOff             Name = "emptydir-memory-size-off-by-a-page"
	UsernsNoIdmap                     Name = "userns-no-idmap"
	UsernsOtherRange                  Name = "userns-other-range"
	UsernsRangeLostOnRestart          Name = "userns-range-lost-on-restart"
	UsernsRangeUnaligned              Name = "userns-range-unaligned"
	UsernsRangeShort                  Name = "userns-range-short"
	UsernsRuntimeIgnored              Name = "userns-runtime-support-ignored"

	WalkRWMask0640     Name = "walk-rw-mask-0640"
	WalkROMask0444     Name = "walk-ro-mask-0444"
	WalkDirNoSetgid    Name = "walk-dir-no-setgid"
	WalkDirNoExec      Name = "walk-dir-no-exec"
	WalkFileExec       Name = "walk-file-exec"
	WalkReplaceNotOr   Name = "walk-replace-not-or"
	WalkDropsSpecial   Name = "walk-drops-setuid-sticky"
	WalkNoChown        Name = "walk-no-chown"
	WalkChownsUID      Name = "walk-chowns-uid"
	WalkChmodsSymlinks Name = "walk-chmods-symlinks"
	WalkSkipsRoot      Name = "walk-skips-root"
	WalkRootOnly       Name = "walk-root-only"
	WalkTopLevelOnly   Name = "walk-top-level-only"

	PolicyIgnored        Name = "policy-onrootmismatch-ignored"
	PolicyAlwaysSkips    Name = "policy-always-skips-matching-root"
	PolicyNoSetgidCheck  Name = "policy-no-setgid-check"
	PolicyNoGIDCheck     Name = "policy-no-gid-check"
	PolicyNoExecCheck    Name = "policy-no-exec-check"
	PolicyChecksChildren Name = "policy-root-mismatch-skips-children"

	FlexReadOnlyWalks      Name = "flex-readonly-walks"
	FlexRestartRepopulates Name = "flex-restart-restores-modes"
	FlexDir0755            Name = "flex-dir-0755"
	FlexNoWalkOnRestart    Name = "flex-no-walk-on-restart"
	FlexStorageOwnerLost   Name = "flex-storage-owner-lost"

	HostPathLstat            Name = "hostpath-type-lstat"
	HostPathCharBlockSwapped Name = "hostpath-char-block-swapped"
	HostPathSocketAnything   Name = "hostpath-socket-accepts-anything"
	HostPathUnsetChecks      Name = "hostpath-unset-checks-existence"
	HostPathTextHostRoot     Name = "hostpath-text-names-host-path"
	HostPathDirAcceptsFile   Name = "hostpath-directory-accepts-file"
	HostPathNoRecheck        Name = "hostpath-no-recheck-on-restart"
	HostPathDirCreate0700    Name = "hostpath-directoryorcreate-0700"
	HostPathFileCreate0600   Name = "hostpath-fileorcreate-0600"
	HostPathFileCreateParent Name = "hostpath-fileorcreate-makes-parents"
	HostPathWalked           Name = "hostpath-walked-by-fsgroup"
	HostPathCreateChown      Name = "hostpath-create-chowns-fsgroup"

	AtomicItemModeIgnored   Name = "atomic-item-mode-ignored"
	AtomicFileUmask         Name = "atomic-file-umask"
	AtomicTsDir0700         Name = "atomic-timestamp-dir-0700"
	AtomicNestedDir0700     Name = "atomic-nested-dir-0700"
	AtomicConfigMapOnMemory Name = "atomic-configmap-on-memory"
	AtomicSecretOnDisk      Name = "atomic-secret-on-disk"
	AtomicRewriteOnRestart  Name = "atomic-rewrite-on-restart"
	AtomicAbsoluteLinks     Name = "atomic-absolute-links"
	AtomicRWMask            Name = "atomic-walk-rw-mask"
	AtomicNoWalk            Name = "atomic-no-walk"
	AtomicWalkBeforeWrite   Name = "atomic-walk-only-root"
	PreserveIgnoresGate     Name = "preserve-ignores-kubelet-gate"
	PreserveIgnored         Name = "preserve-ignored"
	PreserveAllVolumes      Name = "preserve-applies-to-every-volume"

	AtomicUserDefaultWins      Name = "atomic-user-default-beats-item"
	AtomicUserIgnoresGate      Name = "atomic-user-ignores-kubelet-gate"
	AtomicUserLinkNotChowned   Name = "atomic-user-link-not-chowned"
	AtomicUserDropIgnoresInUse Name = "atomic-user-drop-ignores-in-use"
	AtomicUserChownsGroup      Name = "atomic-user-chowns-group"

	AtomicUpdateKeepsLostLinks Name = "atomic-update-keeps-lost-links"
	AtomicUpdateRechownsLinks  Name = "atomic-update-rechowns-links"

	DefaultSecretMode0600    Name = "default-secret-mode-0600"
	DefaultConfigMapMode0444 Name = "default-configmap-mode-0444"
	DefaultProjectedNone     Name = "default-projected-mode-missing"
	DefaultNoSourceRejected  Name = "default-no-source-not-emptydir"

	DropIgnoresInUse         Name = "drop-mode-ignores-in-use"
	DropInUseSameVolume      Name = "drop-mode-in-use-same-volume-only"
	DropNotReported          Name = "drop-mode-not-reported"
	DropAfterValidation      Name = "drop-after-validation"
	DropPreserveIgnoresInUse Name = "drop-preserve-ignores-in-use"
	DropNever                Name = "drop-mode-never"

	ValidEmptyDirUpperOffByOne Name = "valid-emptydir-mode-rejects-01777"
	ValidEmptyDirUpper0777     Name = "valid-emptydir-mode-max-0777"
	ValidEmptyDirNegative      Name = "valid-emptydir-mode-negative-accepted"
	ValidFileModeUpper01777    Name = "valid-file-mode-max-01777"
	ValidItemModeUnchecked     Name = "valid-item-mode-unchecked"
	ValidHostPathBacksteps     Name = "valid-hostpath-backsteps-accepted"
	ValidHostPathTypeFold      Name = "valid-hostpath-type-case-insensitive"
	ValidEmptyDirTextOctal     Name = "valid-emptydir-text-octal"

	AllowDriverPrefix     Name = "allow-driver-prefix-match"
	AllowWildcardIgnored  Name = "allow-wildcard-ignored"
	AllowEmptyDeniesAll   Name = "allow-empty-list-denies-all"
	AllowPVUnchecked      Name = "allow-persistentvolume-unchecked"
	AllowEmptyNameOK      Name = "allow-empty-driver-name-accepted"
	AllowFirstVolumeOnly  Name = "allow-first-volume-only"
	AllowTypeBeforeDriver Name = "allow-both-errors"

	UserNSSetNotFalse            Name = "userns-host-users-set-not-false"
	UserNSLowercasePaths         Name = "userns-hostpid-hostipc-paths-lowercase"
	UserNSVolumeDevicesUnchecked Name = "userns-volume-devices-unchecked"
	MountsPathIndexed            Name = "mounts-error-path-indexed"
	MountsRROIgnoresPropagation  Name = "mounts-rro-ignores-propagation"
	MountsBidirectionalAllowed   Name = "mounts-bidirectional-allowed"
	MountsRROOneErrorOnly        Name = "mounts-rro-one-error-only"
	UserNSUnmaskedUnsetAllowed   Name = "userns-unmasked-allowed-with-host-users-unset"

	GatesRestartKeepsOld  Name = "gates-restart-keeps-old-gates"
	GatesPreserveFromMode Name = "gates-preserve-reads-mode-gate"
	GatesModeDefaultOn    Name = "gates-kubelet-mode-default-on"
)
