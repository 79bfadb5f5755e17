package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/volperm/volperm/framework/owner"
)

// managedBy marks every object the target creates (with the owner's labels, framework/owner).
const managedBy = "app.kubernetes.io/managed-by"

// ownedLabels are the labels of every object this run creates: namespaces, cluster-scoped
// objects, and the pods, Secrets, ConfigMaps and ServiceAccounts in its namespaces (so that a
// finalizer on one of them can be told to be the run's, Cleanup).
func ownedLabels() map[string]string {
	l := owner.Self().Labels()
	l[managedBy] = "volperm"
	return l
}

// sweep deletes the namespaces and policy bindings that runs of this machine which are no
// longer alive left in the cluster (killed before their cleanup), and releases the namespaces
// of such runs that are stuck terminating (sweepDead). Objects of live runs, and of runs on
// other machines, are left alone. It logs what it does; errors are logged, not fatal.
func (t *Target) sweep(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	found, held, err := t.sweepDead(ctx, false)
	for _, f := range found {
		t.logf("sweep: removed %s, left by a run that is no longer alive", f)
	}
	for _, h := range held {
		t.logf("sweep: %s", h)
	}
	if err != nil {
		t.logf("sweep: %v", err)
	}
}

// sweepDead finds what runs of this machine that are no longer alive left on the cluster and,
// unless dryRun, removes it: their namespaces (deleted), the finalizers of their objects in
// those of their namespaces that are stuck terminating (releaseFinalizers with the dead run's
// mark), and their policy bindings. found has one line per item; held names the stuck
// namespaces that objects not of that run hold (left as they are).
func (t *Target) sweepDead(ctx context.Context, dryRun bool) (found, held []string, err error) {
	sel := metav1.ListOptions{LabelSelector: managedBy + "=volperm," + owner.LabelPID}
	dead := func(l map[string]string) (owner.Mark, bool) {
		m, ok := owner.FromLabels(l)
		return m, ok && !m.Alive()
	}
	var nss *corev1.NamespaceList
	if err := t.call(ctx, func(ctx context.Context) (err error) {
		nss, err = t.client.CoreV1().Namespaces().List(ctx, sel)
		return err
	}); err != nil {
		return nil, nil, fmt.Errorf("list namespaces: %w", err)
	}
	var errs []error
	for _, ns := range nss.Items {
		m, ok := dead(ns.Labels)
		if !ok {
			continue
		}
		if ns.DeletionTimestamp == nil {
			if !dryRun {
				err := t.call(ctx, func(ctx context.Context) error {
					return t.client.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{})
				})
				if err != nil && !apierrors.IsNotFound(err) {
					errs = append(errs, fmt.Errorf("delete namespace %s of %s: %w", ns.Name, m, err))
					continue
				}
			}
			found = append(found, fmt.Sprintf("namespace %s of %s", ns.Name, m))
			continue
		}
		if !stuck(&ns, time.Time{}) {
			continue // terminating, and going
		}
		if dryRun {
			found = append(found, fmt.Sprintf("the finalizers of the objects of %s in namespace %s, stuck terminating", m, ns.Name))
			continue
		}
		removed, foreign, err := t.releaseFinalizers(ctx, &ns, m)
		for _, r := range removed {
			found = append(found, fmt.Sprintf("the finalizers of %s in namespace %s (stuck terminating) of %s", r, ns.Name, m))
		}
		if len(foreign) > 0 {
			held = append(held, fmt.Sprintf("namespace %s of %s is stuck terminating, held by objects that are not that run's (left as they are): %v", ns.Name, m, foreign))
		}
		errs = append(errs, err)
	}
	var bs *admissionv1.ValidatingAdmissionPolicyBindingList
	if err := t.call(ctx, func(ctx context.Context) (err error) {
		bs, err = t.client.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().List(ctx, sel)
		return err
	}); err != nil {
		return found, held, errors.Join(append(errs, fmt.Errorf("list policy bindings: %w", err))...)
	}
	for _, b := range bs.Items {
		m, ok := dead(b.Labels)
		if !ok {
			continue
		}
		if !dryRun {
			err := t.call(ctx, func(ctx context.Context) error {
				return t.client.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Delete(ctx, b.Name, metav1.DeleteOptions{})
			})
			if err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("delete policy binding %s of %s: %w", b.Name, m, err))
				continue
			}
		}
		found = append(found, fmt.Sprintf("policy binding %s of %s", b.Name, m))
	}
	return found, held, errors.Join(errs...)
}
