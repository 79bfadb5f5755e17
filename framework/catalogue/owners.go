package catalogue

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
)

// KEP-5936 (docs/spec.md "File owners"): defaultUser and item user on secret, configMap,
// downwardAPI and projected volumes, behind the alpha gate AtomicWriteVolumeUserFields: what
// v1.37 ships for seed 002's problem. Every case is labelled LabelKEP5936.

// LabelKEP5936 marks the cases of KEP-5936's file owners.
const LabelKEP5936 = "kep-5936"

// The owners of the cases: two uids that are neither the prober classes' nor fsGroup.
const (
	ownerA int64 = 1001
	ownerB int64 = 1002
)

// Probers of the owner cases: the owner, a member of fsGroup only, somebody else.
var (
	asOwnerA      = framework.User{UID: ownerA, GID: ownerA}
	asFSGroupOnly = framework.User{UID: 1004, GID: 1004, Groups: []int64{fsGroup}}
	asStranger    = framework.User{UID: 1003, GID: 1003}
)

// ownedItem selects key into path, with an optional mode and owner.
type ownedItem struct {
	key, path string
	mode      *int32
	user      *int64
}

// ownedSource builds a volume source of type typ with defaultMode, defaultUser and items (a
// downwardAPI volume without items lists both keys; a projected volume projects the secret).
func ownedSource(typ string, defaultMode *int32, defaultUser *int64, items []ownedItem) corev1.VolumeSource {
	keys := func() []corev1.KeyToPath {
		var out []corev1.KeyToPath
		for _, it := range items {
			out = append(out, corev1.KeyToPath{Key: it.key, Path: it.path, Mode: it.mode, User: it.user})
		}
		return out
	}
	switch typ {
	case "secret":
		return corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds", DefaultMode: defaultMode, DefaultUser: defaultUser, Items: keys()}}
	case "configMap":
		return corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}, DefaultMode: defaultMode, DefaultUser: defaultUser, Items: keys(),
		}}
	case "downwardAPI":
		if len(items) == 0 {
			items = []ownedItem{{key: "username", path: "username"}, {key: "password", path: "password"}}
		}
		var files []corev1.DownwardAPIVolumeFile
		for _, it := range items {
			files = append(files, corev1.DownwardAPIVolumeFile{
				Path: it.path, Mode: it.mode, User: it.user,
				FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: downwardFields[it.key]},
			})
		}
		return corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: files, DefaultMode: defaultMode, DefaultUser: defaultUser}}
	}
	return corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{DefaultMode: defaultMode, DefaultUser: defaultUser, Sources: []corev1.VolumeProjection{{
		Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}, Items: keys()},
	}}}}
}

// ownerSpec is one generated owner case, built for every AtomicWriter type.
type ownerSpec struct {
	name, desc  string
	defaultMode *int32
	defaultUser *int64
	items       []ownedItem
	fsGroup     bool
	// gates: AtomicWriteVolumeUserFields on the apiserver and the kubelet; nil leaves both at
	// their default (off).
	gates *[2]bool
	// preserve: the volume carries preservePermissions, the apiserver's PreservePermissions
	// gate on and the kubelet's as given.
	preserve *bool
	// old: an update whose old pod has these fields (oldUser on the volume) or none.
	old           *bool
	after         []framework.Step
	probes        []framework.Probe
	admissionOnly bool
}

func (s ownerSpec) build(typ string) *framework.Case {
	vol := strings.ToLower(typ)
	pod := podOf(volume(vol, ownedSource(typ, s.defaultMode, s.defaultUser, s.items)))
	if s.fsGroup {
		withFSGroup(pod, fsGroup)
	}
	c := &framework.Case{
		Name:          fmt.Sprintf("%s volume %s", typ, s.name),
		Area:          framework.AreaAtomicWriter,
		Profile:       framework.ProfileAlpha,
		Labels:        []string{LabelKEP5936},
		Description:   s.desc,
		Pod:           pod,
		Sources:       awSources(),
		After:         s.after,
		AdmissionOnly: s.admissionOnly,
	}
	if s.gates != nil {
		c.Gates = gates(framework.GateAtomicWriteVolumeUserFields, s.gates[0], s.gates[1])
	}
	if s.preserve != nil {
		c.Profile = framework.ProfileProposal
		c.PreservePermissions = []string{vol}
		c.Gates.APIServer[framework.GatePreservePermissions] = true
		c.Gates.Kubelet[framework.GatePreservePermissions] = *s.preserve
	}
	if s.old != nil {
		oldPod := podOf(volume(vol, ownedSource(typ, s.defaultMode, nil, nil)))
		if *s.old {
			oldPod = podOf(volume(vol, ownedSource(typ, s.defaultMode, ptr(ownerB), nil)))
		}
		c.OldPod = oldPod
	}
	for _, p := range s.probes {
		p.Volume = vol
		c.Probes = append(c.Probes, p)
	}
	return c
}

