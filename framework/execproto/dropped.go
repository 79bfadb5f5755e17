package execproto

import (
	"encoding/json"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
)

// DroppedFields names, as docs/spec.md's `dropped` does ("spec.volumes[0].emptyDir.mode"), every
// field of the volumes (and of the containers' volumeMounts) sent that the apiserver's answer lacks: defaulting only adds fields, so a
// field gone is a field dropped (v1.37 pkg/api/pod/util.go dropDisabledFields), whichever gate
// dropped it. Sorted, as the oracle lists them. The cluster target compares the pod it sent with
// the dry run's answer, the upstream agent the pod before and after PrepareForCreate. Part of the protocol: an
// agent's admit answer lists the same paths (AdmitResponse.Dropped).
func DroppedFields(sent, stored *corev1.PodSpec) ([]string, error) {
	var out []string
	var err error
	if out, err = appendDropped(out, "spec.volumes", sent.Volumes, stored.Volumes); err != nil {
		return nil, err
	}
	// The volumeMounts' own fields (bindMountOptions, KEP-5855: docs/spec.md
	// [dropping.bind-mount-options]).
	for _, cs := range []struct {
		path         string
		sent, stored []corev1.Container
	}{{"spec.initContainers", sent.InitContainers, stored.InitContainers}, {"spec.containers", sent.Containers, stored.Containers}} {
		for i := range min(len(cs.sent), len(cs.stored)) {
			at := fmt.Sprintf("%s[%d].volumeMounts", cs.path, i)
			if out, err = appendDropped(out, at, cs.sent[i].VolumeMounts, cs.stored[i].VolumeMounts); err != nil {
				return nil, err
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// appendDropped appends what each element of sent has and the same element of stored lacks,
// under path[i].
func appendDropped[T any](out []string, path string, sent, stored []T) ([]string, error) {
	for i := range min(len(sent), len(stored)) {
		a, err := asTree(sent[i])
		if err != nil {
			return nil, err
		}
		b, err := asTree(stored[i])
		if err != nil {
			return nil, err
		}
		out = appendMissing(out, fmt.Sprintf("%s[%d]", path, i), a, b)
	}
	return out, nil
}

// asTree is v as its JSON: maps, slices and scalars.
func asTree(v any) (any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var t any
	return t, json.Unmarshal(raw, &t)
}

// appendMissing appends the paths under path that sent has and stored lacks.
func appendMissing(out []string, path string, sent, stored any) []string {
	switch a := sent.(type) {
	case map[string]any:
		b, ok := stored.(map[string]any)
		if !ok {
			return out
		}
		for k, v := range a {
			w, ok := b[k]
			if !ok {
				out = append(out, path+"."+k)
				continue
			}
			out = appendMissing(out, path+"."+k, v, w)
		}
	case []any:
		b, ok := stored.([]any)
		if !ok {
			return out
		}
		for i := range min(len(a), len(b)) {
			out = appendMissing(out, fmt.Sprintf("%s[%d]", path, i), a[i], b[i])
		}
	}
	return out
}
