package oracle

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/rule"
)

// docs/spec.md "SELinux mount decisions (KEP-1710)": seLinuxChangePolicy in the API, and what a
// kubelet on a node with SELinux on decides for each volume (Case.SELinux).

// seLinuxMountOn is the SELinuxMount gate of a component of release (v1.37 kube_features.go:
// beta and off in v1.33-v1.36, GA and on from v1.37; volperm sets it in no case).
func seLinuxMountOn(release string) bool { return framework.ReleaseMinor(release) >= 37 }

// seLinuxPolicy is the pod's seLinuxChangePolicy as the rule dimension names it.
func seLinuxPolicy(pod *corev1.Pod) string {
	sc := pod.Spec.SecurityContext
	if sc == nil || sc.SELinuxChangePolicy == nil {
		return "unset"
	}
	switch p := *sc.SELinuxChangePolicy; p {
	case corev1.SELinuxChangePolicyMountOption, corev1.SELinuxChangePolicyRecursive:
		return string(p)
	}
	return "unknown"
}

// validateSELinuxPolicy is [validation.selinux-change-policy]: v1.37 validation.go
// validateSELinuxChangePolicy with pkg/api/pod/util.go useOnlyRecursiveSELinuxChangePolicy (an
// apiserver with SELinuxMount off, and no policy in the old pod: only Recursive), and
// validateWindows.
func validateSELinuxPolicy(pod, old *corev1.Pod, release string, t *tracer) field.ErrorList {
	sc := pod.Spec.SecurityContext
	if sc == nil || sc.SELinuxChangePolicy == nil {
		return nil
	}
	at := field.NewPath("spec", "securityContext", "seLinuxChangePolicy")
	v := *sc.SELinuxChangePolicy
	oldHas := old != nil && old.Spec.SecurityContext != nil && old.Spec.SecurityContext.SELinuxChangePolicy != nil
	var errs field.ErrorList
	if !seLinuxMountOn(release) && !oldHas {
		if v != corev1.SELinuxChangePolicyRecursive {
			errs = append(errs, field.NotSupported(at, v, []string{string(corev1.SELinuxChangePolicyRecursive)}))
		}
	} else if seLinuxPolicy(pod) == "unknown" {
		errs = append(errs, field.NotSupported(at, v, []string{string(corev1.SELinuxChangePolicyMountOption), string(corev1.SELinuxChangePolicyRecursive)}))
	}
	if pod.Spec.OS != nil && pod.Spec.OS.Name == corev1.Windows {
		errs = append(errs, field.Forbidden(at, windowsForbiddenMsg))
	}
	t.hit(rule.ValidSELinuxPolicy, cond(rule.SELinuxPolicyDim, seLinuxPolicy(pod)), cond(rule.SELinuxMountGate, setOr(seLinuxMountOn(release), "on", "off")),
		cond(rule.Outcome, setOr(len(errs) > 0, "error", "ok")))
	return errs
}

// seLinuxVolume is the kubelet's decision for one volume of the case's pod: the label it
// mounts the volume with ("" for none), or the error that keeps it from mounting it.
type seLinuxVolume struct {
	label, err string
}

// dswVolume is one volume in the kubelet's desired state of the world: the label it mounts
// with (effective) and the label its first pod gave (original), which later pods must match.
type dswVolume struct {
	effective, original string
}

// seLinuxDecide is [selinux.mount], [selinux.multiple-labels] and [selinux.conflict]: v1.37
// desired_state_of_world_populator.go processPodVolumes and desired_state_of_world.go
// AddPodToVolume over the running pods, then pod (the case's, as its kubelet decoded it), with
// volperm's translator (framework.SELinuxFileLabel); the decision for each volume of pod that
// a container uses, by name.
func seLinuxDecide(c *framework.Case, pod *corev1.Pod, t *tracer) map[string]seLinuxVolume {
	mountOn := seLinuxMountOn(c.Releases.Of(false))
	gate := cond(rule.SELinuxMountGate, setOr(mountOn, "on", "off"))
	dsw := map[string]*dswVolume{}
	out := map[string]seLinuxVolume{}
	pods := append(slices.Clone(c.SELinux.Running), pod)
	for i, p := range pods {
		tr := t
		if i < len(pods)-1 {
			tr = nil // a running pod's decisions are not the case's to cover
		}
		contexts, used := seLinuxContexts(p)
		if tr != nil {
			traceLabels(p, tr)
		}
		for _, v := range p.Spec.Volumes {
			// processPodVolumes: a volume no container uses is skipped.
			if !used[v.Name] {
				continue
			}
			var pv *corev1.PersistentVolume
			if v.PersistentVolumeClaim != nil {
				pv = c.SELinux.Claims[v.PersistentVolumeClaim.ClaimName]
			}
			source, plugin := seLinuxSource(c, pv)
			// v1.37 selinux.go VolumeSupportsSELinuxMount: a PV only; SELinuxMount on: any access
			// mode, off: exactly [ReadWriteOncePod].
			supported := pv != nil && (mountOn || slices.Equal(pv.Spec.AccessModes, []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod}))
			conds := []rule.Cond{cond(rule.SELinuxSource, source), gate}
			if pv != nil {
				conds = append(conds, cond(rule.AccessModes, accessModes(pv)))
			}
			// The unique volume name: a PV of a device-mountable plugin (csi, iscsi, fc) is
			// one volume for every pod; anything else is the pod's own.
			unique := p.Name + "/" + v.Name
			name := v.Name
			if pv != nil {
				name = pv.Name
				if source != "nfs" {
					unique = "pv/" + pv.Name
				}
			}
			labels := map[string]bool{}
			for _, o := range contexts[v.Name] {
				labels[framework.SELinuxFileLabel(o)] = true
			}
			// GetMountSELinuxLabel.
			label, pluginSupports := "", plugin
			switch {
			case len(labels) > 1:
				ls := make([]string, 0, len(labels))
				for l := range labels {
					ls = append(ls, l)
				}
				if supported {
					tr.hit(rule.SELinuxMultiple, gate, cond(rule.Decision, "error"))
					if i == len(pods)-1 {
						out[v.Name] = seLinuxVolume{err: framework.MultipleSELinuxLabels(ls)}
					}
					continue
				}
				// handleSELinuxMetricError: a warning, no label, and no conflict check.
				tr.hit(rule.SELinuxMultiple, gate, cond(rule.Decision, "ignored"))
				pluginSupports = false
			case len(labels) == 1:
				for l := range labels {
					label = l
				}
				if seLinuxPolicy(p) == string(corev1.SELinuxChangePolicyRecursive) || !plugin {
					label = ""
				}
			}
			e, exists := dsw[unique]
			if !exists {
				e = &dswVolume{original: label}
				if supported {
					e.effective = label
				}
				dsw[unique] = e
			} else if pluginSupports && label != e.original {
				if supported {
					tr.hit(rule.SELinuxConflict, gate, cond(rule.Decision, "error"))
					if i == len(pods)-1 {
						out[v.Name] = seLinuxVolume{err: framework.ConflictingSELinuxLabels(name, e.original, label)}
					}
					continue
				}
				tr.hit(rule.SELinuxConflict, gate, cond(rule.Decision, "ignored"))
			}
			if i == len(pods)-1 {
				out[v.Name] = seLinuxVolume{label: e.effective}
				if policy := seLinuxPolicy(p); policy != "unknown" {
					tr.hit(rule.SELinuxMount, append(conds, cond(rule.SELinuxPolicyDim, policy), cond(rule.Decision, setOr(e.effective != "", "label", "none")))...)
				}
			}
		}
	}
	return out
}