// userGates words the AtomicWriteVolumeUserFields gates in a case name.
func userGates(g *[2]bool) string {
	if g == nil {
		return "AtomicWriteVolumeUserFields gates at their default"
	}
	return "AtomicWriteVolumeUserFields " + gatePhrase(g[0], g[1])
}

func readProbe(name string, as framework.User, path string) framework.Probe {
	return framework.Probe{Name: name, As: as, Op: framework.OpRead, Path: path}
}

func ownerSpecs() []ownerSpec {
	on := &[2]bool{true, true}
	both := []ownedItem{{key: "username", path: "username"}, {key: "password", path: "password", user: ptr(ownerB)}}
	var specs []ownerSpec
	// [atomicwriter.owner]: defaultUser, item user, both (the item wins), neither.
	specs = append(specs,
		ownerSpec{
			name:        fmt.Sprintf("with defaultUser %d, %s", ownerA, userGates(on)),
			desc:        "KEP-5936: every file and its top-level symlink are owned by defaultUser; the timestamp dir and ..data stay root's.",
			defaultUser: ptr(ownerA), gates: on,
		},
		ownerSpec{
			name:        fmt.Sprintf("with defaultUser %d and user %d on the item password, %s", ownerA, ownerB, userGates(on)),
			desc:        "KEP-5936 ResolvesFsUser: an item's user wins over defaultUser, for that file only.",
			defaultUser: ptr(ownerA), items: both, gates: on,
		},
		ownerSpec{
			name:  fmt.Sprintf("with user %d on the item password only, %s", ownerB, userGates(on)),
			desc:  "KEP-5936: without defaultUser, a file without an item user stays root's.",
			items: both, gates: on,
		},
		ownerSpec{
			name:  "without user fields, " + userGates(on),
			desc:  "KEP-5936: the gate alone changes no owner.",
			gates: on,
		},
	)
	// The gates: the apiserver drops the fields with its gate off ([dropping.atomic-user]); a
	// kubelet with its gate off ignores what the apiserver kept.
	for _, g := range []*[2]bool{{true, false}, {false, true}, {false, false}, nil} {
		specs = append(specs, ownerSpec{
			name:        fmt.Sprintf("with defaultUser %d and user %d on the item password, %s", ownerA, ownerB, userGates(g)),
			desc:        "KEP-5936: the apiserver without the gate drops defaultUser and every item user; a kubelet without it writes root-owned files whatever the pod says.",
			defaultUser: ptr(ownerA), items: both, gates: g,
		})
	}
	// With modes and fsGroup: the walk keeps the owner, gives the group and the read-only mask.
	specs = append(specs,
		ownerSpec{
			name:        fmt.Sprintf("with defaultUser %d, defaultMode 0400 and no fsGroup, %s", ownerA, userGates(on)),
			desc:        "Seed 002's problem solved by KEP-5936: a 0400 file owned by uid 1001 is read by uid 1001 only.",
			defaultMode: ptr[int32](0400), defaultUser: ptr(ownerA), gates: on,
			probes: []framework.Probe{
				readProbe("the owner reads username", asOwnerA, "username"),
				readProbe("a stranger reads username", asStranger, "username"),
				readProbe("root reads username", asRoot, "username"),
			},
		},
		ownerSpec{
			name:        fmt.Sprintf("with defaultUser %d, defaultMode 0400 and fsGroup %d, %s", ownerA, fsGroup, userGates(on)),
			desc:        "KEP-5936 with fsGroup: the walk keeps the owner and adds group read (0440, group fsGroup), so every uid in fsGroup may read the file; through the top-level symlink (owned by uid 1001) only uid 1001 gets there when the volume root is sticky and world-writable (tmpfs 1777: secret, downwardAPI, projected) under fs.protected_symlinks=1; ..data (root's) leads everyone there.",
			defaultMode: ptr[int32](0400), defaultUser: ptr(ownerA), fsGroup: true, gates: on,
			probes: []framework.Probe{
				readProbe("the owner reads username", asOwnerA, "username"),
				readProbe("an fsGroup member reads username", asFSGroupOnly, "username"),
				readProbe("an fsGroup member reads ..data/username", asFSGroupOnly, "..data/username"),
				readProbe("a stranger reads username", asStranger, "username"),
			},
		},
		ownerSpec{
			name:        fmt.Sprintf("with defaultUser %d, defaultMode 0400, fsGroup %d and preservePermissions, %s, %s", ownerA, fsGroup, userGates(on), preserveGates(true, true)),
			desc:        "KEP-5936 with seed 002's preservePermissions: the walk is skipped, the file stays 0400 owned by uid 1001, group root: the fsGroup member is denied.",
			defaultMode: ptr[int32](0400), defaultUser: ptr(ownerA), fsGroup: true, gates: on, preserve: ptr(true),
			probes: []framework.Probe{
				readProbe("the owner reads username", asOwnerA, "username"),
				readProbe("an fsGroup member reads username", asFSGroupOnly, "username"),
			},
		},
		ownerSpec{
			name:        fmt.Sprintf("with defaultUser %d, defaultMode 0400, fsGroup %d and preservePermissions, %s, %s", ownerA, fsGroup, userGates(on), preserveGates(true, false)),
			desc:        "KEP-5936 with preservePermissions that the kubelet does not honour: the walk runs, 0440 group fsGroup, owner uid 1001.",
			defaultMode: ptr[int32](0400), defaultUser: ptr(ownerA), fsGroup: true, gates: on, preserve: ptr(false),
			probes: []framework.Probe{
				readProbe("an fsGroup member reads username", asFSGroupOnly, "username"),
			},
		},
		ownerSpec{
			name:        fmt.Sprintf("with defaultUser %d, defaultMode 0440, item password mode 0600 user %d and fsGroup %d, %s", ownerA, ownerB, fsGroup, userGates(on)),
			desc:        "KEP-5936: per-item mode and owner beside the volume's; the walk ORs 0440 into both.",
			defaultMode: ptr[int32](0440), defaultUser: ptr(ownerA), fsGroup: true, gates: on,
			items: []ownedItem{{key: "username", path: "username"}, {key: "password", path: "password", mode: ptr[int32](0600), user: ptr(ownerB)}},
			probes: []framework.Probe{
				readProbe("the owner of username reads password", asOwnerA, "password"),
				readProbe("an fsGroup member reads password", asFSGroupOnly, "password"),
			},
		},
		ownerSpec{
			name:        fmt.Sprintf("with nested items a/b/username and a/password, defaultUser %d, %s", ownerA, userGates(on)),
			desc:        "KEP-5936: nested directories stay root's; the top-level symlink a is owned like the files under it.",
			defaultUser: ptr(ownerA), gates: on,
			items: []ownedItem{{key: "username", path: "a/b/username"}, {key: "password", path: "a/password"}},
		},
	)
	// A kubelet restart: the payload is unchanged, nothing is written, no owner changes, even
	// when the kubelet's gate changed in between ([atomicwriter.unchanged]).
	setKubelet := func(v bool) framework.Step {
		return framework.Step{SetGates: &framework.Gates{Kubelet: map[string]bool{framework.GateAtomicWriteVolumeUserFields: v}}}
	}
	specs = append(specs,
		ownerSpec{
			name:        fmt.Sprintf("with defaultUser %d and fsGroup %d, then a kubelet restart, %s", ownerA, fsGroup, userGates(on)),
			desc:        "KEP-5936: a second SetUp with an unchanged payload writes nothing: owners, group and modes stay.",
			defaultUser: ptr(ownerA), fsGroup: true, gates: on, after: []framework.Step{restart},
		},
		ownerSpec{
			name:        fmt.Sprintf("with defaultUser %d created with the kubelet gate off, then the kubelet gate turned on and a restart", ownerA),
			desc:        "KEP-5936: the owners are written with the files; a restart with the gate now on and an unchanged payload writes nothing, so the files stay root's.",
			defaultUser: ptr(ownerA), gates: &[2]bool{true, false}, after: []framework.Step{setKubelet(true), restart},
		},
		ownerSpec{
			name:        fmt.Sprintf("with defaultUser %d created with both gates on, then the kubelet gate turned off and a restart", ownerA),
			desc:        "KEP-5936: turning the kubelet gate off does not take owners back from a running pod's unchanged files.",
			defaultUser: ptr(ownerA), gates: on, after: []framework.Step{setKubelet(false), restart},
		},
	)
	// An update ([dropping.atomic-user] in use): kept when the old pod used a field, else dropped.
	for _, old := range []bool{true, false} {
		verb := "adding"
		if old {
			verb = "keeping"
		}
		specs = append(specs, ownerSpec{
			name:        fmt.Sprintf("update %s defaultUser %d, AtomicWriteVolumeUserFields apiserver gate off, kubelet gate on", verb, ownerA),
			desc:        "KEP-5936: with the apiserver gate off the fields are dropped on update unless the old pod already used one (atomicWriteVolumeUserFieldsInUse).",
			defaultUser: ptr(ownerA), gates: &[2]bool{false, true}, old: ptr(old),
		})
	}
	// [validation.user]: 0..2147483647, at admission.
	for _, u := range []int64{-1, 0, 2147483647, 2147483648} {
		specs = append(specs,
			ownerSpec{
				name:        fmt.Sprintf("with defaultUser %d at admission, %s", u, userGates(on)),
				desc:        "KEP-5936 validateUserField: a uid within 0..2147483647.",
				defaultUser: ptr(u), gates: on, admissionOnly: true,
			},
			ownerSpec{
				name:          fmt.Sprintf("with user %d on the item password at admission, %s", u, userGates(on)),
				desc:          "KEP-5936 validateUserField on an item (a downwardAPI item is reported at its source's path).",
				items:         []ownedItem{{key: "password", path: "password", user: ptr(u)}},
				gates:         on,
				admissionOnly: true,
			},
		)
	}
	specs = append(specs,
		ownerSpec{
			name:        fmt.Sprintf("with defaultUser %d and user -1 on the item password at admission, %s", int64(-5), userGates(&[2]bool{false, true})),
			desc:        "KEP-5936: dropping comes before validation: an apiserver without the gate drops out-of-range users and admits the pod.",
			defaultUser: ptr[int64](-5), gates: &[2]bool{false, true}, admissionOnly: true,
			items: []ownedItem{{key: "password", path: "password", user: ptr[int64](-1)}},
		},
		ownerSpec{
			name:        fmt.Sprintf("with defaultUser 2147483647, %s", userGates(on)),
			desc:        "KEP-5936: the highest valid uid owns the files.",
			defaultUser: ptr[int64](2147483647), gates: on,
		},
	)
	return specs
}

