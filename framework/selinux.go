package framework

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// SELinux is a case's node with SELinux on (docs/spec.md "SELinux mount decisions", KEP-1710):
// what its kubelet decides about mounting each volume of the pod with `-o context`, with
// volperm's label translator (SELinuxFileLabel). This machine's kernel has SELinux off and no
// target here can show a real label: the decision is what is observed
// (VolumeObservation.SELinuxMount, or the volume's set-up error).
type SELinux struct {
	// Claims binds each persistentVolumeClaim of the pod and of Running (by claimName) to its
	// PersistentVolume: its name, accessModes and source are what the kubelet reads.
	Claims map[string]*corev1.PersistentVolume `json:"claims,omitempty"`
	// CSIDrivers are the cluster's CSIDriver objects by driver name, each its spec.seLinuxMount;
	// a csi PersistentVolume whose driver is not listed has no CSIDriver object.
	CSIDrivers map[string]bool `json:"csiDrivers,omitempty"`
	// Running are the pods the node already runs, in the order its kubelet took them: their
	// volumes are in its volume manager before the case's pod comes (conflicting labels).
	Running []*corev1.Pod `json:"running,omitempty"`
}

// DeepCopy copies s (nil for nil).
func (s *SELinux) DeepCopy() *SELinux {
	if s == nil {
		return nil
	}
	out := &SELinux{Claims: map[string]*corev1.PersistentVolume{}, CSIDrivers: map[string]bool{}}
	for k, pv := range s.Claims {
		out.Claims[k] = pv.DeepCopy()
	}
	for k, v := range s.CSIDrivers {
		out.CSIDrivers[k] = v
	}
	for _, p := range s.Running {
		out.Running = append(out.Running, p.DeepCopy())
	}
	return out
}

// SELinuxFileLabel is the file label volperm's translator gives a container process's
// seLinuxOptions (docs/spec.md [selinux.label]): upstream's NewFakeSELinuxLabelTranslator
// (v1.37 pkg/volume/util/selinux.go), which fills what the options leave empty from Fedora's
// defaults as a real node fills it from its policy: user system_u, role object_r, type
// container_file_t (also for the process type container_t), level s0:c998,c999 (a real node
// allocates one). "" for no options.
func SELinuxFileLabel(o *corev1.SELinuxOptions) string {
	if o == nil {
		return ""
	}
	or := func(v, def string) string {
		if v == "" {
			return def
		}
		return v
	}
	typ := o.Type
	if typ == "" || typ == "container_t" {
		typ = "container_file_t"
	}
	return strings.Join([]string{or(o.User, "system_u"), or(o.Role, "object_r"), typ, or(o.Level, "s0:c998,c999")}, ":")
}

// MultipleSELinuxLabels is the kubelet's error for a volume whose containers in one pod have
// different labels (v1.37 selinux.go MultipleSELinuxLabelsError): upstream lists them in no
// fixed order; volperm's observation lists them sorted (docs/observation.md).
func MultipleSELinuxLabels(labels []string) string {
	s := slices.Clone(labels)
	slices.Sort(s)
	return MultipleSELinuxLabelsPrefix + strings.Join(s, ",")
}

// MultipleSELinuxLabelsPrefix starts MultipleSELinuxLabels' text: a target whose kubelet lists
// the labels in its own order sorts them (SortSELinuxLabels).
const MultipleSELinuxLabelsPrefix = "multiple SELinux labels found: "

// SortSELinuxLabels gives a set-up error text naming several labels (MultipleSELinuxLabels) its
// labels sorted; any other text as it is. Labels hold commas themselves (s0:c1,c2), so the
// list is split where a label starts: before a user (`...,system_u:`): each label has four
// colon-separated fields.
func SortSELinuxLabels(text string) string {
	rest, ok := strings.CutPrefix(text, MultipleSELinuxLabelsPrefix)
	if !ok {
		return text
	}
	var labels []string
	parts := strings.Split(rest, ",")
	for _, p := range parts {
		if strings.Count(p, ":") >= 3 || len(labels) == 0 {
			labels = append(labels, p)
			continue
		}
		labels[len(labels)-1] += "," + p
	}
	return MultipleSELinuxLabels(labels)
}

