package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/execproto"
)

// admit sends the case's object to the apiserver as a dry-run create: the answer is what the
// apiserver would store (defaulted, disabled fields dropped) or its rejection.
func (r *caseRun) admit(ctx context.Context, t *Target, ns string) {
	i := r.id
	c := r.c
	if c.Pod == nil && c.PersistentVolume != nil {
		pv := c.PersistentVolume.DeepCopy()
		pv.Name = fmt.Sprintf("volperm-%s-%d", strings.TrimPrefix(ns, framework.Namespace+"-"), i)
		r.label(&pv.ObjectMeta)
		err := t.call(ctx, func(ctx context.Context) error {
			_, err := t.client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			return err
		})
		r.setAdmission(err)
		return
	}
	if c.Pod == nil {
		r.obs.Admission.Allowed = true
		return
	}
	pod := c.Pod.DeepCopy()
	pod.Name = fmt.Sprintf("case-%d", i)
	pod.Namespace = ns
	pod.UID = ""
	r.label(&pod.ObjectMeta)
	no := false
	pod.Spec.AutomountServiceAccountToken = &no // no token volume is added to the case's volumes
	if len(pod.Spec.Containers) == 0 {
		ctr := corev1.Container{Name: "probe"}
		for _, v := range pod.Spec.Volumes {
			ctr.VolumeMounts = append(ctr.VolumeMounts, corev1.VolumeMount{Name: v.Name, MountPath: "/volumes/" + v.Name})
		}
		pod.Spec.Containers = []corev1.Container{ctr}
	}
	for i := range pod.Spec.Containers {
		pod.Spec.Containers[i].Image = t.opts.ProbeImage
		pod.Spec.Containers[i].ImagePullPolicy = corev1.PullNever
	}
	var stored *corev1.Pod
	err := t.call(ctx, func(ctx context.Context) (err error) {
		stored, err = t.client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	})
	r.setAdmission(err)
	if err != nil {
		return
	}
	// v1.37 pkg/api/pod/util.go dropDisabledFields: the fields the gate-off apiserver cleared.
	if r.obs.Admission.Dropped, err = execproto.DroppedFields(pod.Spec.Volumes, stored.Spec.Volumes); err != nil {
		r.err = fmt.Errorf("admission: %w", err)
		return
	}
	if !c.AdmissionOnly {
		r.pod = stored
	}
}

// label selects the binding of the case's allowlist, if it has one.
func (r *caseRun) label(m *metav1.ObjectMeta) {
	if r.policy == "" {
		return
	}
	if m.Labels == nil {
		m.Labels = map[string]string{}
	}
	m.Labels[PolicyLabel] = r.policy
}

// setAdmission records the dry-run's answer: allowed, or the rejection's texts; an error that
// is not a rejection (the apiserver unreachable) is the target's failure for the case.
func (r *caseRun) setAdmission(err error) {
	if err == nil {
		r.obs.Admission.Allowed = true
		return
	}
	var down *APIServerDownError
	if errors.As(err, &down) || !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err) {
		r.err = fmt.Errorf("admission: %w", err)
		return
	}
	r.obs.Admission.Errors = admissionErrors(err)
	if errs := policyErrors(err.Error()); errs != nil {
		r.obs.Admission.Errors = errs
	}
}