// tokenOwnerCases: [atomicwriter.token-owner] a projected serviceAccountToken's owner and mode.
func tokenOwnerCases() []*framework.Case {
	on := gates(framework.GateAtomicWriteVolumeUserFields, true, true)
	build := func(name, desc string, tokenUser, defaultUser *int64, fsg bool) *framework.Case {
		pod := podOf(volume("token", corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			DefaultMode: ptr[int32](0644), DefaultUser: defaultUser,
			Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr[int64](3600), User: tokenUser}}},
		}}))
		pod.Spec.ServiceAccountName = "default"
		if fsg {
			withFSGroup(pod, fsGroup)
		}
		return &framework.Case{
			Name: "projected serviceAccountToken " + name, Area: framework.AreaAtomicWriter, Profile: framework.ProfileAlpha,
			Labels: []string{LabelKEP5936}, Description: desc, Pod: pod, Gates: on,
		}
	}
	return []*framework.Case{
		build(fmt.Sprintf("with user %d and defaultUser %d, AtomicWriteVolumeUserFields both gates on", ownerB, ownerA),
			"KEP-5936 projected.go resolveFsUser: the token's user wins; a token with an owner is 0600 whatever defaultMode says.", ptr(ownerB), ptr(ownerA), false),
		build(fmt.Sprintf("with defaultUser %d and fsGroup %d, AtomicWriteVolumeUserFields both gates on", ownerA, fsGroup),
			"KEP-5936: the token takes defaultUser; 0600, which the walk makes 0640 with group fsGroup.", nil, ptr(ownerA), true),
		build("without user fields, AtomicWriteVolumeUserFields both gates on",
			"KEP-5936: without an owner and without fsGroup the token keeps defaultMode.", nil, nil, false),
		build("with user -1 at admission, AtomicWriteVolumeUserFields both gates on",
			"KEP-5936 validateUserField on a token's user.", ptr[int64](-1), nil, false),
	}
}

