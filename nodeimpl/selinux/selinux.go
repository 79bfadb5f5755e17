// Package selinux is the reference kubelet's SELinux mount decision (KEP-1710) on a node with
// SELinux on: for each volume of a pod, the label its volume manager mounts it with (`-o
// context`), or the error that keeps it from mounting it. Shaped as upstream's code: v1.37
// pkg/volume/util/util.go GetPodVolumeNames, selinux.go GetMountSELinuxLabel and
// VolumeSupportsSELinuxMount, kubelet/volumemanager/cache/desired_state_of_world.go
// AddPodToVolume. It never mounts: this machine has SELinux off.
package selinux

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/nodeimpl/mutant"
)

// Node is what the kubelet knows: the PersistentVolume each claim is bound to, the CSIDrivers'
// seLinuxMount by driver name (absent: no CSIDriver object), the pods it runs already in the
// order it took them, and its SELinuxMount gate.
type Node struct {
	Claims     map[string]*corev1.PersistentVolume
	CSIDrivers map[string]bool
	Running    []*corev1.Pod
	MountGate  bool
}

// Decision is the volume manager's answer for one volume: the mount label ("" none), or Err.
type Decision struct {
	Label string
	Err   error
}

// volumeToMount is desired_state_of_world.go volumeToMount's SELinux part.
type volumeToMount struct {
	effectiveLabel string // effectiveSELinuxMountFileLabel: the -o context of every pod's mount
	originalLabel  string // originalSELinuxLabel: before the access-mode check, what pods must match
	// rawOriginalLabel is the first pod's label before its policy and the plugin's support
	// cleared it (read only by a mutant).
	rawOriginalLabel string
	pods             map[string]bool
}

// dsw is the desired state of the world: volumes by unique name.
type dsw struct {
	node    *Node
	volumes map[string]*volumeToMount
}

// Decide adds the running pods, then pod, to a new desired state of the world (the populator's
// order) and returns pod's decision for each volume a container of it uses.
func Decide(n *Node, pod *corev1.Pod) map[string]Decision {
	d := &dsw{node: n, volumes: map[string]*volumeToMount{}}
	for _, p := range n.Running {
		d.addPod(p)
	}
	return d.addPod(pod)
}

// addPod is the populator's processPodVolumes: every volume a container uses, in pod order.
func (d *dsw) addPod(pod *corev1.Pod) map[string]Decision {
	out := map[string]Decision{}
	used, contexts := podVolumeNames(pod)
	for _, v := range pod.Spec.Volumes {
		if !used[v.Name] && !mutant.On(mutant.BlindSELinuxUnusedVolumeDecided) {
			continue // "Skipping unused volume"
		}
		label, err := d.addPodToVolume(pod, v, contexts[v.Name])
		out[v.Name] = Decision{Label: label, Err: err}
	}
	return out
}

// spec is the volume.Spec of v: its PersistentVolume (through the claim) or nil for inline.
func (d *dsw) spec(v corev1.Volume) *corev1.PersistentVolume {
	if v.PersistentVolumeClaim == nil {
		return nil
	}
	return d.node.Claims[v.PersistentVolumeClaim.ClaimName]
}

