package catalogue

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
)

// The pod's FsUser (docs/spec.md [atomicwriter.token]): the owner the kubelet gives a projected
// serviceAccountToken, clusterTrustBundle or podCertificate file when every container of the pod
// runs as one uid (v1.37 pkg/volume/util FsUserFrom). Upstream's own table is
// test/e2e/auth/service_accounts.go "should set ownership and permission when RunAsUser or
// FsGroup is present" (four rows); kubernetes issue 129475 is runAsUser 0.

// The uids of the FsUser cases: the pod's one uid, another container's, and an outsider.
const (
	runAsApp   int64 = 1000
	runAsOther int64 = 1001
)

var (
	asUid1000 = framework.User{UID: runAsApp, GID: runAsApp}
	asUid1001 = framework.User{UID: runAsOther, GID: runAsOther}
)

// fsUserPod is the shape of a pod's containers and their runAsUser, the input of FsUserFrom.
type fsUserPod struct {
	name string
	// pod is the pod-level runAsUser; containers, inits the container-level ones (nil: unset),
	// one container (or init container) each.
	pod               *int64
	containers, inits []*int64
	// want is FsUserFrom's answer (nil: none).
	want *int64
}

// apply gives p the containers and securityContext of s.
func (s fsUserPod) apply(p *corev1.Pod) *corev1.Pod {
	if s.pod != nil {
		if p.Spec.SecurityContext == nil {
			p.Spec.SecurityContext = &corev1.PodSecurityContext{}
		}
		p.Spec.SecurityContext.RunAsUser = ptr(*s.pod)
	}
	container := func(name string, u *int64) corev1.Container {
		c := corev1.Container{Name: name, Image: "volperm/probe"}
		if u != nil {
			c.SecurityContext = &corev1.SecurityContext{RunAsUser: ptr(*u)}
		}
		return c
	}
	for i, u := range s.inits {
		p.Spec.InitContainers = append(p.Spec.InitContainers, container(fmt.Sprintf("init-%d", i), u))
	}
	for i, u := range s.containers {
		p.Spec.Containers = append(p.Spec.Containers, container(fmt.Sprintf("app-%d", i), u))
	}
	return p
}

// fsUserShapes are the pods FsUserFrom tells apart: every container the same uid, set at pod or
// container level, and each way to have no FsUser.
func fsUserShapes() []fsUserPod {
	app, other, root := ptr(runAsApp), ptr(runAsOther), ptr[int64](0)
	return []fsUserPod{
		{name: "pod runAsUser 1000, two containers", pod: app, containers: []*int64{nil, nil}, want: app},
		{name: "no pod runAsUser, both containers runAsUser 1000", containers: []*int64{app, app}, want: app},
		{name: "pod runAsUser 0, both containers runAsUser 1000", pod: root, containers: []*int64{app, app}, want: app},
		{name: "pod runAsUser 1000, one container runAsUser 1001", pod: app, containers: []*int64{nil, other}},
		{name: "containers runAsUser 1000 and 1001", containers: []*int64{app, other}},
		{name: "one container runAsUser 1000, the other none", containers: []*int64{app, nil}},
		{name: "pod runAsUser 1000, an init container runAsUser 1001", pod: app, containers: []*int64{nil}, inits: []*int64{other}},
		{name: "containers runAsUser 1000, an init container without one", containers: []*int64{app}, inits: []*int64{nil}},
		{name: "containers and an init container runAsUser 1000", containers: []*int64{app}, inits: []*int64{app}, want: app},
		{name: "pod runAsUser 0", pod: root, containers: []*int64{nil}, want: root},
		{name: "containers without runAsUser", containers: []*int64{nil}},
	}
}

