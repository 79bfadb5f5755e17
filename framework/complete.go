package framework

import (
	"crypto/sha256"
	"fmt"
	"strings"

	probeimage "github.com/volperm/volperm/framework/probe/image"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Namespace is where volperm's pods live (and the namespace prefix on clusters).
const Namespace = "volperm"

// ProbeImage is the image the default container of a Case pod names when the case gives none:
// the probe image's repository (framework/probe/image). A target that runs the container runs
// the tag it built of it (the binary's hash); the others only carry the name.
const ProbeImage = probeimage.Repo

// Complete fills what a Case may leave out, the same way for the oracle and every target: the
// pod's name, namespace and UID (derived from the case name) and, when the pod has no
// containers, one container "probe" mounting every volume at /volumes/NAME. It is idempotent.
func (c *Case) Complete() {
	pods := []*corev1.Pod{c.Pod, c.OldPod}
	if c.SELinux != nil {
		pods = append(pods, c.SELinux.Running...)
	}
	for i, p := range pods {
		if p == nil {
			continue
		}
		if p.Name == "" {
			p.Name = objectName(c.Name)
		}
		if p.Namespace == "" {
			p.Namespace = Namespace
		}
		if p.UID == "" {
			seed := c.Name
			if i >= 2 {
				seed += "/running/" + p.Name // a running pod of Case.SELinux: a pod of its own
			}
			sum := sha256.Sum256([]byte(seed))
			p.UID = types.UID(fmt.Sprintf("%x-%x-%x-%x-%x", sum[0:4], sum[4:6], sum[6:8], sum[8:10], sum[10:16]))
		}
		if len(p.Spec.Containers) == 0 {
			ctr := corev1.Container{Name: "probe", Image: ProbeImage, ImagePullPolicy: corev1.PullNever}
			for _, v := range p.Spec.Volumes {
				ctr.VolumeMounts = append(ctr.VolumeMounts, corev1.VolumeMount{Name: v.Name, MountPath: "/volumes/" + v.Name})
			}
			p.Spec.Containers = []corev1.Container{ctr}
		}
	}
}

// objectName turns a case name into a DNS-1123 name of at most 63 characters.
func objectName(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		ok := r >= 'a' && r <= 'z' || r >= '0' && r <= '9'
		switch {
		case ok:
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
	}
	n := strings.Trim(b.String(), "-")
	if len(n) > 52 {
		sum := sha256.Sum256([]byte(s))
		n = strings.Trim(n[:52], "-") + fmt.Sprintf("-%x", sum[:4])
	}
	if n == "" {
		n = "case"
	}
	return n
}

// DeepCopy copies c deeply enough that Complete(), admission and the steps of a target or the
// oracle cannot change the caller's case (the maps of data are shared: nothing writes them).
func (c *Case) DeepCopy() *Case {
	cc := *c
	if c.Pod != nil {
		cc.Pod = c.Pod.DeepCopy()
	}
	if c.OldPod != nil {
		cc.OldPod = c.OldPod.DeepCopy()
	}
	if c.PersistentVolume != nil {
		cc.PersistentVolume = c.PersistentVolume.DeepCopy()
	}
	cc.SELinux = c.SELinux.DeepCopy()
	return &cc
}