// addPodToVolume is AddPodToVolume's SELinux part; it returns the label the volume is mounted
// with for pod.
func (d *dsw) addPodToVolume(pod *corev1.Pod, v corev1.Volume, contexts []*corev1.SELinuxOptions) (string, error) {
	pv := d.spec(v)
	name := v.Name // volumeSpec.Name()
	unique := string(pod.UID) + "/" + pod.Name + "/" + v.Name
	if pv != nil {
		name = pv.Name
		if deviceMountable(pv) {
			unique = "pv/" + pv.Name
		}
	}
	supported := d.volumeSupportsSELinuxMount(pv)
	label, pluginSupports, err := d.mountLabel(pv, contexts, pod.Spec.SecurityContext)
	if err != nil {
		if _, multiple := err.(*multipleLabelsError); multiple {
			// getSELinuxLabel -> handleSELinuxMetricError: an error only where a context mount
			// is possible; else a warning metric and no plugin support.
			if supported || mutant.On(mutant.BlindSELinuxMultipleLabelsAlwaysError) {
				return "", err
			}
			label, pluginSupports = "", false
		} else {
			return "", err
		}
	}
	vol, exists := d.volumes[unique]
	if !exists {
		vol = &volumeToMount{originalLabel: label, rawOriginalLabel: singleLabel(contexts), pods: map[string]bool{}}
		if supported {
			vol.effectiveLabel = label
		}
		d.volumes[unique] = vol
	}
	first, later := vol.originalLabel, label
	if mutant.On(mutant.BlindSELinuxConflictBeforePolicy) {
		first, later = vol.rawOriginalLabel, singleLabel(contexts)
	}
	if !vol.pods[pod.Name] && exists && pluginSupports && later != first {
		if supported && !mutant.On(mutant.SELinuxConflictIgnored) {
			return "", fmt.Errorf("conflicting SELinux labels of volume %s: %q and %q", name, first, later)
		}
	}
	vol.pods[pod.Name] = true
	return vol.effectiveLabel, nil
}

// deviceMountable: the csi, iscsi and fc plugins mount a PersistentVolume once for every pod
// (one unique volume name); nfs mounts it per pod.
func deviceMountable(pv *corev1.PersistentVolume) bool {
	s := pv.Spec.PersistentVolumeSource
	return s.CSI != nil || s.ISCSI != nil || s.FC != nil
}

// volumeSupportsSELinuxMount is selinux.go VolumeSupportsSELinuxMount (SELinuxMountReadWriteOncePod
// is on in every release volperm runs): a PersistentVolume, of any access mode with SELinuxMount
// on, else exactly [ReadWriteOncePod].
func (d *dsw) volumeSupportsSELinuxMount(pv *corev1.PersistentVolume) bool {
	if pv == nil {
		return false
	}
	if d.node.MountGate || mutant.On(mutant.SELinuxAnyAccessModeWithoutGate) {
		return true
	}
	modes := pv.Spec.AccessModes
	return len(modes) == 1 && modes[0] == corev1.ReadWriteOncePod
}

// supportsContextMount is the plugin's SupportsSELinuxContextMount: iscsi and fc always, csi
// as its CSIDriver says (no CSIDriver: no), every inline plugin and nfs never.
func (d *dsw) supportsContextMount(pv *corev1.PersistentVolume) bool {
	if pv == nil {
		return false
	}
	s := pv.Spec.PersistentVolumeSource
	switch {
	case s.ISCSI != nil, s.FC != nil:
		return true
	case s.CSI != nil:
		return d.node.CSIDrivers[s.CSI.Driver]
	}
	return false
}

// multipleLabelsError is selinux.go MultipleSELinuxLabelsError, its labels sorted.
type multipleLabelsError struct{ labels []string }

func (e *multipleLabelsError) Error() string {
	return "multiple SELinux labels found: " + strings.Join(e.labels, ",")
}

// mountLabel is selinux.go GetMountSELinuxLabel: the label of the containers' contexts (one at
// most), cleared for a Recursive pod and for a plugin without context mounts.
func (d *dsw) mountLabel(pv *corev1.PersistentVolume, contexts []*corev1.SELinuxOptions, psc *corev1.PodSecurityContext) (string, bool, error) {
	plugin := d.supportsContextMount(pv)
	set := map[string]bool{}
	for _, o := range contexts {
		set[FileLabel(o)] = true
	}
	if len(set) > 1 {
		recursive := psc != nil && psc.SELinuxChangePolicy != nil && *psc.SELinuxChangePolicy == corev1.SELinuxChangePolicyRecursive
		if (recursive || !plugin) && mutant.On(mutant.BlindSELinuxMultipleAfterPolicy) {
			return "", plugin, nil
		}
		labels := make([]string, 0, len(set))
		for l := range set {
			labels = append(labels, l)
		}
		sort.Strings(labels)
		return "", plugin, &multipleLabelsError{labels: labels}
	}
	label := ""
	for l := range set {
		label = l
	}
	if psc != nil && psc.SELinuxChangePolicy != nil && *psc.SELinuxChangePolicy == corev1.SELinuxChangePolicyRecursive &&
		!mutant.On(mutant.SELinuxRecursiveKeepsLabel) {
		label = ""
	}
	if !plugin {
		label = ""
	}
	return label, plugin, nil
}