// fsUserCases is the FsUser rule over every projected source it applies to, the token table of
// upstream's e2e, and its composition with defaultMode, fsGroup, KEP-5936's fields, other
// sources of the same volume and a kubelet restart.
func fsUserCases() []*framework.Case {
	const vol = "creds"
	tokenSrc := func(user *int64) corev1.VolumeProjection {
		return corev1.VolumeProjection{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr[int64](3600), User: user}}
	}
	bundleSrc := corev1.VolumeProjection{ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{Name: ptr("volperm-bundle"), Path: "ca.pem"}}
	certSrc := corev1.VolumeProjection{PodCertificate: &corev1.PodCertificateProjection{SignerName: "example.com/volperm", KeyType: "ED25519",
		CredentialBundlePath: "credentials.pem", KeyPath: "key.pem", CertificateChainPath: "chain.pem"}}
	projected := func(dm *int32, du *int64, srcs ...corev1.VolumeProjection) *corev1.Pod {
		p := podOf(volume(vol, corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{DefaultMode: dm, DefaultUser: du, Sources: srcs}}))
		p.Spec.ServiceAccountName = "default"
		return p
	}
	read := func(as framework.User, file string) framework.Probe {
		return framework.Probe{Name: fmt.Sprintf("uid %d reads %s", as.UID, file), Volume: vol, As: as, Op: framework.OpRead, Path: file}
	}
	type spec struct {
		name, desc string
		pod        *corev1.Pod
		profile    framework.Profile
		gates      framework.Gates
		probes     []framework.Probe
		after      []framework.Step
		sources    map[string]map[string]string
	}
	var specs []spec
	// Every shape with the token alone, defaultMode 0644: the owner and 0600, or 0644 root.
	for _, s := range fsUserShapes() {
		owner := "root, defaultMode 0644"
		if s.want != nil {
			owner = fmt.Sprintf("owned by %d, 0600", *s.want)
		}
		var probes []framework.Probe
		if s.want != nil && *s.want == runAsApp {
			// As the pod's own uid only, so that a cluster runs it (needs.FsUserProbes).
			probes = []framework.Probe{read(asUid1000, "token")}
		}
		specs = append(specs, spec{
			name:   fmt.Sprintf("projected serviceAccountToken, %s: %s", s.name, owner),
			desc:   "FsUserFrom: every container, init ones included, the container's runAsUser over the pod's; one uid owns the token (0600), anything else leaves it root's with defaultMode (docs/spec.md [atomicwriter.token]).",
			pod:    s.apply(projected(ptr[int32](0644), nil, tokenSrc(nil))),
			probes: probes,
		})
	}
	app := fsUserShapes()[0]
	none := fsUserShapes()[len(fsUserShapes())-1]
	// Upstream's e2e table (service_accounts.go): runAsUser, fsGroup, both, neither.
	for _, row := range []struct {
		name     string
		shape    fsUserPod
		fsg      bool
		want     string
		probesAs []framework.User
	}{
		{"runAsUser 1000", app, false, "-rw------- 1000:0", []framework.User{asUid1000}},
		{"fsGroup 2000", none, true, "-rw-r----- 0:2000", []framework.User{painMember, asUid1000}},
		{"runAsUser 1000 and fsGroup 2000", app, true, "-rw-r----- 1000:2000", []framework.User{{UID: runAsApp, GID: runAsApp, Groups: []int64{fsGroup}}}},
		{"neither runAsUser nor fsGroup", none, false, "-rw-r--r-- 0:0", []framework.User{asUid1001}},
	} {
		pod := row.shape.apply(projected(nil, nil, tokenSrc(nil)))
		if row.fsg {
			withFSGroup(pod, fsGroup)
		}
		var probes []framework.Probe
		for _, u := range row.probesAs {
			probes = append(probes, read(u, "token"))
		}
		specs = append(specs, spec{
			name:   fmt.Sprintf("upstream e2e token table: %s gives %s", row.name, row.want),
			desc:   "test/e2e/auth/service_accounts.go's four rows: the token is 0600 owned by runAsUser, 0640 with fsGroup's group, both, or defaultMode root's (docs/spec.md [atomicwriter.token]).",
			pod:    pod,
			probes: probes,
		})
	}
	root := fsUserShapes()[9]
	others := app.apply(projected(nil, nil, tokenSrc(nil)))
	withFSGroup(others, fsGroup)
	specs = append(specs,
		spec{name: "projected serviceAccountToken, runAsUser 1000: uid 1001 cannot read it",
			desc: "the token is 0600 and 1000's: another non-root uid is refused (docs/spec.md [atomicwriter.token]).",
			pod:  app.apply(projected(nil, nil, tokenSrc(nil))), probes: []framework.Probe{read(asUid1001, "token")}},
		spec{name: "projected serviceAccountToken, runAsUser 1000 and fsGroup 2000: uid 1004 of fsGroup reads it, uid 1001 does not",
			desc: "0640 1000:2000 after the walk: fsGroup's members read it, others do not (docs/spec.md [atomicwriter.token]).",
			pod:  others, probes: []framework.Probe{read(painMember, "token"), read(asUid1001, "token")}},
		spec{name: "projected serviceAccountToken, runAsUser 0 and defaultMode 0444: 0600 root's, defaultMode ignored",
			desc: "kubernetes issue 129475: uid 0 is an FsUser, so the token is 0600 and uid 1001 cannot read it although defaultMode says 0444 (docs/spec.md [atomicwriter.token]).",
			pod:  root.apply(projected(ptr[int32](0444), nil, tokenSrc(nil))), probes: []framework.Probe{read(asUid1001, "token")}},
		spec{name: "projected serviceAccountToken, runAsUser 1000 and defaultMode 0444: 0600 owned by 1000, defaultMode ignored",
			desc: "with an FsUser the token is 0600 whatever defaultMode says: uid 1001 cannot read it (docs/spec.md [atomicwriter.token]).",
			pod:  app.apply(projected(ptr[int32](0444), nil, tokenSrc(nil))), probes: []framework.Probe{read(asUid1000, "token"), read(asUid1001, "token")}},
		spec{name: "projected serviceAccountToken, runAsUser 1000 and defaultMode 0400, after a kubelet restart",
			desc: "a restart with the same token writes nothing: the owner and 0600 stay (docs/spec.md [atomicwriter.unchanged]).",
			pod:  app.apply(projected(ptr[int32](0400), nil, tokenSrc(nil))), after: []framework.Step{restart}},
		spec{name: "projected token, secret and downwardAPI with runAsUser 1000: only the token is 1000's",
			desc: "FsUser goes to the token only: the secret's and the downwardAPI's files stay root's with defaultMode (docs/spec.md [atomicwriter.token], [atomicwriter.layout]).",
			pod: app.apply(projected(ptr[int32](0644), nil, tokenSrc(nil),
				corev1.VolumeProjection{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "app"}}},
				corev1.VolumeProjection{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "name", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}}}})),
			probes:  []framework.Probe{read(asUid1001, "username"), read(asUid1001, "token")},
			sources: map[string]map[string]string{"secret/app": {"username": "admin"}}},
	)
	// clusterTrustBundle and podCertificate: the same rule (projected.go collectData).
	for _, src := range []struct {
		name string
		src  corev1.VolumeProjection
		file string
	}{{"clusterTrustBundle", bundleSrc, "ca.pem"}, {"podCertificate", certSrc, "key.pem"}} {
		for _, row := range []struct {
			name  string
			shape fsUserPod
			fsg   bool
			want  string
		}{
			{"runAsUser 1000", app, false, "0600 owned by 1000"},
			{"fsGroup 2000", none, true, "0640 root:2000"},
			{"runAsUser 1000 and fsGroup 2000", app, true, "0640 1000:2000"},
			{"containers runAsUser 1000 and 1001", fsUserShapes()[4], false, "defaultMode 0444 root's"},
		} {
			pod := row.shape.apply(projected(ptr[int32](0444), nil, src.src))
			if row.fsg {
				withFSGroup(pod, fsGroup)
			}
			specs = append(specs, spec{
				name:   fmt.Sprintf("projected %s, %s: %s", src.name, row.name, row.want),
				desc:   "projected.go collectData gives clusterTrustBundle and podCertificate files the token's owner and mode rule (docs/spec.md [atomicwriter.token]).",
				pod:    pod,
				probes: []framework.Probe{read(asUid1001, src.file)},
			})
		}
	}
	// KEP-5936: the token's user and the volume's defaultUser win over the FsUser, only with the
	// kubelet's gate on.
	on, kubeletOff := gates(framework.GateAtomicWriteVolumeUserFields, true, true), gates(framework.GateAtomicWriteVolumeUserFields, true, false)
	specs = append(specs,
		spec{name: fmt.Sprintf("projected serviceAccountToken, runAsUser 1000 and user %d, AtomicWriteVolumeUserFields both gates on: owned by %d", ownerB, ownerB),
			desc:    "projected.go resolveFsUser: the token's user over the pod's FsUser (docs/spec.md [atomicwriter.token-owner]).",
			pod:     app.apply(projected(ptr[int32](0644), nil, tokenSrc(ptr(ownerB)))),
			profile: framework.ProfileAlpha, gates: on, probes: []framework.Probe{read(asUid1000, "token")}},
		spec{name: fmt.Sprintf("projected serviceAccountToken, runAsUser 1000 and defaultUser %d, AtomicWriteVolumeUserFields both gates on: owned by %d", ownerA, ownerA),
			desc:    "projected.go resolveFsUser: the volume's defaultUser over the pod's FsUser (docs/spec.md [atomicwriter.token-owner]).",
			pod:     app.apply(projected(ptr[int32](0644), ptr(ownerA), tokenSrc(nil))),
			profile: framework.ProfileAlpha, gates: on},
		spec{name: fmt.Sprintf("projected serviceAccountToken, runAsUser 1000 and user %d, AtomicWriteVolumeUserFields kubelet gate off: owned by 1000", ownerB),
			desc:    "with the kubelet's gate off resolveFsUser is the pod's FsUser alone: the stored user is ignored (docs/spec.md [atomicwriter.token-owner]).",
			pod:     app.apply(projected(ptr[int32](0644), nil, tokenSrc(ptr(ownerB)))),
			profile: framework.ProfileAlpha, gates: kubeletOff},
		spec{name: fmt.Sprintf("projected clusterTrustBundle, runAsUser 1000 and user %d, AtomicWriteVolumeUserFields both gates on: owned by %d", ownerB, ownerB),
			desc: "projected.go resolveFsUser: the clusterTrustBundle's user over the pod's FsUser (docs/spec.md [atomicwriter.token-owner]).",
			pod: app.apply(projected(ptr[int32](0644), nil, corev1.VolumeProjection{ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{
				Name: ptr("volperm-bundle"), Path: "ca.pem", User: ptr(ownerB)}})),
			profile: framework.ProfileAlpha, gates: on},
	)
	var out []*framework.Case
	for _, s := range specs {
		profile := s.profile
		if profile == "" {
			profile = framework.ProfileConformance
		}
		var labels []string
		if profile == framework.ProfileAlpha {
			labels = append(labels, LabelKEP5936)
		}
		out = append(out, &framework.Case{
			Name: s.name, Area: framework.AreaAtomicWriter, Profile: profile, Description: s.desc, Labels: labels,
			Gates: s.gates, Pod: s.pod, Probes: s.probes, After: s.after,
			Sources: s.sources,
		})
	}
	return out
}
