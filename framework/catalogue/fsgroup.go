package catalogue

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
)

// blogModes are the file modes of the blog's table (seed 003: test1..test6).
var blogModes = []uint32{0644, 0000, 0410, 0111, 0440, 0660}

// fixtureDriver is the flexVolume driver the harness serves from Case.Storage (docs/spec.md).
const fixtureDriver = framework.FixtureDriver

// flexVolumeName is the name of the one flexVolume of a generated fsGroup pod.
const flexVolumeName = "data"

// flexPod is a pod with the fixture flexVolume "data" and fsGroup 2000 (unless noFSGroup).
func flexPod(readOnly bool, policy *corev1.PodFSGroupChangePolicy, noFSGroup bool) *corev1.Pod {
	p := podOf(volume(flexVolumeName, corev1.VolumeSource{FlexVolume: &corev1.FlexVolumeSource{Driver: fixtureDriver, ReadOnly: readOnly}}))
	if !noFSGroup {
		withFSGroup(p, fsGroup)
		p.Spec.SecurityContext.FSGroupChangePolicy = policy
	}
	return p
}

func chmod(path string, mode uint32) framework.Step {
	return framework.Step{Chmod: &framework.Chmod{Volume: flexVolumeName, Path: path, Mode: mode}}
}

var restart = framework.Step{RestartKubelet: true}

func fsGroupCases() []*framework.Case {
	var cases []*framework.Case
	for _, m := range blogModes {
		cases = append(cases, blogCases(m)...)
	}
	return append(cases, fsGroupWalkCases()...)
}

// blogCases are one row of the blog's table (seed 003): the rw mask on a flexVolume at first
// set-up and again after a container restored the mode and the kubelet restarted, and the ro
// mask (0440) on a secret (v1.37 volume_linux.go rwMask / roMask).
func blogCases(m uint32) []*framework.Case {
	file := []framework.File{{Path: "file", Mode: m}}
	flex := func(name string, after []framework.Step) *framework.Case {
		return &framework.Case{
			Name:        name,
			Area:        framework.AreaFSGroup,
			Profile:     framework.ProfileConformance,
			Description: "Seed 003: SetVolumeOwnership ORs 0660 into every file of a writable flexVolume on every SetUp, so a kubelet restart undoes a container's chmod.",
			Pod:         flexPod(false, nil, false),
			Storage:     map[string][]framework.File{flexVolumeName: file},
			After:       after,
		}
	}
	secret := &framework.Case{
		Name:        fmt.Sprintf("fsGroup %d ORs 0440 into a secret file with defaultMode %s", fsGroup, octal(m)),
		Area:        framework.AreaFSGroup,
		Profile:     framework.ProfileConformance,
		Description: "Seed 003: read-only volumes get the 0440 mask instead of 0660.",
		Pod: withFSGroup(podOf(volume("secret", corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: "blog", DefaultMode: ptr(int32(m)),
		}})), fsGroup),
		Sources: map[string]map[string]string{"secret/blog": {"file": "content"}},
	}
	return []*framework.Case{
		flex(fmt.Sprintf("fsGroup %d ORs 0660 into a %s file of a flexVolume at first set-up", fsGroup, octal(m)), nil),
		flex(fmt.Sprintf("fsGroup %d ORs 0660 into a %s file of a flexVolume after a kubelet restart", fsGroup, octal(m)),
			[]framework.Step{chmod("file", m), restart}),
		secret,
	}
}

