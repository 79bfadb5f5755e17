package cluster

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/volperm/volperm/framework/owner"
)

// managedBy marks every object the target creates (with the owner's labels, framework/owner).
const managedBy = "app.kubernetes.io/managed-by"

// ownedLabels are the labels of a namespace or cluster-scoped object this run creates.
func ownedLabels() map[string]string {
	l := owner.Self().Labels()
	l[managedBy] = "volperm"
	return l
}

// sweep deletes the namespaces and policy bindings that runs of this machine which are no
// longer alive left in the cluster (killed before their cleanup). Objects of live runs, and of
// runs on other machines, are left alone. It logs what it deletes; errors are logged, not fatal.
func (t *Target) sweep(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	sel := metav1.ListOptions{LabelSelector: managedBy + "=volperm," + owner.LabelPID}
	dead := func(l map[string]string) (owner.Mark, bool) {
		m, ok := owner.FromLabels(l)
		return m, ok && !m.Alive()
	}
	nss, err := t.client.CoreV1().Namespaces().List(ctx, sel)
	if err != nil {
		t.logf("sweep: list namespaces: %v", err)
		return
	}
	for _, ns := range nss.Items {
		if m, ok := dead(ns.Labels); ok && ns.DeletionTimestamp == nil {
			err := t.client.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				t.logf("sweep: delete namespace %s of %s: %v", ns.Name, m, err)
				continue
			}
			t.logf("sweep: deleted namespace %s, left by %s", ns.Name, m)
		}
	}
	bs, err := t.client.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().List(ctx, sel)
	if err != nil {
		t.logf("sweep: list policy bindings: %v", err)
		return
	}
	for _, b := range bs.Items {
		if m, ok := dead(b.Labels); ok {
			err := t.client.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Delete(ctx, b.Name, metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				t.logf("sweep: delete policy binding %s of %s: %v", b.Name, m, err)
				continue
			}
			t.logf("sweep: deleted policy binding %s, left by %s", b.Name, m)
		}
	}
}
