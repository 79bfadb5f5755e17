package oracle

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/rule"
)

// unknownFields is docs/spec.md "Releases": a component of a release without a field decodes
// the pod without it. It clears, in pod, every emptyDir mode and KEP-5936 user field that
// release does not know and returns the field paths, in the order a JSON decoder meets them
// (volume order; in a volume, its fields in declaration order).
func unknownFields(pod *corev1.Pod, release string) []string {
	if pod == nil {
		return nil
	}
	var paths []string
	users := map[int][]userField{}
	if !framework.ReleaseHas(release, framework.FieldUser) {
		for _, f := range setUserFields(pod.Spec.Volumes) {
			users[f.vol] = append(users[f.vol], f)
		}
	}
	modes := !framework.ReleaseHas(release, framework.FieldEmptyDirMode)
	for i := range pod.Spec.Volumes {
		if ed := pod.Spec.Volumes[i].EmptyDir; modes && ed != nil && ed.Mode != nil {
			ed.Mode = nil
			paths = append(paths, fmt.Sprintf("spec.volumes[%d].%s", i, framework.FieldEmptyDirMode))
		}
		for _, f := range users[i] {
			*f.ptr = nil
			paths = append(paths, f.path)
		}
	}
	return paths
}

// decodeRequest is [releases.apiserver-unknown-field]: an apiserver of a release without a field
// the request carries keeps the pod without it and warns, one warning per field (fieldValidation
// Warn: k8s.io/apiserver handlers/create.go addStrictDecodingWarnings; the text is
// sigs.k8s.io/json's strictError), or rejects the request (Strict: transformDecodeError around
// apimachinery's strictDecodingError). rejected is the rejection's text, "" when admitted.
func decodeRequest(c *framework.Case, pod, old *corev1.Pod, t *tracer) (warnings []string, rejected string) {
	unknownFields(old, c.Releases.Of(true)) // the stored old pod never had it
	paths := unknownFields(pod, c.Releases.Of(true))
	if len(paths) == 0 {
		return nil, ""
	}
	texts := make([]string, len(paths))
	for i, p := range paths {
		texts[i] = "unknown field " + strconv.Quote(p)
	}
	if c.FieldValidation == framework.FieldValidationStrict {
		t.hit(rule.ReleaseAPIServerField, cond(rule.FieldValidation, "strict"))
		return nil, `Pod in version "v1" cannot be handled as a Pod: strict decoding error: ` + strings.Join(texts, ", ")
	}
	t.hit(rule.ReleaseAPIServerField, cond(rule.FieldValidation, "warn"))
	return texts, ""
}

// kubeletDecode is [releases.kubelet-unknown-field]: a kubelet of a release without a field
// never sees it in the pod it sets up (its client drops unknown fields silently): an emptyDir
// mode is then ignored, as with the kubelet gate off.
func kubeletDecode(release string, pod *corev1.Pod, t *tracer) {
	for _, p := range unknownFields(pod, release) {
		var i int
		fmt.Sscanf(p, "spec.volumes[%d]", &i)
		if ed := pod.Spec.Volumes[i].EmptyDir; ed != nil {
			t.hit(rule.ReleaseKubeletField, cond(rule.Medium, mediumOf(ed.Medium)))
		}
	}
}