// fsGroupWalkCases are the rest of the walk's rules (v1.37 volume_linux.go walkDeep and
// skipPermissionChange; seed 003).
func fsGroupWalkCases() []*framework.Case {
	always, onRootMismatch := corev1.FSGroupChangeAlways, corev1.FSGroupChangeOnRootMismatch
	rows := []struct {
		name, desc string
		pod        *corev1.Pod
		storage    []framework.File
		after      []framework.Step
	}{
		{
			name:    fmt.Sprintf("fsGroup %d adds setgid and 0110 to a 0700 directory of a flexVolume", fsGroup),
			desc:    "Directories get the mask plus 0110 and setgid, so new files inherit the group.",
			pod:     flexPod(false, nil, false),
			storage: []framework.File{{Path: "sub", Dir: true, Mode: 0700}, {Path: "sub/file", Mode: 0600}},
		},
		{
			name:    fmt.Sprintf("fsGroup %d leaves a symlink in a flexVolume untouched", fsGroup),
			desc:    "Symlinks are never followed and never chmod'ed (lchown only); the target is walked as itself.",
			pod:     flexPod(false, nil, false),
			storage: []framework.File{{Path: "file", Mode: 0600}, {Path: "link", Symlink: "file"}},
		},
		{
			name:    "fsGroupChangePolicy OnRootMismatch skips the walk of a flexVolume whose root matches, after a kubelet restart",
			desc:    "OnRootMismatch: the first SetUp walks and fixes the root; after a restart the root matches and the container's chmod stays.",
			pod:     flexPod(false, &onRootMismatch, false),
			storage: []framework.File{{Path: "file", Mode: 0644}},
			after:   []framework.Step{chmod("file", 0400), restart},
		},
		{
			name:    "fsGroupChangePolicy OnRootMismatch walks a flexVolume whose root lost setgid, after a kubelet restart",
			desc:    "OnRootMismatch: a root without setgid and the mask does not match, so the whole volume is walked again.",
			pod:     flexPod(false, &onRootMismatch, false),
			storage: []framework.File{{Path: "file", Mode: 0644}},
			after:   []framework.Step{chmod(".", 0750), chmod("file", 0400), restart},
		},
		{
			name:    "fsGroupChangePolicy Always walks a flexVolume again after a kubelet restart",
			desc:    "Always (the default): every SetUp walks the whole volume.",
			pod:     flexPod(false, &always, false),
			storage: []framework.File{{Path: "file", Mode: 0644}},
			after:   []framework.Step{chmod("file", 0400), restart},
		},
		{
			name:    fmt.Sprintf("fsGroup %d does not walk a readOnly flexVolume", fsGroup),
			desc:    "Seed 003 flexVolumeMounter.SetUpAt: SetVolumeOwnership only when the volume is not readOnly.",
			pod:     flexPod(true, nil, false),
			storage: []framework.File{{Path: "file", Mode: 0400}},
		},
		{
			name:    "a flexVolume without fsGroup keeps a 0400 file as it is after a kubelet restart",
			desc:    "Without fsGroup nothing is walked (SetVolumeOwnership returns at once).",
			pod:     flexPod(false, nil, true),
			storage: []framework.File{{Path: "file", Mode: 0400}},
			after:   []framework.Step{restart},
		},
		{
			name: fmt.Sprintf("fsGroup %d on an emptyDir without mode", fsGroup),
			desc: "emptyDir always walks (policy ignored): the root gets gid fsGroup and setgid.",
			pod:  withFSGroup(emptyDirPod(media[0], nil), fsGroup),
		},
		{
			name:  fmt.Sprintf("fsGroup %d is not applied again to an emptyDir after a kubelet restart", fsGroup),
			desc:  "A second SetUp of a ready emptyDir does nothing: the container's chmod of the root stays.",
			pod:   withFSGroup(emptyDirPod(media[0], nil), fsGroup),
			after: []framework.Step{{Chmod: &framework.Chmod{Volume: emptyDirVolume, Path: ".", Mode: 0755}}, restart},
		},
	}
	var cases []*framework.Case
	for _, r := range rows {
		c := &framework.Case{Name: r.name, Area: framework.AreaFSGroup, Profile: framework.ProfileConformance, Description: r.desc, Pod: r.pod, After: r.after}
		if r.storage != nil {
			c.Storage = map[string][]framework.File{flexVolumeName: r.storage}
		}
		cases = append(cases, c)
	}
	return cases
}
