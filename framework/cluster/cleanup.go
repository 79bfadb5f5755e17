package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/volperm/volperm/framework/owner"
	"github.com/volperm/volperm/framework/sweep"
)

// cleanupTimeout bounds Cleanup, however many namespaces are left and whatever holds them.
const cleanupTimeout = 90 * time.Second

// stuckAfter is how long a terminating namespace may take before Cleanup looks into what holds
// it, when the namespace controller has not said so already (NamespaceFinalizersRemaining).
const stuckAfter = 10 * time.Second

// noFinalizers is the merge patch that removes an object's metadata.finalizers.
var noFinalizers = []byte(`{"metadata":{"finalizers":null}}`)

// Cleanup deletes the batch namespaces of this target that are still there (a delete the
// apiserver did not answer) and waits, for up to cleanupTimeout, until they are gone. A
// namespace stuck terminating is looked into: the finalizers of objects in it that carry this
// run's owner labels (framework/owner), and of the namespace itself, are removed, since
// nothing else will finish them; objects without those labels are left as they are and named.
// It logs what it did and returns an error naming each namespace still there and what holds
// it; it never blocks longer than the bound.
func (t *Target) Cleanup(ctx context.Context) error {
	t.mu.Lock()
	names := sortedKeys(t.namespaces)
	bindings := sortedKeys(t.bindings)
	t.mu.Unlock()
	if len(names) == 0 && len(bindings) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, cleanupTimeout)
	defer cancel()
	start := time.Now()
	var errs []error
	for _, b := range bindings {
		err := t.call(ctx, func(ctx context.Context) error {
			return t.client.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Delete(ctx, b, metav1.DeleteOptions{})
		})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("policy binding %s: %w", b, err))
			continue
		}
		t.mu.Lock()
		delete(t.bindings, b)
		t.mu.Unlock()
	}
	pending := map[string]bool{}
	for _, ns := range names {
		pending[ns] = true
	}
	held := map[string]string{}         // namespace -> the objects, not this run's, that hold it
	lastErr := map[string]error{}       // namespace -> the last error reading or deleting it
	inspected := map[string]time.Time{} // namespace -> when its finalizers were last looked into
	for len(pending) > 0 && ctx.Err() == nil {
		for _, name := range sortedKeys(pending) {
			var ns *corev1.Namespace
			err := t.call(ctx, func(ctx context.Context) (err error) {
				ns, err = t.client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
				return err
			})
			switch {
			case apierrors.IsNotFound(err):
				delete(pending, name)
				t.forgetNamespace(name)
				continue
			case err != nil:
				lastErr[name] = err
				continue
			case ns.DeletionTimestamp == nil:
				err = t.call(ctx, func(ctx context.Context) error {
					return t.client.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
				})
				if err != nil && !apierrors.IsNotFound(err) {
					lastErr[name] = err
				}
				continue
			}
			if !stuck(ns, start) || time.Since(inspected[name]) < 5*time.Second {
				continue
			}
			inspected[name] = time.Now()
			removed, foreign, err := t.releaseFinalizers(ctx, ns, owner.Self())
			for _, r := range removed {
				t.logf("cleanup: namespace %s is stuck terminating: removed the finalizers of %s, this run's", name, r)
			}
			if err != nil {
				lastErr[name] = err
			}
			if len(removed) == 0 && len(foreign) > 0 {
				// Nothing of this run holds it any more: waiting longer changes nothing.
				held[name] = strings.Join(foreign, ", ")
				delete(pending, name)
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
	for _, name := range sortedKeys(held) {
		errs = append(errs, fmt.Errorf("namespace %s is stuck terminating, held by objects that are not this run's (left as they are): %s", name, held[name]))
	}
	for _, name := range sortedKeys(pending) {
		why := "still terminating"
		if err := lastErr[name]; err != nil {
			why = err.Error()
		}
		errs = append(errs, fmt.Errorf("namespace %s still there after %s: %s", name, time.Since(start).Round(time.Second), why))
	}
	if len(errs) > 0 {
		err := fmt.Errorf("cluster cleanup: %w", errors.Join(errs...))
		t.logf("%v", err)
		return err
	}
	t.logf("cleanup: %d namespaces gone, in %s", len(names), time.Since(start).Round(100*time.Millisecond))
	return nil
}

func (t *Target) forgetNamespace(name string) {
	t.mu.Lock()
	pt := t.trackers[name]
	delete(t.namespaces, name)
	delete(t.trackers, name)
	t.mu.Unlock()
	if pt != nil {
		pt.stop()
	}
}

// stuck says whether a terminating namespace is worth looking into: the namespace controller
// says that finalizers remain, or it has been terminating for stuckAfter (since since, at the
// latest).
func stuck(ns *corev1.Namespace, since time.Time) bool {
	for _, c := range ns.Status.Conditions {
		if c.Type == corev1.NamespaceFinalizersRemaining && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	began := ns.DeletionTimestamp.Time
	if since.After(began) {
		began = since
	}
	return time.Since(began) >= stuckAfter
}

// belongs says whether labels mark an object of run m (managed by volperm, m's owner labels).
func belongs(labels map[string]string, m owner.Mark) bool {
	got, ok := owner.FromLabels(labels)
	return ok && labels[managedBy] == "volperm" && got == m
}

// releaseFinalizers removes the finalizers of the objects in namespace ns (of every namespaced
// resource the apiserver serves) that carry run m's labels, and of ns itself if it does. It
// returns those it released ("configmaps/x (finalizers a, b)") and the objects with finalizers
// it left because they are not m's.
func (t *Target) releaseFinalizers(ctx context.Context, ns *corev1.Namespace, m owner.Mark) (removed, foreign []string, err error) {
	var lists []*metav1.APIResourceList
	err = t.call(ctx, func(ctx context.Context) (err error) {
		lists, err = t.disco.ServerPreferredNamespacedResourcesWithContext(ctx)
		if len(lists) > 0 {
			return nil // some groups did not answer (an aggregated API): the others are enough
		}
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("namespace %s: list the resources the apiserver serves: %w", ns.Name, err)
	}
	var errs []error
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !hasVerbs(r.Verbs, "list", "patch") {
				continue
			}
			gvr := gv.WithResource(r.Name)
			items, err := t.listHeld(ctx, gvr, ns.Name)
			if err != nil {
				errs = append(errs, fmt.Errorf("list %s in %s: %w", r.Name, ns.Name, err))
			}
			if items == nil {
				continue
			}
			for _, it := range items.Items {
				if len(it.Finalizers) == 0 {
					continue
				}
				what := fmt.Sprintf("%s/%s (finalizers %s)", r.Name, it.Name, strings.Join(it.Finalizers, ", "))
				if !belongs(it.Labels, m) {
					foreign = append(foreign, what)
					continue
				}
				err := t.call(ctx, func(ctx context.Context) error {
					_, err := t.meta.Resource(gvr).Namespace(ns.Name).Patch(ctx, it.Name, types.MergePatchType, noFinalizers, metav1.PatchOptions{})
					return err
				})
				if err != nil && !apierrors.IsNotFound(err) {
					errs = append(errs, fmt.Errorf("remove the finalizers of %s in %s: %w", what, ns.Name, err))
					continue
				}
				removed = append(removed, what)
			}
		}
	}
	if len(ns.Finalizers) > 0 && belongs(ns.Labels, m) {
		what := fmt.Sprintf("namespace %s (finalizers %s)", ns.Name, strings.Join(ns.Finalizers, ", "))
		err := t.call(ctx, func(ctx context.Context) error {
			_, err := t.client.CoreV1().Namespaces().Patch(ctx, ns.Name, types.MergePatchType, noFinalizers, metav1.PatchOptions{})
			return err
		})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("remove the finalizers of %s: %w", what, err))
		} else {
			removed = append(removed, what)
		}
	}
	return removed, foreign, errors.Join(errs...)
}

