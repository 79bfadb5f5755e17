package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	metadatafake "k8s.io/client-go/metadata/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/volperm/volperm/framework/owner"
)

func TestTimeoutsFromEnv(t *testing.T) {
	t.Setenv(EnvPodStartTimeout, "20s")
	t.Setenv(EnvAPIServerTimeout, "")
	got, err := TimeoutsFromEnv()
	if err != nil || got.PodStart != 20*time.Second || got.APIServer != 0 {
		t.Fatalf("%+v, %v", got, err)
	}
	if d := got.withDefaults(); d.PodStart != 20*time.Second || d.APIServer != defaultAPIServer {
		t.Errorf("defaults: %+v", d)
	}
	if (Timeouts{}).withDefaults().PodStart != 120*time.Second {
		t.Error("the pod start default is no longer 120 s")
	}
	t.Setenv(EnvAPIServerTimeout, "soon")
	if _, err := TimeoutsFromEnv(); err == nil || !strings.Contains(err.Error(), EnvAPIServerTimeout) {
		t.Errorf("a bad duration: %v", err)
	}
}

func TestTransient(t *testing.T) {
	refused := fmt.Errorf("Get \"https://127.0.0.1:1/api\": dial tcp 127.0.0.1:1: connect: %w", syscall.ECONNREFUSED)
	gr := schema.GroupResource{Resource: "pods"}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"connection refused", refused, true},
		{"EOF", fmt.Errorf("Get \"https://x/api\": %w", io.EOF), true},
		{"unavailable", apierrors.NewServiceUnavailable("starting"), true},
		{"too many requests", apierrors.NewTooManyRequests("busy", 1), true},
		{"attempt timed out", fmt.Errorf("Get x: %w", context.DeadlineExceeded), true},
		{"not found", apierrors.NewNotFound(gr, "p"), false},
		{"invalid", apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "p", nil), false},
		{"already given up", &APIServerDownError{For: time.Second, Err: refused}, false},
		{"forbidden by RBAC", apierrors.NewForbidden(gr, "p", errors.New(`User "kubernetes-admin" cannot create resource "pods"`)), false},
	} {
		if got := isTransient(tc.err); got != tc.want {
			t.Errorf("%s: isTransient(%v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
}

func TestRBACDenialsOfAStartingAPIServerAreRetried(t *testing.T) {
	defer func(g time.Duration) { rbacGrace = g }(rbacGrace)
	rbacGrace = 300 * time.Millisecond
	gr := schema.GroupResource{Resource: "pods"}
	denied := apierrors.NewForbidden(gr, "p", errors.New(`User "kubernetes-admin" cannot get resource "pods"`))
	if !isRBACDenial(denied) {
		t.Fatal("not an RBAC denial")
	}
	policy := apierrors.NewForbidden(gr, "p", errors.New(`admission webhook denied request: ValidatingAdmissionPolicy 'x' denied request: User "a" cannot`))
	if isRBACDenial(policy) {
		t.Error("a policy's denial taken for the authorizer's")
	}
	ready := true
	tg := &Target{opts: Options{Log: io.Discard, Timeouts: Timeouts{APIServer: 5 * time.Second}}, ready: func(context.Context) bool { return ready }}
	attempts := 0
	err := tg.call(context.Background(), func(context.Context) error {
		attempts++
		if attempts < 3 {
			return denied
		}
		return nil
	})
	if err != nil || attempts != 3 {
		t.Errorf("denied twice by a starting apiserver, then allowed: %v after %d attempts", err, attempts)
	}
	// Ready, and still denied after the grace: a real denial.
	start := time.Now()
	err = tg.call(context.Background(), func(context.Context) error { return denied })
	if !apierrors.IsForbidden(err) || time.Since(start) > 3*time.Second {
		t.Errorf("a real denial: %v after %s", err, time.Since(start))
	}
	// Not ready: retried until the apiserver's bound.
	ready = false
	tg.opts.Timeouts.APIServer = time.Second
	err = tg.call(context.Background(), func(context.Context) error { return denied })
	var down *APIServerDownError
	if !errors.As(err, &down) {
		t.Errorf("denied by an apiserver that is not ready: %v", err)
	}
}

func TestCallGivesUpAfterTheAPIServerBound(t *testing.T) {
	tg := &Target{opts: Options{Log: io.Discard, Timeouts: Timeouts{APIServer: 500 * time.Millisecond}}}
	refused := fmt.Errorf("dial tcp: connect: %w", syscall.ECONNREFUSED)
	start := time.Now()
	attempts := 0
	err := tg.call(context.Background(), func(context.Context) error { attempts++; return refused })
	var down *APIServerDownError
	if !errors.As(err, &down) || !strings.HasPrefix(err.Error(), "the apiserver did not answer for ") || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("err = %v", err)
	}
	if el := time.Since(start); el > 2*time.Second || attempts < 2 {
		t.Errorf("gave up after %s and %d attempts", el, attempts)
	}
	if apierrors.IsForbidden(err) || apierrors.IsInvalid(err) {
		t.Error("the verdict looks like an admission answer")
	}
}

func TestCallRetriesUntilTheAPIServerAnswers(t *testing.T) {
	tg := &Target{opts: Options{Log: io.Discard, Timeouts: Timeouts{APIServer: 10 * time.Second}}}
	attempts := 0
	err := tg.call(context.Background(), func(context.Context) error {
		attempts++
		if attempts < 3 {
			return apierrors.NewServiceUnavailable("starting")
		}
		return nil
	})
	if err != nil || attempts != 3 {
		t.Fatalf("err %v after %d attempts", err, attempts)
	}
	if o := tg.APIServerOutages(); len(o) != 1 {
		t.Errorf("outages %v, want one", o)
	}
	// An error that is not the apiserver's absence is returned at once.
	attempts = 0
	nf := apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, "p")
	if err := tg.call(context.Background(), func(context.Context) error { attempts++; return nf }); !apierrors.IsNotFound(err) || attempts != 1 {
		t.Errorf("not found: %v after %d attempts", err, attempts)
	}
	// Nor is a permanent one, however it looks.
	attempts = 0
	cut := permanentError{io.ErrUnexpectedEOF}
	if err := tg.call(context.Background(), func(context.Context) error { attempts++; return cut }); err != io.ErrUnexpectedEOF || attempts != 1 {
		t.Errorf("permanent: %v after %d attempts", err, attempts)
	}
}

