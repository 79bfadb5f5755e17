package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
	var warned *warningCollector
	// The case's fieldValidation ("" = the apiserver's default, Warn, as client-go sends);
	// docs/spec.md [releases.apiserver-unknown-field].
	opts := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: c.FieldValidation}
	err := t.call(ctx, func(ctx context.Context) (err error) {
		ctx, warned = withWarnings(ctx) // the last attempt's
		stored, err = t.admitClient.CoreV1().Pods(ns).Create(ctx, pod, opts)
		return err
	})
	r.setAdmission(err)
	if err != nil {
		return
	}
	warnings, unknown := warned.unknownFields()
	r.obs.Admission.Warnings = warnings
	// v1.37 pkg/api/pod/util.go dropDisabledFields: the fields the gate-off apiserver cleared;
	// a field the apiserver's release does not know is not kept either, but it was not dropped:
	// it is an unknown field, warned about.
	dropped, err := execproto.DroppedFields(pod.Spec.Volumes, stored.Spec.Volumes)
	if err != nil {
		r.err = fmt.Errorf("admission: %w", err)
		return
	}
	for _, d := range dropped {
		if !slices.Contains(unknown, d) {
			r.obs.Admission.Dropped = append(r.obs.Admission.Dropped, d)
		}
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
	// A rejection is Invalid (validation), Forbidden (admission) or, for a body the apiserver's
	// release cannot decode strictly, BadRequest (k8s.io/apiserver handlers/create.go
	// transformDecodeError: "... strict decoding error: unknown field ...").
	if errors.As(err, &down) || !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err) && !strictDecodingError(err) {
		r.err = fmt.Errorf("admission: %w", err)
		return
	}
	r.obs.Admission.Errors = admissionErrors(err)
	if errs := policyErrors(err.Error()); errs != nil {
		r.obs.Admission.Errors = errs
	}
}

// strictDecodingError says whether err is the apiserver's refusal of a body with a field its
// release does not know, under fieldValidation Strict.
func strictDecodingError(err error) bool {
	return apierrors.IsBadRequest(err) && strings.Contains(err.Error(), "strict decoding error")
}