// listHeld lists the objects of gvr in namespace ns for releaseFinalizers; nil without an error
// when the kind is not served there or the run may not list it. A kind the run may not list holds
// nothing the run made (it lists what it creates), and its denial is not retried as a starting
// apiserver's is (rbacGrace): the in-cluster runner may list few kinds, and ten seconds for each
// of the others outlasted cleanupTimeout (TestInClusterRun, red once in CI under load).
func (t *Target) listHeld(ctx context.Context, gvr schema.GroupVersionResource, ns string) (*metav1.PartialObjectMetadataList, error) {
	var items *metav1.PartialObjectMetadataList
	err := t.call(ctx, func(ctx context.Context) (err error) {
		items, err = t.meta.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
		if apierrors.IsForbidden(err) {
			return permanentError{err}
		}
		return err
	})
	if apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) || apierrors.IsForbidden(err) {
		return nil, nil
	}
	return items, err
}

func hasVerbs(verbs metav1.Verbs, want ...string) bool {
	for _, w := range want {
		found := false
		for _, v := range verbs {
			if v == w {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// A run records each cluster it works on (not kind's, which go with the run): if it is
// killed, `volperm cleanup` (and the next run) find the cluster there and sweep what the
// run left on it (docs/cleanup.md).

// recordDirPrefix names a record's directory under os.TempDir(); recordFile is the record in
// it (not owner.MarkerFile: the case-root sweeper must leave the directory to this one).
const (
	recordDirPrefix = "volperm-cluster-"
	recordFile      = ".volperm-cluster.json"
)

// Record is what `volperm cleanup` needs to reach a cluster on which a run made objects.
type Record struct {
	Owner owner.Mark `json:"owner"`
	// Kubeconfig are the kubeconfig files the run read, in client-go's precedence.
	Kubeconfig []string `json:"kubeconfig"`
	// Context is the kubeconfig context of the cluster.
	Context string `json:"context"`
	// Server is the apiserver's address, for messages.
	Server string `json:"server"`
}

// WriteRecord records r in a directory of its own under os.TempDir() and returns it.
func WriteRecord(r Record) (string, error) {
	dir, err := os.MkdirTemp("", recordDirPrefix)
	if err != nil {
		return "", fmt.Errorf("record the cluster for volperm cleanup: %w", err)
	}
	if err := sweep.WriteRecord(dir, recordFile, r); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("record the cluster for volperm cleanup: %w", err)
	}
	return dir, nil
}

var writeRecord = WriteRecord

// where names the recorded cluster: `context "kind-x" (https://127.0.0.1:4242)`.
func (r Record) where() string {
	ctx := "the current context"
	if r.Context != "" {
		ctx = fmt.Sprintf("context %q", r.Context)
	}
	return fmt.Sprintf("%s of %s (%s)", ctx, strings.Join(r.Kubeconfig, ":"), r.Server)
}

// removeRecord removes this run's record: nothing of it is left on the cluster.
func (t *Target) removeRecord() {
	t.mu.Lock()
	dir := t.record
	t.record = ""
	t.mu.Unlock()
	if dir != "" {
		os.RemoveAll(dir)
	}
}

func init() {
	sweep.Register("cluster objects", sweepRecorded)
}

// sweepRecorded sweeps each cluster that a run no longer alive recorded (sweepDead), then
// removes the record. A record whose kubeconfig no longer has the cluster is removed; one
// whose cluster does not answer is kept, for the next cleanup.
func sweepRecorded(ctx context.Context, o sweep.Options) ([]string, error) {
	var found []string
	var errs []error
	for _, d := range sweep.DeadRecords(recordDirPrefix, recordFile, func(r *Record) owner.Mark { return r.Owner }) {
		dir, rec := d.Dir, d.Record
		rules := &clientcmd.ClientConfigLoadingRules{Precedence: rec.Kubeconfig}
		cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules,
			&clientcmd.ConfigOverrides{CurrentContext: rec.Context}).ClientConfig()
		if err != nil {
			found = append(found, fmt.Sprintf("record %s of %s: its cluster (%s) is not in the kubeconfig any more (%v)", dir, rec.Owner, rec.where(), err))
			if !o.DryRun {
				errs = append(errs, os.RemoveAll(dir))
			}
			continue
		}
		t, err := newTarget(Options{Timeouts: Timeouts{APIServer: 5 * time.Second}, Log: io.Discard}, cfg)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		sctx, cancel := context.WithTimeout(ctx, time.Minute)
		items, held, err := t.sweepDead(sctx, o.DryRun)
		cancel()
		for _, it := range items {
			found = append(found, fmt.Sprintf("%s on the cluster of %s", it, rec.where()))
		}
		for _, h := range held {
			// Reported, and not retried: only whoever owns those objects can finish them.
			errs = append(errs, fmt.Errorf("cluster of %s: %s", rec.where(), h))
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("cluster of %s, recorded in %s: %w (the record is kept for the next cleanup; remove the directory to forget the cluster)", rec.where(), dir, err))
			continue
		}
		found = append(found, fmt.Sprintf("record %s of %s", dir, rec.Owner))
		if !o.DryRun {
			errs = append(errs, os.RemoveAll(dir))
		}
	}
	return found, errors.Join(errs...)
}