// singleLabel is the one label of contexts before any policy or plugin clears it, "" for none
// or several.
func singleLabel(contexts []*corev1.SELinuxOptions) string {
	label := ""
	for _, o := range contexts {
		l := FileLabel(o)
		if label != "" && l != label {
			return ""
		}
		label = l
	}
	return label
}

// FileLabel is the file label of a process's options on volperm's node (upstream's
// NewFakeSELinuxLabelTranslator: Fedora's defaults for what the options leave empty, the
// process type container_t as container_file_t); "" for none.
func FileLabel(o *corev1.SELinuxOptions) string {
	if o == nil {
		return ""
	}
	user, role, typ, level := o.User, o.Role, o.Type, o.Level
	if user == "" {
		user = "system_u"
	}
	if role == "" {
		role = "object_r"
	}
	if typ == "" || typ == "container_t" {
		typ = "container_file_t"
	}
	if level == "" {
		level = "s0:c998,c999"
	}
	return user + ":" + role + ":" + typ + ":" + level
}

// podVolumeNames is util.go GetPodVolumeNames: the volumes a container (init, regular,
// ephemeral) mounts or uses as a device, and per volume the effective seLinuxOptions of each
// container mounting it (securitycontext DetermineEffectiveSecurityContext: the container's
// replace the pod's as a whole).
func podVolumeNames(pod *corev1.Pod) (map[string]bool, map[string][]*corev1.SELinuxOptions) {
	used, contexts := map[string]bool{}, map[string][]*corev1.SELinuxOptions{}
	var podOpts *corev1.SELinuxOptions
	if sc := pod.Spec.SecurityContext; sc != nil {
		podOpts = sc.SELinuxOptions
	}
	visit := func(sc *corev1.SecurityContext, mounts []corev1.VolumeMount, devices []corev1.VolumeDevice) {
		opts := podOpts
		if sc != nil && sc.SELinuxOptions != nil {
			opts = sc.SELinuxOptions
			if podOpts != nil && mutant.On(mutant.BlindSELinuxOptionsMergedPerField) {
				merged, o := *podOpts, sc.SELinuxOptions
				if o.User != "" {
					merged.User = o.User
				}
				if o.Role != "" {
					merged.Role = o.Role
				}
				if o.Type != "" {
					merged.Type = o.Type
				}
				if o.Level != "" {
					merged.Level = o.Level
				}
				opts = &merged
			}
		}
		for _, m := range mounts {
			used[m.Name] = true
			if opts != nil && !(*opts == corev1.SELinuxOptions{} && mutant.On(mutant.BlindSELinuxEmptyOptionsNoLabel)) {
				contexts[m.Name] = append(contexts[m.Name], opts)
			}
		}
		for _, dv := range devices {
			used[dv.Name] = true
		}
	}
	for i := range pod.Spec.InitContainers {
		if mutant.On(mutant.BlindSELinuxInitContainersIgnored) {
			break
		}
		c := &pod.Spec.InitContainers[i]
		visit(c.SecurityContext, c.VolumeMounts, c.VolumeDevices)
	}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		visit(c.SecurityContext, c.VolumeMounts, c.VolumeDevices)
	}
	for i := range pod.Spec.EphemeralContainers {
		c := &pod.Spec.EphemeralContainers[i]
		visit(c.SecurityContext, c.VolumeMounts, c.VolumeDevices)
	}
	return used, contexts
}
