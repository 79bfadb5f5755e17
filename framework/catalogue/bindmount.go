package catalogue

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
)

// bindMountCases: docs/spec.md "Bind mount options (KEP-5855)", alpha in v1.37 and without an
// upstream e2e: the API's rules, the field dropped with the apiserver's gate off, the kubelet's
// refusal when it does not declare the node feature (its gate off, or a runtime without
// mount_options: containerd 2.4.2, kind), and what noexec does to a container where a runtime
// applies it (on this machine's targets, the harness playing such a runtime). Every case sets
// the gate on both components, so each is a v1.37 cell only.
func bindMountCases() []*framework.Case {
	storage := []framework.File{{Path: ".", Dir: true, Mode: 0755}, {Path: "tool", Mode: 0755}, {Path: "plain", Mode: 0644}}
	pod := func(opts ...string) *corev1.Pod {
		p := mountedAs(flexPod(false, nil, true), nil, false)
		p.Spec.Containers[0].VolumeMounts[0].BindMountOptions = opts
		return p
	}
	exec := func(name string, as framework.User, path string) framework.Probe {
		return framework.Probe{Name: name, Volume: flexVolumeName, As: as, Op: framework.OpExec, Path: path}
	}
	probes := []framework.Probe{
		exec("root execs tool (0755)", asRoot, "tool"),
		exec("uid 1003 execs tool (0755)", asOther, "tool"),
		exec("root execs plain (0644: no x bit)", asRoot, "plain"),
		exec("uid 1003 execs plain (0644)", asOther, "plain"),
		readOnlyProbe(flexVolumeName, "uid 1003 reads tool", asOther, framework.OpRead, "tool"),
		readOnlyProbe(flexVolumeName, "root creates new", asRoot, framework.OpCreate, "new"),
	}
	mk := func(title, desc string, p *corev1.Pod, apiserver, kubelet, lacks bool) *framework.Case {
		c := &framework.Case{Name: "bind mount options: " + title, Area: framework.AreaMounts, Profile: framework.ProfileAlpha,
			Description: desc, Pod: p, Probes: probes, Storage: map[string][]framework.File{flexVolumeName: storage},
			Gates: framework.Gates{APIServer: map[string]bool{framework.GateVolumeBindMountOptions: apiserver}, Kubelet: map[string]bool{framework.GateVolumeBindMountOptions: kubelet}}}
		if lacks {
			c.RuntimeLacks = []framework.RuntimeFeature{framework.RuntimeMountOptions}
		}
		return c
	}
	cases := []*framework.Case{
		mk("noexec on a runtime that applies it: exec refused, the rest as before",
			"[mounts.bind-mount-options] the kubelet declares VolumeBindMountOptions (gate on, runtime mount_options) and admits the pod; makeMounts passes the options, the runtime mounts the volume noexec: execve is EACCES (path_noexec) for root too; reads and writes are unchanged.",
			pod("noexec"), true, true, false),
		mk("nodev and nosuid: exec still allowed",
			"[mounts.bind-mount-options] only noexec refuses exec: tool runs (its empty body is ENOEXEC, the permission granted), plain has no x bit (EACCES, root too).",
			pod("nodev", "nosuid"), true, true, false),
		mk("every option, gate on, a runtime without mount_options: rejected",
			"[mounts.bind-mount-options] the runtime reports no mount_options (containerd 2.4.2), so the kubelet does not declare VolumeBindMountOptions, and its declared-features admit handler rejects the pod: PodFeatureUnsupported, before any volume.",
			pod("noexec", "nodev", "nosuid"), true, true, true),
		mk("noexec, the kubelet's gate off: rejected",
			"[mounts.bind-mount-options] the apiserver kept the field; a kubelet with its gate off declares nothing, and the requirement is inferred from the field alone (InferForScheduling reads no gate): rejected.",
			pod("noexec"), true, false, true),
		mk("noexec, the apiserver's gate off: dropped, exec allowed",
			"[dropping.bind-mount-options] the apiserver clears the field (dropDisabledFields) and names it in admission.dropped; the kubelet sees no options, nothing is required, the mount is plain.",
			pod("noexec"), false, true, true),
	}
	// The refusal reads every container's mounts and any option (InferForScheduling).
	second := mountedAs(flexPod(false, nil, true), nil, true)
	second.Spec.Containers[1].VolumeMounts[0].BindMountOptions = []string{"nosuid"}
	cases = append(cases,
		mk("noexec alone, a runtime without mount_options: rejected", "[mounts.bind-mount-options] one option is enough to require the node feature.", pod("noexec"), true, true, true),
		mk("nosuid on a second container's mount, a runtime without mount_options: rejected", "[mounts.bind-mount-options] the requirement is the pod's: any container's mount.", second, true, true, true),
		mk("nodev, the kubelet's gate off: rejected", "[mounts.bind-mount-options] a kubelet with its gate off declares nothing, whatever the option.", pod("nodev"), true, false, true),
	)
	// Init containers count as every container does (AllContainers; InferForScheduling reads
	// init containers too): the options of an init container's mount are dropped with the
	// apiserver's gate off, and require the node feature.
	withInit := func(opts []string, alsoMain bool) *corev1.Pod {
		p := pod()
		if alsoMain {
			p = pod("nodev")
		}
		init := *p.Spec.Containers[0].DeepCopy()
		init.Name, init.VolumeMounts[0].BindMountOptions = "init", opts
		p.Spec.InitContainers = []corev1.Container{init}
		return p
	}
	dropInit := func(title string, p, old *corev1.Pod) *framework.Case {
		c := mk(title, "[dropping.bind-mount-options] dropDisabledFields clears every container's options, init containers' included.", p, false, false, false)
		c.OldPod, c.AdmissionOnly, c.Probes, c.Storage = old, true, nil, nil
		return c
	}
	cases = append(cases,
		dropInit("an init container's noexec, the apiserver's gate off: dropped", withInit([]string{"noexec"}, false), nil),
		dropInit("an init container's and a container's options, the apiserver's gate off: both dropped", withInit([]string{"nosuid"}, true), nil),
		dropInit("update, an init container's noexec, the old pod used none, the apiserver's gate off: dropped", withInit([]string{"noexec"}, false), pod()),
		mk("only an init container's noexec, a runtime without mount_options: rejected", "[mounts.bind-mount-options] an init container's mount requires the node feature as any container's.", withInit([]string{"noexec"}, false), true, true, true),
		mk("only an init container's nosuid, the kubelet's gate off: rejected", "[mounts.bind-mount-options] an init container's mount requires the node feature as any container's.", withInit([]string{"nosuid"}, false), true, false, true),
		mk("only an init container's nodev, a runtime without mount_options: rejected", "[mounts.bind-mount-options] an init container's mount requires the node feature as any container's.", withInit([]string{"nodev"}, false), true, true, true),
	)
	// Updates: the old pod's use keeps the field (bindMountOptionsInUse), on any container.
	keep := mk("update, the old pod used bindMountOptions, the apiserver's gate off: kept",
		"[dropping.bind-mount-options] ratcheting: the old pod spec used the field, so it stays.", pod("noexec"), false, false, true)
	keep.OldPod, keep.AdmissionOnly, keep.Probes, keep.Storage, keep.RuntimeLacks = pod("nosuid"), true, nil, nil, nil
	drop := mk("update, the old pod used none, the apiserver's gate off: dropped",
		"[dropping.bind-mount-options] the old pod spec used none: cleared.", pod("noexec"), false, false, true)
	drop.OldPod, drop.AdmissionOnly, drop.Probes, drop.Storage, drop.RuntimeLacks = pod(), true, nil, nil, nil
	onUpdate := mk("update, the apiserver's gate on: kept",
		"[dropping.bind-mount-options] the gate on keeps the field on update too.", pod("noexec"), true, true, true)
	onUpdate.OldPod, onUpdate.AdmissionOnly, onUpdate.Probes, onUpdate.Storage, onUpdate.RuntimeLacks = pod(), true, nil, nil, nil
	cases = append(cases, keep, drop, onUpdate)

	// [validation.bind-mount-options]: validateBindMountOptions' table (upstream
	// TestValidateBindMountOptions) with its texts.
	bad := func(title string, p *corev1.Pod) *framework.Case {
		c := mk(title, "[validation.bind-mount-options] validateBindMountOptions: noexec, nodev, nosuid, each once; none on an image volume.", p, true, true, false)
		c.AdmissionOnly, c.Probes, c.Storage = true, nil, nil
		return c
	}
	imagePod := mountedAs(podOf(volume("img", corev1.VolumeSource{Image: &corev1.ImageVolumeSource{Reference: framework.ProbeImage, PullPolicy: corev1.PullNever}})), nil, false)
	imagePod.Spec.Containers[0].VolumeMounts[0].BindMountOptions = []string{"noexec"}
	for _, t := range []struct {
		title string
		opts  []string
	}{
		{"noexec and sync: sync NotSupported", []string{"noexec", "sync"}},
		{"noexec twice: Duplicate", []string{"noexec", "noexec"}},
		{"rw twice: NotSupported twice and Duplicate", []string{"rw", "rw"}},
		{"sync twice: NotSupported twice and Duplicate", []string{"sync", "sync"}},
		{"rw, noexec, rw: NotSupported twice and Duplicate", []string{"rw", "noexec", "rw"}},
	} {
		cases = append(cases, bad(t.title, pod(t.opts...)))
	}
	cases = append(cases, bad("on an image volume: Invalid", imagePod))
	return cases
}
