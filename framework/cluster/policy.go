package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/manifests"
)

// PolicyLabel selects, on a case's pod or PersistentVolume, the binding of its allowlist.
const PolicyLabel = "volperm.dev/policy"

// deniedPrefix precedes a ValidatingAdmissionPolicy's message in the apiserver's rejection
// (k8s.io/apiserver pkg/admission/plugin/policy/validating dispatcher.go).
const deniedPrefix = "denied request: "

// policySeparator joins the policy's field.Error texts (manifests/flexvolume-vap.yaml).
const policySeparator = " | "

// policyParams are the ConfigMap data of an allowlist (manifests/flexvolume-vap.yaml header).
func policyParams(p *framework.FlexVolumePolicy) map[string]string {
	data := map[string]string{"allowedDriversDisplay": strings.Join(p.AllowedDrivers, ", ")}
	for i, t := range p.AllowedVolumeTypes {
		data[fmt.Sprintf("type.%d", i)] = t
	}
	for i, d := range p.AllowedDrivers {
		data[fmt.Sprintf("driver.%d", i)] = d
	}
	return data
}

// installPolicy creates or updates the allowlist policy from manifests/flexvolume-vap.yaml.
func (t *Target) installPolicy(ctx context.Context) (string, error) {
	var vap admissionv1.ValidatingAdmissionPolicy
	if err := yaml.UnmarshalStrict(manifests.FlexVolumeVAP, &vap); err != nil {
		return "", fmt.Errorf("manifests/flexvolume-vap.yaml: %w", err)
	}
	api := t.client.AdmissionregistrationV1().ValidatingAdmissionPolicies()
	var err error
	for range 5 {
		err = t.call(ctx, func(ctx context.Context) error {
			old, err := api.Get(ctx, vap.Name, metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
				_, err = api.Create(ctx, &vap, metav1.CreateOptions{})
			case err == nil:
				vap.ResourceVersion = old.ResourceVersion
				_, err = api.Update(ctx, &vap, metav1.UpdateOptions{})
			}
			return err
		})
		// Another run (or an attempt whose answer was lost) installed or updated it
		// meanwhile: read it again.
		if !apierrors.IsAlreadyExists(err) && !apierrors.IsConflict(err) {
			break
		}
	}
	if err != nil {
		return "", fmt.Errorf("install policy %s: %w", vap.Name, err)
	}
	return vap.Name, nil
}

// bindPolicies gives every case with a FlexVolumePolicy its parameters and binding, selected by
// PolicyLabel=<key>, and waits until a canary binding denies: bindings take effect when the
// apiserver's policy informer has seen them. It returns the bindings to delete.
func (t *Target) bindPolicies(ctx context.Context, ns string, runs []*caseRun) ([]string, error) {
	keys := map[*caseRun]string{}
	for _, r := range runs {
		if r.err == nil && r.c.FlexVolumePolicy != nil {
			keys[r] = fmt.Sprintf("p%d", r.id)
		}
	}
	if len(keys) == 0 {
		return nil, nil
	}
	policy, err := t.installPolicy(ctx)
	if err != nil {
		return nil, err
	}
	var bindings []string
	bind := func(key string, data map[string]string) error {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: key, Namespace: ns, Labels: ownedLabels()}, Data: data}
		if err := t.create(ctx, func(ctx context.Context) error {
			_, err := t.client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
			return err
		}); err != nil {
			return fmt.Errorf("policy parameters %s: %w", key, err)
		}
		deny := admissionv1.DenyAction
		b := &admissionv1.ValidatingAdmissionPolicyBinding{
			ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + key, Labels: ownedLabels()},
			Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
				PolicyName:        policy,
				ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
				ParamRef:          &admissionv1.ParamRef{Name: key, Namespace: ns, ParameterNotFoundAction: &deny},
				MatchResources: &admissionv1.MatchResources{ObjectSelector: &metav1.LabelSelector{
					MatchLabels: map[string]string{PolicyLabel: ns + "-" + key}}},
			},
		}
		if err := t.create(ctx, func(ctx context.Context) error {
			_, err := t.client.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, b, metav1.CreateOptions{})
			return err
		}); err != nil {
			return fmt.Errorf("policy binding %s: %w", b.Name, err)
		}
		bindings = append(bindings, b.Name)
		return nil
	}
	for r, key := range keys {
		if err := bind(key, policyParams(r.c.FlexVolumePolicy)); err != nil {
			return bindings, err
		}
		r.policy = ns + "-" + key
	}
	// The canary allows no volume type, so an emptyDir pod under it is denied once it is live.
	if err := bind("canary", policyParams(&framework.FlexVolumePolicy{AllowedVolumeTypes: []string{"none"}})); err != nil {
		return bindings, err
	}
	canary := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "canary", Namespace: ns, Labels: map[string]string{PolicyLabel: ns + "-canary"}},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Image: t.opts.ProbeImage}},
			Volumes:    []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		},
	}
	err = waitFor(ctx, 60*time.Second, 250*time.Millisecond, "policy bindings in effect", func() (bool, error) {
		err := t.call(ctx, func(ctx context.Context) error {
			_, err := t.client.CoreV1().Pods(ns).Create(ctx, canary, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			return err
		})
		var down *APIServerDownError
		if errors.As(err, &down) {
			return false, err
		}
		// Denied by the policy, not forbidden by a restarting apiserver's authorizer.
		return apierrors.IsForbidden(err) && policyErrors(err.Error()) != nil, nil
	})
	return bindings, err
}

func (t *Target) unbindPolicies(bindings []string) {
	ctx, cancel := context.WithTimeout(context.Background(), t.cleanupCallTimeout())
	defer cancel()
	for _, b := range bindings {
		err := t.call(ctx, func(ctx context.Context) error {
			return t.client.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Delete(ctx, b, metav1.DeleteOptions{})
		})
		if err != nil && !apierrors.IsNotFound(err) {
			t.logf("delete policy binding %s: %v (left to the cleanup at the end of the run)", b, err)
			t.mu.Lock()
			t.bindings[b] = true
			t.mu.Unlock()
		}
	}
}

// policyErrors are the field.Error texts of a policy denial, nil when err is not one.
func policyErrors(msg string) []string {
	_, rest, ok := strings.Cut(msg, deniedPrefix)
	if !ok || !strings.Contains(msg, "ValidatingAdmissionPolicy") {
		return nil
	}
	return strings.Split(rest, policySeparator)
}