// seLinuxSource is what pv (nil: an inline volume) is to the decision, and whether its plugin
// supports a context mount (v1.37 SupportsSELinuxContextMount: iscsi and fc always, csi by its
// CSIDriver's seLinuxMount (none: false), every other plugin never).
func seLinuxSource(c *framework.Case, pv *corev1.PersistentVolume) (string, bool) {
	if pv == nil {
		return "inline", false
	}
	switch s := framework.SELinuxVolumeSource(pv); s {
	case "csi":
		on, has := c.SELinux.CSIDrivers[pv.Spec.CSI.Driver]
		switch {
		case !has:
			return "csi-no-driver", false
		case on:
			return "csi-supported", true
		}
		return "csi-unsupported", false
	case "iscsi", "fc":
		return s, true
	default:
		return s, false
	}
}

// accessModes names pv's access modes as the rule dimension does.
func accessModes(pv *corev1.PersistentVolume) string {
	if len(pv.Spec.AccessModes) == 1 {
		return string(pv.Spec.AccessModes[0])
	}
	return "several"
}

// seLinuxContexts is v1.37 util.go GetPodVolumeNames: for each volume, the effective
// seLinuxOptions of every container (init, regular, ephemeral) that mounts it, the container's
// replacing the pod's whole (DetermineEffectiveSecurityContext), none where neither has any;
// used are the volumes a container mounts or uses as a device.
func seLinuxContexts(pod *corev1.Pod) (map[string][]*corev1.SELinuxOptions, map[string]bool) {
	contexts, used := map[string][]*corev1.SELinuxOptions{}, map[string]bool{}
	visit := func(sc *corev1.SecurityContext, mounts []corev1.VolumeMount, devices []corev1.VolumeDevice) {
		var opts *corev1.SELinuxOptions
		if ps := pod.Spec.SecurityContext; ps != nil {
			opts = ps.SELinuxOptions
		}
		if sc != nil && sc.SELinuxOptions != nil {
			opts = sc.SELinuxOptions
		}
		for _, m := range mounts {
			used[m.Name] = true
			if opts != nil {
				contexts[m.Name] = append(contexts[m.Name], opts)
			}
		}
		for _, d := range devices {
			used[d.Name] = true
		}
	}
	for _, ctr := range pod.Spec.InitContainers {
		visit(ctr.SecurityContext, ctr.VolumeMounts, ctr.VolumeDevices)
	}
	for _, ctr := range pod.Spec.Containers {
		visit(ctr.SecurityContext, ctr.VolumeMounts, ctr.VolumeDevices)
	}
	for _, ctr := range pod.Spec.EphemeralContainers {
		visit(ctr.SecurityContext, ctr.VolumeMounts, ctr.VolumeDevices)
	}
	return contexts, used
}

// traceLabels records [selinux.label] for each container of pod with a label: from its own
// options or the pod's, and whether the translator filled a field.
func traceLabels(pod *corev1.Pod, t *tracer) {
	var podOpts *corev1.SELinuxOptions
	if sc := pod.Spec.SecurityContext; sc != nil {
		podOpts = sc.SELinuxOptions
	}
	each := func(sc *corev1.SecurityContext) {
		o, from := podOpts, "pod"
		if sc != nil && sc.SELinuxOptions != nil {
			o, from = sc.SELinuxOptions, "container"
		}
		if o == nil {
			return
		}
		t.hit(rule.SELinuxLabel, cond(rule.SELinuxLabelFrom, from))
		if o.User == "" || o.Role == "" || o.Type == "" || o.Level == "" {
			t.hit(rule.SELinuxLabel, cond(rule.SELinuxLabelFrom, "defaults"))
		}
	}
	for _, ctr := range pod.Spec.InitContainers {
		each(ctr.SecurityContext)
	}
	for _, ctr := range pod.Spec.Containers {
		each(ctr.SecurityContext)
	}
}