func TestCreateTakesAlreadyExistsAfterALostAnswer(t *testing.T) {
	tg := &Target{opts: Options{Log: io.Discard}}
	attempts := 0
	err := tg.create(context.Background(), func(context.Context) error {
		attempts++
		if attempts == 1 {
			return io.EOF
		}
		return apierrors.NewAlreadyExists(schema.GroupResource{Resource: "pods"}, "p")
	})
	if err != nil {
		t.Errorf("a create whose first answer was lost: %v", err)
	}
	err = tg.create(context.Background(), func(context.Context) error {
		return apierrors.NewAlreadyExists(schema.GroupResource{Resource: "pods"}, "p")
	})
	if !apierrors.IsAlreadyExists(err) {
		t.Errorf("a create of an object that was there: %v", err)
	}
}

func TestPodFate(t *testing.T) {
	evicted := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{
		Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "EvictionByEvictionAPI", Message: "Eviction API: evicting"}}}}
	if f := podFate(evicted); !strings.HasPrefix(f, "was evicted through the Eviction API") || !strings.Contains(f, "EvictionByEvictionAPI") {
		t.Errorf("eviction: %q", f)
	}
	kubelet := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted", Message: "The node was low on resource: ephemeral-storage."}}
	if f := podFate(kubelet); !strings.Contains(f, "evicted by the kubelet (phase Failed, reason Evicted") {
		t.Errorf("kubelet eviction: %q", f)
	}
	if f := podFate(&corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning}}); f != "" {
		t.Errorf("a running pod: %q", f)
	}

	pt := &podTracker{fates: map[string]string{}, mine: map[string]bool{}}
	p := evicted.DeepCopy()
	p.Name = "probe-0"
	pt.see(watch.Event{Type: watch.Modified, Object: p})
	pt.see(watch.Event{Type: watch.Deleted, Object: p})
	if f := pt.fate("probe-0"); !strings.HasPrefix(f, "was evicted through the Eviction API") || !strings.HasSuffix(f, ", then deleted") {
		t.Errorf("evicted, then deleted: %q", f)
	}
	plain := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "probe-1"}}
	pt.see(watch.Event{Type: watch.Deleted, Object: plain})
	if f := pt.fate("probe-1"); f != "was deleted, not by this run" {
		t.Errorf("deleted by someone: %q", f)
	}
	pt.ours("probe-2")
	pt.see(watch.Event{Type: watch.Deleted, Object: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "probe-2"}}})
	if f := pt.fate("probe-2"); f != "" {
		t.Errorf("deleted by the target: %q", f)
	}
}