// ConflictingSELinuxLabels is the kubelet's error for a pod whose label for a volume differs
// from the one the volume is mounted with for a pod before it (v1.37 desired_state_of_world.go
// AddPodToVolume); volume is the PersistentVolume's name.
func ConflictingSELinuxLabels(volume, existing, label string) string {
	return fmt.Sprintf("conflicting SELinux labels of volume %s: %q and %q", volume, existing, label)
}

// SELinuxClaim is the PersistentVolume the persistentVolumeClaim volume v is bound to in c's
// SELinux node; nil for another volume or a claim without one.
func (c *Case) SELinuxClaim(v corev1.Volume) *corev1.PersistentVolume {
	if c.SELinux == nil || v.PersistentVolumeClaim == nil {
		return nil
	}
	return c.SELinux.Claims[v.PersistentVolumeClaim.ClaimName]
}

// validateSELinux: every persistentVolumeClaim of the pod and of the running pods is bound in
// claims, each PersistentVolume named with one source, running pods named once each.
func (c *Case) validateSELinux() error {
	s := c.SELinux
	if c.Pod == nil {
		if s != nil {
			return errors.New("seLinux: a node's SELinux decision is about a pod: set pod")
		}
		return nil // a PersistentVolume's admission
	}
	pods := []*corev1.Pod{c.Pod}
	if s != nil {
		pods = append(pods, s.Running...)
	}
	for i, p := range pods {
		field := "pod"
		if i > 0 {
			field = fmt.Sprintf("seLinux.running[%d]", i-1)
		}
		if p == nil {
			return fmt.Errorf("%s: Required value: a running pod", field)
		}
		for _, v := range p.Spec.Volumes {
			pvc := v.PersistentVolumeClaim
			if pvc == nil || (c.AdmissionOnly && i == 0) {
				continue
			}
			if s == nil || s.Claims[pvc.ClaimName] == nil {
				return fmt.Errorf("%s.spec.volumes[%q].persistentVolumeClaim: claim %q is bound to no PersistentVolume: set seLinux.claims[%q] (volperm sets up no claim; only a node's SELinux decision for it is observed)", field, v.Name, pvc.ClaimName, pvc.ClaimName)
			}
		}
	}
	if s == nil {
		return nil
	}
	if len(c.After) > 0 || len(c.Probes) > 0 {
		return errors.New("seLinux: a case of a node's SELinux decision has no after or probes (volperm mounts no PersistentVolume and this machine has SELinux off); split it in two cases")
	}
	for _, claim := range sortedKeys(s.Claims) {
		pv := s.Claims[claim]
		if pv == nil || pv.Name == "" {
			return fmt.Errorf("seLinux.claims[%q].metadata.name: Required value: the PersistentVolume's name (the kubelet's texts name it)", claim)
		}
		if SELinuxVolumeSource(pv) == "" {
			return fmt.Errorf("seLinux.claims[%q].spec: the PersistentVolume has no source volperm models; use one of %s", claim, strings.Join(seLinuxSources, ", "))
		}
	}
	seen := map[string]bool{c.Pod.Name: true}
	for i, p := range s.Running {
		if p.Name == "" || seen[p.Name] {
			return fmt.Errorf("seLinux.running[%d].metadata.name: %q: each running pod needs a name of its own, other than the case pod's", i, p.Name)
		}
		seen[p.Name] = true
	}
	return nil
}

// seLinuxSources are the PersistentVolume sources an SELinux case may bind: csi (its
// CSIDriver decides), iscsi and fc (always support a context mount), nfs (never).
var seLinuxSources = []string{"csi", "iscsi", "fc", "nfs"}

// SELinuxVolumeSource names pv's source among seLinuxSources, "" for another.
func SELinuxVolumeSource(pv *corev1.PersistentVolume) string {
	s := pv.Spec.PersistentVolumeSource
	switch {
	case s.CSI != nil:
		return "csi"
	case s.ISCSI != nil:
		return "iscsi"
	case s.FC != nil:
		return "fc"
	case s.NFS != nil:
		return "nfs"
	}
	return ""
}