func ownerCases() []*framework.Case {
	var cases []*framework.Case
	for _, s := range ownerSpecs() {
		for _, t := range awTypes {
			cases = append(cases, s.build(t.name))
		}
	}
	return append(append(cases, tokenOwnerCases()...), sourceUpdateCases()...)
}

// updateSpec is one generated case with an updateSources step ([steps.update-sources]).
type updateSpec struct {
	name, desc  string
	defaultUser *int64
	gates       *[2]bool // AtomicWriteVolumeUserFields; nil: a conformance case without it
	fsGroup     bool
	before      []framework.Step // steps before the update
	data        map[string]string
}

// updatedData is the new data of both objects of awSources.
func updatedData(data map[string]string) map[string]map[string]string {
	return map[string]map[string]string{"secret/creds": data, "configmap/settings": data}
}

func (s updateSpec) build(typ string) *framework.Case {
	c := ownerSpec{name: s.name, desc: s.desc, defaultUser: s.defaultUser, gates: s.gates, fsGroup: s.fsGroup}.build(typ)
	if s.gates == nil {
		c.Profile, c.Labels = framework.ProfileConformance, nil
	}
	c.After = append(append([]framework.Step{}, s.before...), framework.Step{UpdateSources: updatedData(s.data)})
	return c
}

