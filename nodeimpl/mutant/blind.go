package mutant

// FamEmptyDirMedium is the group of rules on how an emptyDir's medium is set up (the HugePages
// medium names and page sizes, docs/spec.md [emptydir.hugepages-size]).
const FamEmptyDirMedium Family = "emptydir-medium"

// The blind mutants: written from docs/spec.md and the reference node's sources only, without
// the catalogue, the oracle or the other mutants (docs/mutants.md). Each name appears in exactly
// one `mutant.On` call under nodeimpl/.
const (
	BlindEmptyDirStickyNeedsOtherWrite  Name = "blind-emptydir-sticky-needs-other-write"
	BlindEmptyDirMemorySizeLimitNoMode  Name = "blind-emptydir-memory-sizelimit-no-mode"
	BlindEmptyDirModeChmodOnPermDiff    Name = "blind-emptydir-mode-chmod-only-on-perm-diff"
	BlindEmptyDirSizedHugePagesUnknown  Name = "blind-emptydir-sized-hugepages-unknown"
	BlindEmptyDirHugePagesInitIgnored   Name = "blind-emptydir-hugepages-init-containers-ignored"
	BlindEmptyDirRestartHugePagesSetUp  Name = "blind-emptydir-restart-hugepages-set-up-again"
	BlindEmptyDirReadyOnlyWithMode      Name = "blind-emptydir-ready-only-with-mode"
	BlindEmptyDirNoWalkWithMode         Name = "blind-emptydir-no-walk-with-mode"
	BlindEmptyDirFSGroupZeroNoWalk      Name = "blind-emptydir-fsgroup-zero-no-walk"
	BlindWalkSetgidRootOnly             Name = "blind-walk-setgid-root-only"
	BlindWalkSkipsWhenGIDMatches        Name = "blind-walk-skips-entry-with-fsgroup-gid"
	BlindWalkSkipsDotNames              Name = "blind-walk-skips-dot-names"
	BlindWalkSkipsSymlinks              Name = "blind-walk-skips-symlinks"
	BlindPolicyChecksUID                Name = "blind-policy-checks-root-uid"
	BlindPolicyIgnoredOnRestart         Name = "blind-policy-ignored-on-restart"
	BlindFlexRootEntryIgnored           Name = "blind-flex-root-entry-ignored"
	BlindFlexChmodBeforeChown           Name = "blind-flex-chmod-before-chown"
	BlindHostPathBlockAcceptsChar       Name = "blind-hostpath-block-accepts-char"
	BlindHostPathSocketWord             Name = "blind-hostpath-socket-text-word"
	BlindHostPathKubeletDotDotInName    Name = "blind-hostpath-kubelet-dotdot-in-name"
	BlindHostPathCreateExistFails       Name = "blind-hostpath-directoryorcreate-eexist-fails"
	BlindAtomicItemModeZeroUnset        Name = "blind-atomic-item-mode-zero-unset"
	BlindAtomicNestedNoLink             Name = "blind-atomic-nested-no-visible-link"
	BlindAtomicOptionalMissingKeyFails  Name = "blind-atomic-optional-missing-key-fails"
	BlindAtomicUpdateContentIgnored     Name = "blind-atomic-update-content-change-ignored"
	BlindAtomicUpdateNoWalk             Name = "blind-atomic-update-no-walk"
	BlindAtomicRewriteOnOwnerChange     Name = "blind-atomic-rewrite-on-owner-change"
	BlindPreserveFirstWriteOnly         Name = "blind-preserve-first-write-only"
	BlindPreserveNotProjected           Name = "blind-preserve-not-projected"
	BlindUserZeroUnset                  Name = "blind-user-zero-unset"
	BlindUserDefaultIgnoredWithItems    Name = "blind-user-default-ignored-with-items"
	BlindUserDefaultIgnoredWithoutItems Name = "blind-user-default-ignored-without-items"
	BlindUserNestedDirChowned           Name = "blind-user-nested-dir-chowned"
	BlindDefaultDownwardAPIMode0444     Name = "blind-default-downwardapi-mode-0444"
	BlindDefaultFieldRefNoAPIVersion    Name = "blind-default-fieldref-no-apiversion"
	BlindDropUserInUseDefaultUserOnly   Name = "blind-drop-user-in-use-defaultuser-only"
	BlindDropModeZeroNotInUse           Name = "blind-drop-mode-zero-not-in-use"
	BlindDropPreservePathSecret         Name = "blind-drop-preserve-path-secret"
	BlindDropPreserveInUseNewPod        Name = "blind-drop-preserve-in-use-new-pod"
	BlindValidFileModeNegative          Name = "blind-valid-file-mode-negative-accepted"
	BlindValidFileMode0777Rejected      Name = "blind-valid-file-mode-0777-rejected"
	BlindValidUserMaxRejected           Name = "blind-valid-user-max-rejected"
	BlindValidUserZeroRejected          Name = "blind-valid-user-zero-rejected"
	BlindValidDownwardUserIndexed       Name = "blind-valid-downwardapi-user-indexed-path"
	BlindValidDotDotInName              Name = "blind-valid-dotdot-inside-name"
	BlindValidHostPathSocketUnsupported Name = "blind-valid-hostpath-socket-unsupported"
	BlindValidTokenExpiration600        Name = "blind-valid-token-expiration-600-rejected"
	BlindAllowEmptyNameIndex            Name = "blind-allow-empty-name-index-off-by-one"
	BlindAllowPolicyWildcardIgnored     Name = "blind-allow-policy-check-ignores-wildcard"
	BlindAllowDownwardAPITypeName       Name = "blind-allow-downwardapi-type-name"
	BlindAllowDriverCheckedForEveryType Name = "blind-allow-driver-checked-for-every-type"
	BlindAllowPVDriverUnchecked         Name = "blind-allow-pv-driver-unchecked"
	BlindGatesOffNotApplied             Name = "blind-gates-off-not-applied"
	BlindGatesUserFieldsDefaultOn       Name = "blind-gates-kubelet-user-fields-default-on"
	BlindReleaseStrictSortedFields      Name = "blind-release-strict-fields-sorted"
	BlindReleaseUnknownListedDropped    Name = "blind-release-unknown-field-listed-dropped"
	BlindUsernsHostNetworkRatchetAnyOld Name = "blind-userns-hostnetwork-ratchet-ignores-old-host-users"
	BlindUsernsHostNetworkRatchetV134   Name = "blind-userns-hostnetwork-ratchet-on-v1-34"
	BlindUsernsHostPIDRatchets          Name = "blind-userns-hostpid-ratchets"
	BlindUsernsVolumeDevicesInitSkipped Name = "blind-userns-volume-devices-init-containers-unchecked"
	BlindUsernsVolumeDevicesRatchetNew  Name = "blind-userns-volume-devices-ratchet-reads-new-pod"
	BlindUsernsUnmaskedInitSkipped      Name = "blind-userns-unmasked-init-containers-unchecked"
	BlindUsernsRuntimeTextEmptyHandler  Name = "blind-userns-runtime-text-names-empty-handler"
	BlindUsernsRuntimeBeforeVolumes     Name = "blind-userns-runtime-refused-before-volumes"
	BlindUsernsIdmapGIDsUnshifted       Name = "blind-userns-idmap-gids-unshifted"
	BlindUsernsIdmapFilePlainBind       Name = "blind-userns-idmap-file-volume-plain-bind"

	// Written blind for issue 32 (container groups, image volumes, bind mount options).
	BlindGroupsMergeRejected         Name = "blind-groups-merge-rejected-without-runtime"
	BlindGroupsContainerIDsNeedPodSC Name = "blind-groups-container-ids-need-pod-security-context"
	BlindGroupsStrictDropsFSGroup    Name = "blind-groups-strict-drops-fsgroup"
	BlindGroupsWindowsMergeAllowed   Name = "blind-groups-windows-merge-allowed"
	BlindImageUntaggedIfNotPresent   Name = "blind-image-untagged-defaults-ifnotpresent"
	BlindImagePullPolicyFolded       Name = "blind-image-pull-policy-case-insensitive"
	BlindImageFSGroupWalksEmptyPath  Name = "blind-image-fsgroup-walks-empty-path"
	BlindBindUnsupportedNoDuplicate  Name = "blind-bind-unsupported-option-not-checked-for-duplicate"
	BlindBindDropSkipsInit           Name = "blind-bind-drop-skips-init-containers"
	BlindBindAdmitIgnoresInit        Name = "blind-bind-admit-ignores-init-containers"

	// Written blind for issue 32's SELinux mount decisions (KEP-1710).
	BlindSELinuxOptionsMergedPerField     Name = "blind-selinux-options-merged-per-field"
	BlindSELinuxInitContainersIgnored     Name = "blind-selinux-init-containers-ignored"
	BlindSELinuxUnusedVolumeDecided       Name = "blind-selinux-unused-volume-decided"
	BlindSELinuxEmptyOptionsNoLabel       Name = "blind-selinux-empty-options-no-label"
	BlindSELinuxMultipleLabelsAlwaysError Name = "blind-selinux-multiple-labels-error-any-access-mode"
	BlindSELinuxMultipleAfterPolicy       Name = "blind-selinux-multiple-labels-compared-after-policy"
	BlindSELinuxConflictBeforePolicy      Name = "blind-selinux-conflict-compared-before-policy"
	BlindSELinuxWindowsUnchecked          Name = "blind-selinux-policy-windows-allowed"
)