func TestNodeStatusTextNamesAKubeletThatStopped(t *testing.T) {
	now := time.Now()
	forty := int32(40)
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "w"}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{
		Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: metav1.NewTime(now.Add(-31 * time.Second))}}}}
	lease := &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{LeaseDurationSeconds: &forty, RenewTime: &metav1.MicroTime{Time: now.Add(-27 * time.Second)}}}
	got := nodeStatusText(n, lease, now)
	for _, want := range []string{"node w: Ready=True (KubeletReady), lease renewed 27s ago (the kubelet renews it every 10s: it is not running or cannot reach the apiserver)"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	n.Status.Conditions[0].Status, n.Status.Conditions[0].Reason, n.Status.Conditions[0].Message = corev1.ConditionUnknown, "NodeStatusUnknown", "Kubelet stopped posting node status."
	n.Status.Conditions[0].LastTransitionTime = metav1.NewTime(now.Add(-12 * time.Second))
	n.Spec.Taints = []corev1.Taint{{Key: "node.kubernetes.io/unreachable", Effect: corev1.TaintEffectNoSchedule}}
	if got := nodeStatusText(n, lease, now); !strings.Contains(got, "Ready=Unknown since 12s ago (NodeStatusUnknown: Kubelet stopped posting node status.)") ||
		!strings.Contains(got, "taints node.kubernetes.io/unreachable:NoSchedule") {
		t.Errorf("a node gone NotReady: %q", got)
	}
	lease.Spec.RenewTime = &metav1.MicroTime{Time: now.Add(-3 * time.Second)}
	if got := nodeStatusText(n, lease, now); strings.Contains(got, "not running") {
		t.Errorf("a fresh lease: %q", got)
	}
}

func TestPodStatusText(t *testing.T) {
	p := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending}}
	if got := podStatusText(p); got != "pod Pending, no container status from the kubelet yet" {
		t.Errorf("%q", got)
	}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "probe", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}}
	if got := podStatusText(p); got != "pod Pending, container probe waiting: ContainerCreating" {
		t.Errorf("%q", got)
	}
}

func TestBelongs(t *testing.T) {
	self := owner.Self()
	l := ownedLabels()
	if !belongs(l, self) {
		t.Error("this run's labels are not this run's")
	}
	other := self
	other.PID++
	if belongs(l, other) {
		t.Error("this run's labels are another run's")
	}
	delete(l, managedBy)
	if belongs(l, self) {
		t.Error("owner labels without managed-by volperm count")
	}
	if belongs(nil, self) {
		t.Error("no labels count")
	}
}

func TestStuck(t *testing.T) {
	now := time.Now()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &metav1.Time{Time: now.Add(-time.Second)}}}
	if stuck(ns, now) {
		t.Error("a namespace terminating for a second")
	}
	ns.Status.Conditions = []corev1.NamespaceCondition{{Type: corev1.NamespaceFinalizersRemaining, Status: corev1.ConditionTrue}}
	if !stuck(ns, now) {
		t.Error("finalizers remaining, as the namespace controller says")
	}
	ns.Status.Conditions = nil
	ns.DeletionTimestamp = &metav1.Time{Time: now.Add(-time.Hour)}
	if !stuck(ns, time.Time{}) || stuck(ns, now) {
		t.Error("terminating for an hour: stuck for a sweep, not yet for a cleanup that just began")
	}
}

// A kind the run may not list holds nothing of the run's: releaseFinalizers skips it at once
// (the in-cluster runner's RBAC lists few kinds; retried as a starting apiserver's denial, ten
// seconds each outlasted the cleanup's bound), and lists the kinds it may.
func TestListHeldSkipsKindsTheRunMayNotList(t *testing.T) {
	meta := metadatafake.NewSimpleMetadataClient(metadatafake.NewTestScheme())
	pvcs := schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}
	pods := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	meta.PrependReactor("list", "persistentvolumeclaims", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "persistentvolumeclaims"}, "",
			errors.New(`User "system:serviceaccount:volperm-run:volperm" cannot list resource "persistentvolumeclaims"`))
	})
	meta.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, &metav1.List{Items: []runtime.RawExtension{{Object: &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "probe-0"}}}}}, nil
	})
	tg := &Target{opts: Options{Log: io.Discard}, meta: meta, ready: func(context.Context) bool { return true }}
	start := time.Now()
	items, err := tg.listHeld(context.Background(), pvcs, "ns")
	if items != nil || err != nil || time.Since(start) > rbacGrace/2 {
		t.Errorf("a kind the run may not list: %v, %v after %s; want nothing at once", items, err, time.Since(start))
	}
	items, err = tg.listHeld(context.Background(), pods, "ns")
	if err != nil || items == nil || len(items.Items) != 1 {
		t.Errorf("pods: %v, %v; want the one", items, err)
	}
}
