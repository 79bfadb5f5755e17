package cluster

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// renameSources points the volume's Secret and ConfigMap references at the case's own copies.
func (r *caseRun) renameSources(v *corev1.VolumeSource) {
	i := r.id
	rename := func(kind string, name *string) {
		u := fmt.Sprintf("c%d-%s-%s", i, kind, *name)
		r.sources = append(r.sources, source{kind: kind, name: *name, unique: u})
		*name = u
	}
	switch {
	case v.Secret != nil:
		rename("secret", &v.Secret.SecretName)
	case v.ConfigMap != nil:
		rename("configmap", &v.ConfigMap.Name)
	case v.Projected != nil:
		for _, p := range v.Projected.Sources {
			if p.Secret != nil {
				rename("secret", &p.Secret.Name)
			}
			if p.ConfigMap != nil {
				rename("configmap", &p.ConfigMap.Name)
			}
		}
	}
}

// originalNames puts back, in a set-up failure text, the names of r's objects that
// renameSources changed: the kubelet names the object it did not find (`secret "x" not found`).
func (r *caseRun) originalNames(text string) string {
	for _, s := range r.sources {
		text = strings.ReplaceAll(text, strconv.Quote(s.unique), strconv.Quote(s.name))
	}
	return text
}

// createSources makes every Secret and ConfigMap the cases project that Case.Sources gives; an
// object the case does not give is absent (docs/spec.md [atomicwriter.sources]).
func (t *Target) createSources(ctx context.Context, ns string, runs []*caseRun) error {
	done := map[string]bool{}
	for _, r := range runs {
		for _, s := range r.sources {
			if done[s.kind+"/"+s.unique] {
				continue
			}
			done[s.kind+"/"+s.unique] = true
			data, given := r.c.Sources[s.kind+"/"+s.name]
			if !given {
				continue
			}
			meta := metav1.ObjectMeta{Name: s.unique, Namespace: ns, Labels: ownedLabels()}
			err := t.create(ctx, func(ctx context.Context) error {
				var err error
				if s.kind == "secret" {
					sec := &corev1.Secret{ObjectMeta: meta, Data: map[string][]byte{}}
					for k, v := range data {
						sec.Data[k] = []byte(v)
					}
					_, err = t.client.CoreV1().Secrets(ns).Create(ctx, sec, metav1.CreateOptions{})
				} else {
					_, err = t.client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: meta, Data: data}, metav1.CreateOptions{})
				}
				return err
			})
			if err != nil {
				return fmt.Errorf("create %s %s: %w", s.kind, s.unique, err)
			}
		}
	}
	return nil
}

// originalVolumes gives text (a kubelet message naming a probe pod's volume as "c1-v0") the
// case's own volume names.
func (r *caseRun) originalVolumes(text string) string {
	for _, bv := range r.vols {
		text = strings.ReplaceAll(text, strconv.Quote(bv.unique), strconv.Quote(r.pod.Spec.Volumes[bv.index].Name))
	}
	return text
}