func updateSpecs() []updateSpec {
	setKubelet := func(v bool) framework.Step {
		return framework.Step{SetGates: &framework.Gates{Kubelet: map[string]bool{framework.GateAtomicWriteVolumeUserFields: v}}}
	}
	changed := map[string]string{"username": "admin", "password": "s3cret"}
	return []updateSpec{
		{
			name: "after its source lost the key password",
			desc: "An update whose payload lost a path removes its top-level symlink (removeUserVisiblePaths) and the old timestamp dir.",
			data: map[string]string{"username": "admin"},
		},
		{
			name: "after its source gained the key token",
			desc: "An update whose payload gained a path makes its top-level symlink; the existing ones are kept.",
			data: map[string]string{"username": "admin", "password": "hunter2", "token": "t0k3n"},
		},
		{
			name:        fmt.Sprintf("with defaultUser %d created with the kubelet gate off, the gate turned on and a restart, then its source's password changed", ownerA),
			desc:        "KEP-5936: the restart writes nothing (files root's); the update writes new files owned by uid 1001, but the existing top-level symlinks are not made again and stay root's.",
			defaultUser: ptr(ownerA), gates: &[2]bool{true, false}, before: []framework.Step{setKubelet(true), restart}, data: changed,
		},
		{
			name:        fmt.Sprintf("with defaultUser %d created with the kubelet gate off, the gate turned on and a restart, then an update with the same data", ownerA),
			desc:        "KEP-5936: an update that changes no content writes nothing (shouldWritePayload compares contents, not owners): the files stay root's.",
			defaultUser: ptr(ownerA), gates: &[2]bool{true, false}, before: []framework.Step{setKubelet(true), restart},
			data: map[string]string{"username": "admin", "password": "hunter2"},
		},
		{
			name:        fmt.Sprintf("with defaultUser %d and fsGroup %d, then its source gained the key token, %s", ownerA, fsGroup, userGates(&[2]bool{true, true})),
			desc:        "KEP-5936: the new file and its new top-level symlink are owned by defaultUser; the walk runs again.",
			defaultUser: ptr(ownerA), gates: &[2]bool{true, true}, fsGroup: true,
			data: map[string]string{"username": "admin", "password": "hunter2", "token": "t0k3n"},
		},
		{
			name:        fmt.Sprintf("with defaultUser %d created with both gates on, the kubelet gate turned off and a restart, then its source's password changed", ownerA),
			desc:        "KEP-5936: the next write after the kubelet lost the gate makes root-owned files; the symlinks keep uid 1001.",
			defaultUser: ptr(ownerA), gates: &[2]bool{true, true}, before: []framework.Step{setKubelet(false), restart}, data: changed,
		},
	}
}

