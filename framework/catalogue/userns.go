package catalogue

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
)

// The sources of docs/spec.md "User namespaces (KEP-127)", as the cases' descriptions cite them.
const (
	srcHostUsers = "v1.37 pkg/apis/core/validation/validation.go validateHostUsers (from ValidatePodSpec)"
	srcRatchet   = "v1.37 pkg/api/pod/util.go GetValidationOptionsFromPodSpecAndMeta"
	srcProcMount = "v1.37 pkg/apis/core/validation/validation.go ValidateSecurityContext (from validateContainerCommon)"
	srcWindows   = "v1.37 pkg/apis/core/validation/validation.go validateWindows (from ValidatePodSpec's validateOS)"
)

// hostUsersSetting is one value of spec.hostUsers, as a case sets it and a name words it.
type hostUsersSetting struct {
	v      *bool
	phrase string
}

var hostUsersSettings = []hostUsersSetting{
	{ptr(false), "hostUsers false"},
	{ptr(true), "hostUsers true"},
	{nil, "hostUsers unset"},
}

// blockVolume is the persistentVolumeClaim volume a container's volumeDevices names: volumeDevices
// need a PVC (or ephemeral) volume (ValidateVolumeDevices); an admission-only case never binds it.
var blockVolume = corev1.Volume{Name: "block", VolumeSource: corev1.VolumeSource{
	PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "block"}}}

// usernsContainer is the probe container (framework.Complete's, which a case that sets
// containers does not get) with the changes of set applied.
func usernsContainer(name string, set func(*corev1.Container)) corev1.Container {
	c := corev1.Container{Name: name, Image: framework.ProbeImage, ImagePullPolicy: corev1.PullNever}
	if set != nil {
		set(&c)
	}
	return c
}

func withDevice(c *corev1.Container) {
	c.VolumeDevices = []corev1.VolumeDevice{{Name: blockVolume.Name, DevicePath: "/dev/volperm-block"}}
}

func withProcMount(t corev1.ProcMountType) func(*corev1.Container) {
	return func(c *corev1.Container) { c.SecurityContext = &corev1.SecurityContext{ProcMount: &t} }
}

// hostField is one field validateHostUsers forbids with hostUsers false: how a pod sets it and
// the error it gets.
type hostField struct {
	phrase string
	set    func(*corev1.Pod)
	err    string
}

var hostFields = []hostField{
	{"hostNetwork", func(p *corev1.Pod) { p.Spec.HostNetwork = true }, "spec.hostNetwork: Forbidden"},
	{"hostPID", func(p *corev1.Pod) { p.Spec.HostPID = true }, "spec.HostPID: Forbidden"},
	{"hostIPC", func(p *corev1.Pod) { p.Spec.HostIPC = true }, "spec.HostIPC: Forbidden"},
	{"volumeDevices in a container", func(p *corev1.Pod) {
		p.Spec.Volumes = append(p.Spec.Volumes, blockVolume)
		p.Spec.Containers = append(p.Spec.Containers, usernsContainer("probe", withDevice))
	}, "spec.containers[0].volumeDevices: Forbidden"},
	{"volumeDevices in an init container", func(p *corev1.Pod) {
		p.Spec.Volumes = append(p.Spec.Volumes, blockVolume)
		p.Spec.InitContainers = append(p.Spec.InitContainers, usernsContainer("init", withDevice))
	}, "spec.initContainers[0].volumeDevices: Forbidden"},
}

// usernsPod is a pod with hostUsers u and the fields sets apply.
func usernsPod(u *bool, sets ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{Spec: corev1.PodSpec{HostUsers: u}}
	for _, set := range sets {
		set(p)
	}
	return p
}

func usernsCase(name, description string, pod *corev1.Pod) *framework.Case {
	return &framework.Case{Name: name, Area: framework.AreaUserNS, Profile: framework.ProfileConformance,
		AdmissionOnly: true, Description: description, Pod: pod}
}

