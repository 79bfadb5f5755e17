package cluster

import (
	"context"
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/volperm/volperm/framework"
)

// createNamespace creates a namespace of the run (a batch's; the admission half's), which
// deleteNamespace deletes (and Cleanup, if that fails or it gets stuck); with track, it starts
// following its pods (podTracker).
func (t *Target) createNamespace(ctx context.Context, track bool) (string, error) {
	l := maps.Clone(t.opts.NamespaceLabels)
	if l == nil {
		l = map[string]string{}
	}
	maps.Copy(l, ownedLabels())
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: framework.Namespace + "-" + randomSuffix(), Labels: l}}
	// Known to Cleanup before the create: an attempt whose answer is lost may have made it.
	t.mu.Lock()
	t.namespaces[ns.Name] = true
	t.mu.Unlock()
	err := t.create(ctx, func(ctx context.Context) error {
		_, err := t.client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return "", fmt.Errorf("create namespace: %w", err)
	}
	if track {
		t.trackPods(ns.Name)
	}
	// The ServiceAccount admission plugin rejects pods until the namespace's default account
	// exists. The controller-manager creates it, but after an apiserver restart (Reconfigure) it
	// is often in CrashLoopBackOff (it lost its leader lease), so the target creates it itself.
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns.Name, Labels: ownedLabels()}}
	err = t.create(ctx, func(ctx context.Context) error {
		_, err := t.client.CoreV1().ServiceAccounts(ns.Name).Create(ctx, sa, metav1.CreateOptions{})
		return err
	})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return ns.Name, fmt.Errorf("create service account %s/default: %w", ns.Name, err)
	}
	err = waitFor(ctx, 60*time.Second, 200*time.Millisecond, "service account "+ns.Name+"/default", func() (bool, error) {
		err := t.call(ctx, func(ctx context.Context) error {
			_, err := t.client.CoreV1().ServiceAccounts(ns.Name).Get(ctx, "default", metav1.GetOptions{})
			return err
		})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
	return ns.Name, err
}

// deleteNamespace deletes a batch namespace and its pods without waiting for them to go
// (Cleanup waits, at the end of the run); a delete that fails is left to Cleanup.
func (t *Target) deleteNamespace(ns string) {
	t.tracker(ns).stop()
	t.ranges.remove(ns + "/")
	ctx, cancel := context.WithTimeout(context.Background(), t.cleanupCallTimeout())
	defer cancel()
	zero := int64(0)
	err := t.call(ctx, func(ctx context.Context) error {
		return t.client.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
	})
	if err == nil {
		err = t.call(ctx, func(ctx context.Context) error {
			return t.client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
		})
	}
	if err != nil && !apierrors.IsNotFound(err) {
		t.logf("delete namespace %s: %v (left to the cleanup at the end of the run)", ns, err)
	}
}