func sourceUpdateCases() []*framework.Case {
	var cases []*framework.Case
	for _, s := range updateSpecs() {
		for _, t := range awTypes {
			cases = append(cases, s.build(t.name))
		}
	}
	return cases
}

// ownerSkewPod is the pod of the KEP-5936 skew cells: a secret whose files are owned by
// defaultUser, but password by its item's user.
func ownerSkewPod() *corev1.Pod {
	return podOf(volume("secret", ownedSource("secret", nil, ptr(ownerA),
		[]ownedItem{{key: "username", path: "username"}, {key: "password", path: "password", user: ptr(ownerB)}})))
}

// userCell is the AtomicWriteVolumeUserFields gate of the two components.
func userCell(c cell) framework.Gates {
	return gates(framework.GateAtomicWriteVolumeUserFields, c.apiserver, c.kubelet)
}

// userSteps moves the AtomicWriteVolumeUserFields gates from one cell to the next, as
// cell.steps does for EmptyDirVolumeMode.
func userSteps(from, to cell) []framework.Step {
	var s []framework.Step
	if from.apiserver != to.apiserver {
		s = append(s, framework.Step{SetGates: &framework.Gates{APIServer: map[string]bool{framework.GateAtomicWriteVolumeUserFields: to.apiserver}}})
	}
	if from.kubelet != to.kubelet {
		s = append(s,
			framework.Step{SetGates: &framework.Gates{Kubelet: map[string]bool{framework.GateAtomicWriteVolumeUserFields: to.kubelet}}},
			restart)
	}
	return s
}

// ownerSkewCases: KEP-5936's gate through an upgrade, downgrade and re-upgrade (the first of
// sequences): a pod created in each phase keeps the owners it got, through later flips and
// kubelet restarts, since its payload never changes ([atomicwriter.unchanged]).
func ownerSkewCases() []*framework.Case {
	seq := sequences[0]
	var cases []*framework.Case
	for i, created := range seq.phases {
		var after []framework.Step
		for j := i + 1; j < len(seq.phases); j++ {
			after = append(after, userSteps(seq.phases[j-1], seq.phases[j])...)
		}
		cases = append(cases, &framework.Case{
			Name:        fmt.Sprintf("secret volume with defaultUser %d and user %d on the item password through AtomicWriteVolumeUserFields %s, created %s", ownerA, ownerB, seq.name, seq.words[i]),
			Area:        framework.AreaSkew,
			Profile:     framework.ProfileAlpha,
			Labels:      []string{LabelKEP5936},
			Description: "KEP-5936 version skew: the owners a pod's files got when they were written stay through later gate changes and kubelet restarts; an apiserver without the gate dropped the fields at creation.",
			Gates:       userCell(created),
			Pod:         ownerSkewPod(),
			Sources:     awSources(),
			After:       after,
		})
	}
	return cases
}

// ownerReleaseCases: KEP-5936 in the release-skew matrix (docs/spec.md "Releases",
// releaseVariants): an apiserver before v1.37 meets defaultUser and user as unknown fields
// (warned about and gone, or the request rejected under strict field validation); a kubelet
// before v1.37 never sees them.
func ownerReleaseCases() []*framework.Case {
	var cases []*framework.Case
	for _, v := range releaseVariants(framework.GateAtomicWriteVolumeUserFields, "AtomicWriteVolumeUserFields", "the fields") {
		cases = append(cases, v.cell(&framework.Case{
			Name: fmt.Sprintf("secret volume with defaultUser %d and user %d on the item password, %s, kubelet %s", ownerA, ownerB, v.words, v.releases.Kubelet),
			Area: framework.AreaSkew, Profile: framework.ProfileAlpha, Labels: []string{LabelKEP5936},
			Description: "Release skew (KEP-5936): a component of a release without the fields behaves as with the gate off; the kubelet's files stay root's.",
			Pod:         ownerSkewPod(), Sources: awSources(),
		}))
	}
	return cases
}
