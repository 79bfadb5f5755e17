package cluster

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
)

// What happened to a pod that the target did not do (an eviction, a deletion, a failure) is
// read from a watch on each batch namespace's pods: by the time an exec fails, an evicted pod
// may be gone, and with it the condition that said why.

// podTracker follows the pods of one batch namespace and keeps, per pod, what happened to it
// that the target did not do.
type podTracker struct {
	mu       sync.Mutex
	fates    map[string]string
	mine     map[string]bool // pods the target is deleting itself
	allMine  bool            // the target is deleting them all (its namespace)
	cancel   context.CancelFunc
	stopOnce sync.Once
}

// trackPods starts following the pods of namespace ns, until deleteNamespace.
func (t *Target) trackPods(ns string) {
	ctx, cancel := context.WithCancel(context.Background())
	pt := &podTracker{fates: map[string]string{}, mine: map[string]bool{}, cancel: cancel}
	t.mu.Lock()
	if t.trackers == nil {
		t.trackers = map[string]*podTracker{}
	}
	t.trackers[ns] = pt
	t.mu.Unlock()
	go func() {
		for ctx.Err() == nil {
			// A watch from no resource version starts with the pods there are; it ends when
			// the apiserver goes away or times it out, and is started again.
			w, err := t.client.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{})
			if err == nil {
				for ev := range w.ResultChan() {
					pt.see(ev)
				}
				w.Stop()
			}
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}()
}

// tracker is the podTracker of ns (a tracker that knows nothing when there is none).
func (t *Target) tracker(ns string) *podTracker {
	t.mu.Lock()
	defer t.mu.Unlock()
	if pt := t.trackers[ns]; pt != nil {
		return pt
	}
	return &podTracker{fates: map[string]string{}, mine: map[string]bool{}, cancel: func() {}}
}

// stop ends the watch; the namespace is being deleted by the target.
func (pt *podTracker) stop() {
	pt.mu.Lock()
	pt.allMine = true
	pt.mu.Unlock()
	pt.stopOnce.Do(pt.cancel)
}

// ours says that the target itself deletes pod name.
func (pt *podTracker) ours(name string) {
	pt.mu.Lock()
	pt.mine[name] = true
	pt.mu.Unlock()
}

func (pt *podTracker) see(ev watch.Event) {
	pod, ok := ev.Object.(*corev1.Pod)
	if !ok {
		return
	}
	pt.mu.Lock()
	defer pt.mu.Unlock()
	mine := pt.allMine || pt.mine[pod.Name]
	fate := podFate(pod)
	switch {
	case ev.Type == watch.Deleted && !mine:
		if old := pt.fates[pod.Name]; old != "" {
			fate = old
		}
		if fate == "" {
			fate = "was deleted, not by this run"
		} else if !strings.HasSuffix(fate, ", then deleted") {
			fate += ", then deleted"
		}
	case fate == "" && pod.DeletionTimestamp != nil && !mine:
		fate = "was being deleted, not by this run"
	}
	if fate != "" {
		pt.fates[pod.Name] = fate
	}
}

func (pt *podTracker) fate(name string) string {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	return pt.fates[name]
}

// disruptions name the reasons of the DisruptionTarget condition (v1.37 k8s.io/api/core/v1
// PodReasonPreemptionByScheduler and the others).
var disruptions = map[string]string{
	"EvictionByEvictionAPI":  "was evicted through the Eviction API",
	"PreemptionByScheduler":  "was preempted by the scheduler",
	"DeletionByTaintManager": "was evicted by the taint manager (a NoExecute taint of its node)",
	"DeletionByPodGC":        "was deleted by the pod garbage collector",
	"TerminationByKubelet":   "was terminated by the kubelet (node-pressure eviction or node shutdown)",
}

// podFate says what happened to pod that the target did not do, from its status: a
// disruption (eviction, preemption), or a Failed phase ("" = nothing).
func podFate(pod *corev1.Pod) string {
	for _, c := range pod.Status.Conditions {
		if c.Type != corev1.DisruptionTarget || c.Status != corev1.ConditionTrue {
			continue
		}
		what, ok := disruptions[c.Reason]
		if !ok {
			what = "was disrupted"
		}
		return fmt.Sprintf("%s (condition DisruptionTarget, reason %s: %s)", what, c.Reason, c.Message)
	}
	if pod.Status.Phase == corev1.PodFailed {
		if pod.Status.Reason == "Evicted" {
			return fmt.Sprintf("was evicted by the kubelet (phase Failed, reason Evicted: %s)", pod.Status.Message)
		}
		return fmt.Sprintf("failed (phase Failed, reason %q: %s)", pod.Status.Reason, pod.Status.Message)
	}
	return ""
}