// usernsCases are the API rules of user namespaces (docs/spec.md "User namespaces (KEP-127)"),
// at admission only: validateHostUsers' four fields alone and together under each hostUsers
// value, its two ratchets on an update, every volume type with hostUsers false, procMount
// Unmasked, and hostUsers on a windows pod.
func usernsCases() []*framework.Case {
	var cases []*framework.Case
	// [validation.host-users]: each field alone, under each value of hostUsers.
	for _, f := range hostFields {
		for _, u := range hostUsersSettings {
			name := fmt.Sprintf("user namespaces: %s with %s is allowed", u.phrase, f.phrase)
			desc := fmt.Sprintf("%s checks nothing unless hostUsers is false: %s with %s is admitted.", srcHostUsers, f.phrase, u.phrase)
			if u.v != nil && !*u.v {
				name = fmt.Sprintf("user namespaces: %s with %s is rejected (%s)", u.phrase, f.phrase, f.err)
				desc = fmt.Sprintf("%s: with hostUsers false, %s is `%s: when `hostUsers` is false`.", srcHostUsers, f.phrase, f.err)
			}
			cases = append(cases, usernsCase(name, desc, usernsPod(u.v, f.set)))
		}
	}
	all := func(p *corev1.Pod) {
		for _, f := range hostFields {
			f.set(p)
		}
	}
	for _, u := range hostUsersSettings[:2] {
		name := fmt.Sprintf("user namespaces: %s with hostNetwork, hostPID, hostIPC and volumeDevices in an init container and a container is allowed", u.phrase)
		desc := fmt.Sprintf("%s checks nothing with hostUsers true: every field it could forbid is admitted together.", srcHostUsers)
		if !*u.v {
			name = fmt.Sprintf("user namespaces: %s with hostNetwork, hostPID, hostIPC and volumeDevices in an init container and a container gets all five errors", u.phrase)
			desc = fmt.Sprintf("%s: the errors add up, in upstream's order hostNetwork, HostPID, HostIPC, then volumeDevices init containers first (the Observation sorts them).", srcHostUsers)
		}
		cases = append(cases, usernsCase(name, desc, usernsPod(u.v, all)))
	}

	// [validation.host-users]: volumes are not checked.
	cases = append(cases, usernsCase("user namespaces: hostUsers false without a volume is allowed",
		srcHostUsers+": hostUsers false alone is admitted.", usernsPod(ptr(false))))
	for _, v := range usernsVolumes() {
		cases = append(cases, usernsCase(fmt.Sprintf("user namespaces: hostUsers false with a %s volume is allowed at admission", framework.VolumeType(v)),
			srcHostUsers+" checks no volume: hostUsers false with one valid "+framework.VolumeType(v)+" volume is admitted (what the node makes of it is not an admission rule).",
			usernsPod(ptr(false), func(p *corev1.Pod) { p.Spec.Volumes = []corev1.Volume{v} })))
	}

	// [validation.host-users]: the ratchets of an update (the old pod decides the options).
	hostNetwork, hostPID, hostIPC := hostFields[0].set, hostFields[1].set, hostFields[2].set
	device, initDevice := hostFields[3].set, hostFields[4].set
	updates := []struct {
		name, desc string
		old, pod   *corev1.Pod
	}{
		{"user namespaces: update of a pod that had hostUsers false with hostNetwork, keeping both, is allowed",
			srcRatchet + " useAllowUserNamespacesHostNetworkSupport: the old pod spec had hostUsers false with hostNetwork, so validateHostUsers allows hostNetwork.",
			usernsPod(ptr(false), hostNetwork), usernsPod(ptr(false), hostNetwork)},
		{"user namespaces: update of a pod that had hostUsers false without hostNetwork, adding hostNetwork, is rejected",
			srcRatchet + " useAllowUserNamespacesHostNetworkSupport: the old pod spec had no hostNetwork, so the new one's is Forbidden.",
			usernsPod(ptr(false)), usernsPod(ptr(false), hostNetwork)},
		{"user namespaces: update of a pod that had hostNetwork with hostUsers true, setting hostUsers false, is rejected",
			srcRatchet + " useAllowUserNamespacesHostNetworkSupport: the old pod spec had hostNetwork without a user namespace, which does not allow it.",
			usernsPod(ptr(true), hostNetwork), usernsPod(ptr(false), hostNetwork)},
		{"user namespaces: update of a pod that had hostUsers false with hostNetwork, adding hostPID, rejects hostPID only",
			srcRatchet + ": hostNetwork is allowed by the old pod spec, hostPID never is (" + srcHostUsers + ").",
			usernsPod(ptr(false), hostNetwork), usernsPod(ptr(false), hostNetwork, hostPID)},
		{"user namespaces: update of a pod that had hostUsers false with hostPID, keeping both, is rejected",
			srcRatchet + " has no ratchet for hostPID: " + srcHostUsers + " forbids it again.",
			usernsPod(ptr(false), hostPID), usernsPod(ptr(false), hostPID)},
		{"user namespaces: update of a pod that had hostUsers false with volumeDevices, keeping both, is allowed",
			srcRatchet + " hasUserNamespacesWithVolumeDevices: the old pod spec had hostUsers false with volumeDevices, so validateHostUsers allows them.",
			usernsPod(ptr(false), device), usernsPod(ptr(false), device)},
		{"user namespaces: update of a pod that had volumeDevices with hostUsers true, setting hostUsers false, is rejected",
			srcRatchet + " hasUserNamespacesWithVolumeDevices: the old pod spec had volumeDevices without a user namespace, which does not allow them.",
			usernsPod(ptr(true), device), usernsPod(ptr(false), device)},
		// Found by the blind mutants of session 12 (docs/mutants.md): each ratchet reads the
		// old pod, both of its fields, and only its own field.
		{"user namespaces: update of a pod that had hostNetwork with hostUsers unset, setting hostUsers false, is rejected",
			srcRatchet + " useAllowUserNamespacesHostNetworkSupport: hostUsers unset is true, so the old pod had no user namespace.",
			usernsPod(nil, hostNetwork), usernsPod(ptr(false), hostNetwork)},
		{"user namespaces: update of a pod that had hostNetwork with hostUsers true, setting hostUsers false and adding hostIPC, rejects both",
			srcRatchet + ": no ratchet for hostNetwork without the old user namespace, none ever for hostIPC.",
			usernsPod(ptr(true), hostNetwork), usernsPod(ptr(false), hostNetwork, hostIPC)},
		{"user namespaces: update of a pod that had hostUsers false with hostIPC, keeping both, is rejected",
			srcRatchet + " has no ratchet for hostIPC: " + srcHostUsers + " forbids it again.",
			usernsPod(ptr(false), hostIPC), usernsPod(ptr(false), hostIPC)},
		{"user namespaces: update of a pod that had hostUsers false with hostNetwork and hostPID, keeping all, rejects hostPID only",
			srcRatchet + ": the old pod allows hostNetwork; hostPID never ratchets.",
			usernsPod(ptr(false), hostNetwork, hostPID), usernsPod(ptr(false), hostNetwork, hostPID)},
		{"user namespaces: update of a pod that had hostUsers false with hostPID and volumeDevices, keeping all, rejects hostPID only",
			srcRatchet + ": the old pod allows its volumeDevices; hostPID never ratchets.",
			usernsPod(ptr(false), hostPID, device), usernsPod(ptr(false), hostPID, device)},
		{"user namespaces: update of a pod that had hostUsers false without volumeDevices, adding them to a container, is rejected",
			srcRatchet + " hasUserNamespacesWithVolumeDevices reads the old pod spec, which had none.",
			usernsPod(ptr(false)), usernsPod(ptr(false), device)},
		{"user namespaces: update of a pod that had hostUsers false without volumeDevices, adding them to an init container, is rejected",
			srcRatchet + " hasUserNamespacesWithVolumeDevices reads the old pod spec; init containers are checked as containers are.",
			usernsPod(ptr(false)), usernsPod(ptr(false), initDevice)},
		{"user namespaces: update of a pod that had hostUsers false with hostNetwork, adding volumeDevices, rejects volumeDevices only",
			srcRatchet + ": the old pod allows hostNetwork, not volumeDevices it did not have.",
			usernsPod(ptr(false), hostNetwork), usernsPod(ptr(false), hostNetwork, device)},
	}
	for _, u := range updates {
		c := usernsCase(u.name, u.desc, u.pod)
		c.OldPod = u.old
		cases = append(cases, c)
	}
	// The hostNetwork ratchet is v1.35's: a v1.34 apiserver forbids hostNetwork on the update too.
	v134 := usernsCase("user namespaces: update of a pod that had hostUsers false with hostNetwork, keeping both, on kube-apiserver v1.34 is rejected",
		srcRatchet+" useAllowUserNamespacesHostNetworkSupport exists from v1.35 (KEP-5607); v1.34 validateHostUsers forbids hostNetwork on every hostUsers false pod.",
		usernsPod(ptr(false), hostNetwork))
	v134.OldPod = usernsPod(ptr(false), hostNetwork)
	v134.Releases = framework.Releases{APIServer: "v1.34", Kubelet: "v1.34"}
	v134pid := usernsCase("user namespaces: update of a pod that had hostUsers false with hostNetwork, adding hostPID, on kube-apiserver v1.34 rejects both",
		srcRatchet+": no hostNetwork ratchet before v1.35, and never one for hostPID.",
		usernsPod(ptr(false), hostNetwork, hostPID))
	v134pid.OldPod = usernsPod(ptr(false), hostNetwork)
	v134pid.Releases = v134.Releases
	v134dev := usernsCase("user namespaces: update of a pod that had hostUsers false with hostNetwork and volumeDevices, keeping all, on kube-apiserver v1.34 rejects hostNetwork only",
		srcRatchet+": v1.34 ratchets volumeDevices (hasUserNamespacesWithVolumeDevices), not hostNetwork.",
		usernsPod(ptr(false), hostNetwork, device))
	v134dev.OldPod = usernsPod(ptr(false), hostNetwork, device)
	v134dev.Releases = v134.Releases
	cases = append(cases, v134, v134pid, v134dev)
	// procMount Unmasked in an init container and a container at once, hostUsers unset.
	cases = append(cases, usernsCase("user namespaces: procMount Unmasked in an init container and a container with hostUsers unset is rejected twice",
		srcProcMount+": every container and init container is checked.",
		usernsPod(nil, func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{usernsContainer("init", withProcMount(corev1.UnmaskedProcMount))}
			p.Spec.Containers = []corev1.Container{usernsContainer("probe", withProcMount(corev1.UnmaskedProcMount))}
		})))

	// [validation.proc-mount-unmasked]: in a container and in an init container.
	for _, where := range []struct {
		phrase string
		path   string
		set    func(corev1.ProcMountType) func(*corev1.Pod)
	}{
		{"a container", "spec.containers[0]", func(t corev1.ProcMountType) func(*corev1.Pod) {
			return func(p *corev1.Pod) {
				p.Spec.Containers = []corev1.Container{usernsContainer("probe", withProcMount(t))}
			}
		}},
		{"an init container", "spec.initContainers[0]", func(t corev1.ProcMountType) func(*corev1.Pod) {
			return func(p *corev1.Pod) {
				p.Spec.InitContainers = []corev1.Container{usernsContainer("init", withProcMount(t))}
			}
		}},
	} {
		for _, u := range hostUsersSettings {
			name := fmt.Sprintf("user namespaces: procMount Unmasked in %s with %s is rejected (%s.securityContext.procMount: Invalid value)", where.phrase, u.phrase, where.path)
			desc := fmt.Sprintf("%s: procMount Unmasked with %s (hostUsers unset means true) is \"`hostUsers` must be false to use `Unmasked`\".", srcProcMount, u.phrase)
			if u.v != nil && !*u.v {
				name = fmt.Sprintf("user namespaces: procMount Unmasked in %s with %s is allowed", where.phrase, u.phrase)
				desc = fmt.Sprintf("%s: procMount Unmasked is allowed in a user namespace.", srcProcMount)
			}
			cases = append(cases, usernsCase(name, desc, usernsPod(u.v, where.set(corev1.UnmaskedProcMount))))
		}
	}
	for _, u := range hostUsersSettings {
		cases = append(cases, usernsCase(fmt.Sprintf("user namespaces: procMount Default in a container with %s is allowed", u.phrase),
			srcProcMount+": only Unmasked needs hostUsers false.",
			usernsPod(u.v, func(p *corev1.Pod) {
				p.Spec.Containers = []corev1.Container{usernsContainer("probe", withProcMount(corev1.DefaultProcMount))}
			})))
	}
	cases = append(cases,
		usernsCase("user namespaces: procMount Unmasked in the second of two containers with hostUsers unset is rejected (spec.containers[1].securityContext.procMount: Invalid value)",
			srcProcMount+": every container is checked, each at its own path.",
			usernsPod(nil, func(p *corev1.Pod) {
				p.Spec.Containers = []corev1.Container{usernsContainer("probe", nil), usernsContainer("unmasked", withProcMount(corev1.UnmaskedProcMount))}
			})),
		usernsCase("user namespaces: procMount Unmasked with hostUsers false and hostPID rejects hostPID only",
			srcProcMount+" allows Unmasked in a user namespace; "+srcHostUsers+" still forbids hostPID.",
			usernsPod(ptr(false), hostPID, func(p *corev1.Pod) {
				p.Spec.Containers = []corev1.Container{usernsContainer("probe", withProcMount(corev1.UnmaskedProcMount))}
			})))

	// [validation.host-users-windows].
	for _, u := range hostUsersSettings {
		name := fmt.Sprintf("user namespaces: windows pod with %s is rejected (spec.hostUsers: Forbidden)", u.phrase)
		desc := fmt.Sprintf("%s: a windows pod may not set hostUsers at all, %s included.", srcWindows, u.phrase)
		if u.v == nil {
			name = "user namespaces: windows pod with hostUsers unset is allowed"
			desc = srcWindows + ": a windows pod without hostUsers is admitted."
		}
		cases = append(cases, usernsCase(name, desc, usernsPod(u.v, func(p *corev1.Pod) {
			p.Spec.OS = &corev1.PodOS{Name: corev1.Windows}
		})))
	}
	return cases
}

// usernsVolumes is one valid volume of every type volperm checks (framework.VolumeTypes).
func usernsVolumes() []corev1.Volume {
	return []corev1.Volume{
		volume("scratch", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}),
		volume("host", corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var/lib/volperm-userns", Type: ptr(corev1.HostPathDirectoryOrCreate)}}),
		volume("creds", corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds"}}),
		volume("config", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "config"}}}),
		volume("podinfo", corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
			{Path: "name", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}}),
		volume("bundle", corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "config"}}}}}}),
		volume("flex", corev1.VolumeSource{FlexVolume: &corev1.FlexVolumeSource{Driver: framework.FixtureDriver}}),
	}
}
