package cluster

import (
	"context"
	"fmt"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
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