// explain adds to a probe pod's failure what happened to the pod, when something the target
// did not do explains it (an eviction, a deletion): "probe pod probe-0 was evicted through the
// Eviction API (...) before it was observed: ERR". Failures that already say why (the
// apiserver did not answer, the pod did not start in time) are returned as they are.
func (t *Target) explain(ctx context.Context, p *probePod, err error) error {
	var down *APIServerDownError
	var ns *notStartedError
	if err == nil || errors.As(err, &down) || errors.As(err, &ns) || ctx.Err() != nil {
		return err
	}
	pt := t.tracker(p.pod.Namespace)
	fate := pt.fate(p.name)
	if fate == "" {
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		pod, gerr := t.client.CoreV1().Pods(p.pod.Namespace).Get(cctx, p.name, metav1.GetOptions{})
		cancel()
		switch {
		case apierrors.IsNotFound(gerr):
			// The watch may not have delivered the pod's last updates yet.
			for range 20 {
				if fate = pt.fate(p.name); fate != "" {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if fate == "" {
				fate = "was deleted, not by this run"
			}
		case gerr == nil:
			fate = podFate(pod)
			if fate == "" && pod.DeletionTimestamp != nil {
				fate = "was being deleted, not by this run"
			}
		}
	}
	if fate == "" {
		return err
	}
	return fmt.Errorf("probe pod %s %s before it was observed: %w", p.name, fate, err)
}

// notStartedError is the verdict of a pod that did not run within Timeouts.PodStart. nodeLive:
// its node was Ready with a fresh lease and no event of the pod was a warning, so nothing known
// keeps it from starting (a slow runtime on a loaded machine): runPodOnce tries a new pod once.
type notStartedError struct {
	msg      string
	nodeLive bool
}

func (e *notStartedError) Error() string { return e.msg }

// notStarted says that pod ns/name (what: "probe pod") did not start within timeout, and how
// the pod and its node looked: phase, conditions and container states of the pod; the node's
// Ready condition, how long ago the kubelet last posted its status and renewed its lease, and
// its taints.
func (t *Target) notStarted(ctx context.Context, what, ns, name string, timeout time.Duration) error {
	msg := fmt.Sprintf("%s %s did not start within %s", what, name, timeout)
	cctx, cancel := context.WithTimeout(ctx, 2*callTimeout)
	defer cancel()
	pod, err := t.client.CoreV1().Pods(ns).Get(cctx, name, metav1.GetOptions{})
	if err != nil {
		return &notStartedError{msg: msg + fmt.Sprintf(" (its status could not be read: %v)", err)}
	}
	parts := []string{podStatusText(pod)}
	fate := t.tracker(ns).fate(name)
	if fate != "" {
		parts = append(parts, "the pod "+fate)
	}
	var evs []corev1.Event
	sel := fields.Set{"involvedObject.name": name, "involvedObject.uid": string(pod.UID)}.AsSelector().String()
	if l, err := t.client.CoreV1().Events(ns).List(cctx, metav1.ListOptions{FieldSelector: sel}); err == nil {
		evs = l.Items
	}
	text, warned := eventsText(evs)
	parts = append(parts, text)
	live := false
	node := pod.Spec.NodeName
	if node == "" {
		node = t.node
	}
	if n, err := t.client.CoreV1().Nodes().Get(cctx, node, metav1.GetOptions{}); err != nil {
		parts = append(parts, fmt.Sprintf("node %s: %v", node, err))
	} else {
		var lease *coordinationv1.Lease
		if l, err := t.client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(cctx, node, metav1.GetOptions{}); err == nil {
			lease = l
		}
		parts = append(parts, nodeStatusText(n, lease, time.Now()))
		live = fate == "" && !warned && nodeLive(n, lease, time.Now())
	}
	return &notStartedError{msg: msg + ": " + strings.Join(parts, "; "), nodeLive: live}
}

// eventsText is "events: Scheduled (...), Pulled (...) x2, FailedMount (...)": the pod's events
// in the order they last happened, the newest eventsShown of them; warned: one is a Warning.
func eventsText(evs []corev1.Event) (text string, warned bool) {
	const eventsShown = 6
	sort.SliceStable(evs, func(i, j int) bool { return eventTime(evs[i]).Before(eventTime(evs[j])) })
	var parts []string
	for _, e := range evs {
		if e.Type == corev1.EventTypeWarning {
			warned = true
		}
		p := fmt.Sprintf("%s (%s)", e.Reason, strings.TrimSpace(e.Message))
		if e.Count > 1 {
			p += fmt.Sprintf(" x%d", e.Count)
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return "no events of the pod", warned
	}
	if len(parts) > eventsShown {
		parts = append([]string{fmt.Sprintf("%d earlier", len(parts)-eventsShown)}, parts[len(parts)-eventsShown:]...)
	}
	return "events: " + strings.Join(parts, ", "), warned
}

// eventTime is when e last happened (events.k8s.io series and core fields alike).
func eventTime(e corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return e.Series.LastObservedTime.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

// nodeLive: n is Ready and its kubelet renewed its lease within two of its renew intervals
// (nodeStatusText's test of a kubelet that stopped).
func nodeLive(n *corev1.Node, lease *coordinationv1.Lease, now time.Time) bool {
	ready := false
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
			ready = true
		}
	}
	if !ready || lease == nil || lease.Spec.RenewTime == nil || lease.Spec.LeaseDurationSeconds == nil {
		return false
	}
	every := time.Duration(*lease.Spec.LeaseDurationSeconds) * time.Second / 4
	return now.Sub(lease.Spec.RenewTime.Time) <= 2*every
}

// podStatusText is "pod Pending, PodScheduled=False (Unschedulable: ...), container probe
// waiting: ContainerCreating" or "..., no container status from the kubelet yet".
func podStatusText(pod *corev1.Pod) string {
	parts := []string{"pod " + string(pod.Status.Phase)}
	for _, c := range pod.Status.Conditions {
		if c.Status != corev1.ConditionTrue && c.Type != corev1.ContainersReady && c.Type != corev1.PodReady {
			parts = append(parts, fmt.Sprintf("%s=%s (%s: %s)", c.Type, c.Status, c.Reason, c.Message))
		}
	}
	if len(pod.Status.ContainerStatuses) == 0 {
		parts = append(parts, "no container status from the kubelet yet")
	}
	for _, s := range pod.Status.ContainerStatuses {
		switch {
		case s.State.Waiting != nil:
			parts = append(parts, fmt.Sprintf("container %s waiting: %s %s", s.Name, s.State.Waiting.Reason, s.State.Waiting.Message))
		case s.State.Terminated != nil:
			parts = append(parts, fmt.Sprintf("container %s terminated: %s %s", s.Name, s.State.Terminated.Reason, s.State.Terminated.Message))
		case s.State.Running != nil:
			parts = append(parts, fmt.Sprintf("container %s running", s.Name))
		}
	}
	return strings.TrimSpace(strings.Join(parts, ", "))
}

// nodeStatusText is "node N: Ready=True (KubeletReady), lease renewed 27s ago (the kubelet
// renews it every 10s: it is not running or cannot reach the apiserver), taints ..." or "node N:
// Ready=Unknown since 12s ago (NodeStatusUnknown: Kubelet stopped posting node status.), ...".
// (The Ready condition's heartbeat says little: with leases the kubelet posts its status every
// 5 minutes unless it changes.)
func nodeStatusText(n *corev1.Node, lease *coordinationv1.Lease, now time.Time) string {
	parts := []string{"node " + n.Name + ":"}
	ready := "no Ready condition"
	for _, c := range n.Status.Conditions {
		if c.Type != corev1.NodeReady {
			continue
		}
		if c.Status == corev1.ConditionTrue {
			ready = fmt.Sprintf("Ready=True (%s)", c.Reason)
		} else {
			ready = fmt.Sprintf("Ready=%s since %s (%s: %s)", c.Status, ago(now, c.LastTransitionTime.Time), c.Reason, c.Message)
		}
	}
	parts = append(parts, ready)
	if lease != nil && lease.Spec.RenewTime != nil {
		l := "lease renewed " + ago(now, lease.Spec.RenewTime.Time)
		if lease.Spec.LeaseDurationSeconds != nil {
			// The kubelet renews its lease every quarter of its duration (v1.37 nodelease).
			every := time.Duration(*lease.Spec.LeaseDurationSeconds) * time.Second / 4
			if every > 0 && now.Sub(lease.Spec.RenewTime.Time) > 2*every {
				l += fmt.Sprintf(" (the kubelet renews it every %s: it is not running or cannot reach the apiserver)", every)
			}
		}
		parts = append(parts, l)
	}
	var taints []string
	for _, tn := range n.Spec.Taints {
		taints = append(taints, tn.Key+":"+string(tn.Effect))
	}
	sort.Strings(taints)
	if len(taints) > 0 {
		parts = append(parts, "taints "+strings.Join(taints, " "))
	}
	return parts[0] + " " + strings.Join(parts[1:], ", ")
}

// ago is "31s ago" ("never" for a zero time).
func ago(now, then time.Time) string {
	if then.IsZero() {
		return "never"
	}
	return now.Sub(then).Round(time.Second).String() + " ago"
}
