package oracle

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/probe/image"
	"github.com/volperm/volperm/framework/rule"
)

// docs/spec.md [validation.image-volume] and [mounts.image-volume] (KEP-4639).

// validPullPolicies is v1.37 validation.go supportedPullPolicies, sorted.
var validPullPolicies = []string{string(corev1.PullAlways), string(corev1.PullIfNotPresent), string(corev1.PullNever)}

// validateImage is v1.37 validation.go validateImageVolumeSource: a reference is required (an
// old pod's empty one is ratcheted: cases create), the pull policy one of the three.
func validateImage(s *corev1.ImageVolumeSource, fld *field.Path) field.ErrorList {
	var all field.ErrorList
	if s.Reference == "" {
		all = append(all, field.Required(fld.Child("reference"), ""))
	}
	// validatePullPolicy: empty is Required (defaulting makes it unreachable), else one of three.
	switch s.PullPolicy {
	case corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever:
	case "":
		all = append(all, field.Required(fld.Child("pullPolicy"), ""))
	default:
		all = append(all, field.NotSupported(fld.Child("pullPolicy"), string(s.PullPolicy), validPullPolicies))
	}
	return all
}

// setUpImage is [mounts.image-volume]: v1.37 pkg/volume/image is a stub (SetUp does nothing,
// GetPath ""), so the kubelet makes nothing and walks nothing: fsGroup has no effect. The
// runtime mounts the image's files (containerd 2 container_image_mount.go: an overlay of its
// layers, its root made 0755 root) with the owners and modes of its layers, read-only
// (makeMounts' mustMountRO: the plugin's attributes say ReadOnly). The image is the probe
// image (framework.ProbeImage; the loader refuses another on a node).
func (k *kubelet) setUpImage(v *volume) string {
	if v.root == nil {
		v.root = newDir(0755, 0, 0)
		v.top = v.root
		var files []framework.File
		for _, e := range (image.Image{}).Entries() {
			files = append(files, framework.File{Path: e.Path, Dir: e.Dir, Mode: e.Mode})
		}
		populate(v.root, files)
	}
	m, _ := framework.ProbeMount(k.pod, v.spec.Name)
	k.tr.hit(rule.MountImage, k.fsGroupCond(), cond(rule.Access, setOr(m.ReadOnly, "read-only", "read-write")))
	return ok
}

// imageTag is v1.37 pkg/util/parsers ParseImageName's tag of ref: the tag after the last
// path element's colon, "latest" when ref has neither a tag nor a digest, "" with only a digest.
func imageTag(ref string) string {
	name, digest, _ := strings.Cut(ref, "@")
	last := name[strings.LastIndex(name, "/")+1:]
	if _, tag, ok := strings.Cut(last, ":"); ok {
		return tag
	}
	if digest != "" {
		return ""
	}
	return "latest"
}