// Blind lists the blind mutants with what each one gets wrong.
var Blind = []Mutant{
	{BlindEmptyDirStickyNeedsOtherWrite, FamEmptyDirMode, "emptyDir mode: the sticky bit is only applied when the mode is also world-writable (01755 gives 0755)", ""},
	{BlindEmptyDirMemorySizeLimitNoMode, FamEmptyDirMode, "emptyDir mode is not applied to a Memory volume mounted with a size= option (sizeLimit set): the root keeps tmpfs' 1777", ""},
	{BlindEmptyDirModeChmodOnPermDiff, FamEmptyDirMode, "emptyDir mode on the default medium: chmod only when the permission bits differ from the new directory's, so a sticky bit is lost (01755 gives 0755)", ""},
	{BlindEmptyDirSizedHugePagesUnknown, FamEmptyDirMedium, "emptyDir medium HugePages-<size> is not recognised by set-up: the volume fails with unknown storage medium (plain HugePages works)", ""},
	{BlindEmptyDirHugePagesInitIgnored, FamEmptyDirMedium, "HugePages emptyDir page size only looks at the containers' hugepages requests, not the init containers'", ""},
	{BlindEmptyDirRestartHugePagesSetUp, FamEmptyDirRestart, "a ready HugePages emptyDir is set up again on a kubelet restart (chmod of the mounted root to mode, then the walk)", ""},
	{BlindEmptyDirReadyOnlyWithMode, FamEmptyDirRestart, "the ready marker is only written for an emptyDir with a mode: without one, a kubelet restart sets it up again (chmod 0777, walk)", ""},
	{BlindEmptyDirNoWalkWithMode, FamEmptyDirFSGroup, "an emptyDir with an explicit mode is not given fsGroup: the walk is skipped to respect the mode", ""},
	{BlindEmptyDirFSGroupZeroNoWalk, FamEmptyDirFSGroup, "emptyDir treats fsGroup 0 as unset: no ownership walk (no setgid, no group bits)", ""},
	{BlindWalkSetgidRootOnly, FamWalkMask, "ownership walk sets setgid on the volume root only, not on the directories below it", ""},
	{BlindWalkSkipsWhenGIDMatches, FamWalkMask, "ownership walk skips an entry whose group already is fsGroup: no chmod, so its group bits are not added", ""},
	{BlindWalkSkipsDotNames, FamWalkTree, "ownership walk does not descend into or change entries whose name starts with a dot (hidden files, ..<timestamp>)", ""},
	{BlindWalkSkipsSymlinks, FamWalkTree, "ownership walk skips symlinks entirely: they are not lchown'ed to fsGroup", ""},
	{BlindPolicyChecksUID, FamWalkPolicy, "OnRootMismatch compares the root's owner uid, not its gid, with fsGroup", ""},
	{BlindPolicyIgnoredOnRestart, FamWalkPolicy, "flexVolume: fsGroupChangePolicy OnRootMismatch is honoured on the first SetUp only; a restart always walks", ""},
	{BlindFlexRootEntryIgnored, FamFlexVolume, "fixture driver ignores the storage's '.' entry: the volume root keeps 0750 root:root instead of the storage root's mode and owner", ""},
	{BlindFlexChmodBeforeChown, FamFlexVolume, "fixture driver chmods a storage file before chowning it, so the chown clears its setuid bit", ""},
	{BlindHostPathBlockAcceptsChar, FamHostPathType, "hostPath type BlockDevice accepts a character device (any device passes)", ""},
	{BlindHostPathSocketWord, FamHostPathType, "hostPath Socket check failure says 'is not a socket' instead of 'is not a socket file'", ""},
	{BlindHostPathKubeletDotDotInName, FamHostPathType, "kubelet rejects a hostPath whose path merely contains '..' inside a name (/data/..cache), not only a '..' element", ""},
	{BlindHostPathCreateExistFails, FamHostPathCreate, "DirectoryOrCreate fails with 'file exists' when the path is a dangling symlink instead of leaving it to the runtime", ""},
	{BlindAtomicItemModeZeroUnset, FamAtomicWriter, "AtomicWriter: an item mode of 0 is taken as unset, the file gets defaultMode", ""},
	{BlindAtomicNestedNoLink, FamAtomicWriter, "AtomicWriter: no user-visible symlink for a top-level directory (item path sub/key has no 'sub -> ..data/sub')", ""},
	{BlindAtomicOptionalMissingKeyFails, FamAtomicWriter, "secret/configMap with optional: true still fails the volume on an item whose key is missing", ""},
	{BlindAtomicUpdateContentIgnored, FamAtomicUpdate, "AtomicWriter only rewrites when a path was added or removed: a changed content of an existing key is not written", ""},
	{BlindAtomicUpdateNoWalk, FamAtomicUpdate, "AtomicWriter: the fsGroup walk runs on the first write only, not when an update writes a new timestamp dir", ""},
	{BlindAtomicRewriteOnOwnerChange, FamAtomicUpdate, "AtomicWriter compares file owners too: an unchanged payload is rewritten when the owners the gates give differ from the files'", ""},
	{BlindPreserveFirstWriteOnly, FamAtomicWriterOwner, "preservePermissions skips the walk on the first write only: an update of the sources walks the new files", ""},
	{BlindPreserveNotProjected, FamAtomicWriterOwner, "preservePermissions is not honoured on projected volumes (secret, configMap and downwardAPI only)", ""},
	{BlindUserZeroUnset, FamAtomicUser, "KEP-5936: an item's user 0 is taken as unset, the file gets defaultUser instead of root", ""},
	{BlindUserDefaultIgnoredWithItems, FamAtomicUser, "KEP-5936: a secret/configMap with items ignores defaultUser for items without a user", ""},
	{BlindUserDefaultIgnoredWithoutItems, FamAtomicUser, "KEP-5936: a secret/configMap without items ignores defaultUser: every key stays root's", ""},
	{BlindUserNestedDirChowned, FamAtomicUser, "KEP-5936: the nested directory of an item path (sub/ of sub/key) is given the item's owner too", ""},
	{BlindDefaultDownwardAPIMode0444, FamDefaulting, "downwardAPI defaultMode defaults to 0444 instead of 0644", ""},
	{BlindDefaultFieldRefNoAPIVersion, FamDefaulting, "a downwardAPI item's fieldRef apiVersion is not defaulted to v1, so the pod fails validation", ""},
	{BlindDropUserInUseDefaultUserOnly, FamDropping, "KEP-5936 fields in use: only the old pod's defaultUser counts, not an item's or a token's user", ""},
	{BlindDropModeZeroNotInUse, FamDropping, "emptyDir mode in use: an old pod's mode 0 is taken as unset, so a new mode is dropped", ""},
	{BlindDropPreservePathSecret, FamDropping, "the dropped preservePermissions path always names .secret., whatever the volume's type", ""},
	{BlindDropPreserveInUseNewPod, FamDropping, "preservePermissions in-use is checked on the new pod instead of the old one: the field is never dropped", ""},
	{BlindValidFileModeNegative, FamValidation, "defaultMode / item mode: negative values are accepted (only the upper bound is checked)", ""},
	{BlindValidFileMode0777Rejected, FamValidation, "defaultMode / item mode: 0777 itself is rejected (upper bound exclusive)", ""},
	{BlindValidUserMaxRejected, FamValidation, "defaultUser / user: 2147483647 itself is rejected (upper bound exclusive)", ""},
	{BlindValidUserZeroRejected, FamValidation, "defaultUser / user: 0 (root) is rejected", ""},
	{BlindValidDownwardUserIndexed, FamValidation, "a downwardAPI volume item's invalid user is reported at .downwardAPI.items[j].user instead of the source's .downwardAPI.user", ""},
	{BlindValidDotDotInName, FamValidation, "path check rejects '..' anywhere in the path (/var/..data, a..b), not only as an element", ""},
	{BlindValidHostPathSocketUnsupported, FamValidation, "hostPath type Socket is missing from the supported types: rejected as Unsupported value", ""},
	{BlindValidTokenExpiration600, FamValidation, "serviceAccountToken expirationSeconds 600 (exactly 10 minutes) is rejected as less than 10 minutes", ""},
	{BlindAllowEmptyNameIndex, FamAllowlist, "invalid policy: an empty driver name is reported one index too far (allowedDrivers[i+1])", ""},
	{BlindAllowPolicyWildcardIgnored, FamAllowlist, "policy check: allowedVolumeTypes [*] with allowedDrivers is called invalid (the wildcard is not taken as allowing flexVolume there)", ""},
	{BlindAllowDownwardAPITypeName, FamAllowlist, "allowlist names a downwardAPI volume 'downwarAPI' (upstream's path spelling), so allowedVolumeTypes [downwardAPI] forbids it", ""},
	{BlindAllowDriverCheckedForEveryType, FamAllowlist, "allowlist checks the flexVolume driver of every volume: with allowedDrivers set, a non-flexVolume volume is forbidden for driver \"\"", ""},
	{BlindAllowPVDriverUnchecked, FamAllowlist, "allowlist checks a PersistentVolume's type but not its flexVolume driver", ""},
	{BlindGatesOffNotApplied, FamGates, "kubelet gate change: gates turned off are ignored (only gates turned on are merged), an on gate stays on", ""},
	{BlindGatesUserFieldsDefaultOn, FamGates, "kubelet: AtomicWriteVolumeUserFields is on when the kubelet's gates do not name it", ""},
	{BlindReleaseStrictSortedFields, FamReleases, "Strict refusal of unknown fields lists them sorted instead of in decoding order (defaultUser before items[j].user)", ""},
	{BlindReleaseUnknownListedDropped, FamReleases, "an unknown field of an older apiserver is also listed in admission's dropped paths, not only as a warning", ""},
	{BlindUsernsHostNetworkRatchetAnyOld, FamUserNS, "user namespaces: the hostNetwork ratchet of an update looks only at the old pod's hostNetwork, not at its hostUsers: false", ""},
	{BlindUsernsHostNetworkRatchetV134, FamUserNS, "user namespaces: the hostNetwork ratchet is applied by every release's apiserver, v1.34 included (backported)", ""},
	{BlindUsernsHostPIDRatchets, FamUserNS, "user namespaces: hostPID ratchets like hostNetwork: allowed on an update whose old pod had hostUsers false with hostPID", ""},
	{BlindUsernsVolumeDevicesInitSkipped, FamUserNS, "user namespaces: volumeDevices of init containers are not checked with hostUsers false (containers only)", ""},
	{BlindUsernsVolumeDevicesRatchetNew, FamUserNS, "user namespaces: the volumeDevices ratchet looks for volumeDevices in the new pod, not the old one, so any update of a hostUsers false pod allows them", ""},
	{BlindUsernsUnmaskedInitSkipped, FamUserNS, "user namespaces: procMount Unmasked without hostUsers false is refused for containers but not for init containers", ""},
	{BlindUsernsRuntimeTextEmptyHandler, FamUserns, "user namespaces: a runtime without support is refused with the RuntimeClass text for the default handler: RuntimeClass handler \"\" does not support user namespaces", ""},
	{BlindUsernsRuntimeBeforeVolumes, FamUserns, "user namespaces: on a runtime without support the kubelet refuses the pod before its volume manager runs: every volume fails with the sandbox text, none is set up", ""},
	{BlindUsernsIdmapGIDsUnshifted, FamUserns, "user namespaces: the runtime's idmapped mount applies the pod's range to uids only; gids are mapped 1:1 from the host, so no group of the volume is mapped", ""},
	{BlindUsernsIdmapFilePlainBind, FamUserns, "user namespaces: a volume that is a file (hostPath File, FileOrCreate, ...) is bind-mounted without the idmap; only directories are idmapped", ""},
	{BlindGroupsMergeRejected, FamGroups, "supplementalGroupsPolicy: on a node whose runtime lacks the policy the kubelet rejects any pod that sets it, Merge too, not only Strict", ""},
	{BlindGroupsContainerIDsNeedPodSC, FamGroups, "the container's runAsUser and runAsGroup are only read when the pod has a securityContext: a container's ids alone are ignored (the image's user)", ""},
	{BlindGroupsStrictDropsFSGroup, FamGroups, "supplementalGroupsPolicy Strict: the kubelet leaves fsGroup out of the container's supplementalGroups (Strict read as 'only the listed supplementalGroups')", ""},
	{BlindGroupsWindowsMergeAllowed, FamValidation, "supplementalGroupsPolicy on a windows pod: only Strict is Forbidden, Merge (the default behaviour) is allowed", ""},
	{BlindImageUntaggedIfNotPresent, FamDefaulting, "image volume pullPolicy defaulting: an untagged reference defaults to IfNotPresent; only an explicit :latest gives Always",
		"an empty pullPolicy reaches only admission-only cases (framework/load.go asks a case on a node for Never or IfNotPresent), where Always and IfNotPresent both validate: no Observation field depends on the default"},
	{BlindImagePullPolicyFolded, FamValidation, "image volume pullPolicy compared case-insensitively: 'never', 'ALWAYS' are accepted instead of Unsupported value", ""},
	{BlindImageFSGroupWalksEmptyPath, FamMounts, "image volumes: the kubelet runs the fsGroup walk on the image plugin's path, which is \"\", so with fsGroup the volume fails (lstat \"\": no such file)", ""},
	{BlindBindUnsupportedNoDuplicate, FamValidation, "bindMountOptions: an unsupported option is not also checked for duplicates, so [\"rw\",\"rw\"] gives two errors, not three", ""},
	{BlindBindDropSkipsInit, FamDropping, "bindMountOptions dropping (gate off): init containers' volumeMounts keep their options (only containers and ephemeral containers are cleared)", ""},
	{BlindBindAdmitIgnoresInit, FamMounts, "bindMountOptions: the kubelet's declared-features check reads containers and ephemeral containers only, so a pod whose options are on an init container's mount is admitted without VolumeBindMountOptions", ""},
	{BlindSELinuxOptionsMergedPerField, FamSELinux, "SELinux: a container's seLinuxOptions are merged field by field over the pod's instead of replacing them whole (pod level s0:c1,c2 + container type spc_t keeps the pod's level)", ""},
	{BlindSELinuxInitContainersIgnored, FamSELinux, "SELinux: the volume manager reads regular and ephemeral containers only: init containers' mounts and labels are ignored", ""},
	{BlindSELinuxUnusedVolumeDecided, FamSELinux, "SELinux: a volume no container uses is not skipped: it is added to the desired state (no label) and decided", ""},
	{BlindSELinuxEmptyOptionsNoLabel, FamSELinux, "SELinux: an empty seLinuxOptions {} is taken as unset, giving no label instead of the all-defaults label", ""},
	{BlindSELinuxMultipleLabelsAlwaysError, FamSELinux, "SELinux: two labels in one pod fail the volume whatever its type and access mode, not only where a context mount is possible", ""},
	{BlindSELinuxMultipleAfterPolicy, FamSELinux, "SELinux: the multiple-labels check runs after Recursive and the plugin's support cleared the label: no error for a Recursive pod or a plugin without context mounts", ""},
	{BlindSELinuxConflictBeforePolicy, FamSELinux, "SELinux: the conflict between pods compares their labels before the policy clears them: a Recursive pod and a MountOption pod with the same options share the volume", ""},
	{BlindSELinuxWindowsUnchecked, FamSELinux, "seLinuxChangePolicy validation: a windows pod may set it (no Forbidden)", ""},
}
