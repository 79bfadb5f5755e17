package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/nodecontrol"
)

// deletePod deletes an observed probe pod at once, so that a node's pod limit (110 by default)
// bounds only the pods running together, not a whole batch.
func (t *Target) deletePod(p *probePod) {
	zero := int64(0)
	ctx, cancel := context.WithTimeout(context.Background(), t.cleanupCallTimeout())
	defer cancel()
	t.tracker(p.pod.Namespace).ours(p.name)
	t.ranges.remove(p.pod.Namespace + "/" + p.name)
	err := t.call(ctx, func(ctx context.Context) error {
		return t.client.CoreV1().Pods(p.pod.Namespace).Delete(ctx, p.name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
	})
	if err != nil && !apierrors.IsNotFound(err) {
		t.logf("delete pod %s/%s: %v", p.pod.Namespace, p.name, err)
	}
}

// cleanupCallTimeout bounds a delete after a batch: the apiserver's bound, at most 30 s, and
// 2 s while the apiserver has not answered for longer than its bound already (Cleanup deletes
// what is left).
func (t *Target) cleanupCallTimeout() time.Duration {
	bound := t.timeouts().APIServer
	t.mu.Lock()
	gone := !t.downSince.IsZero() && time.Since(t.downSince) >= bound
	t.mu.Unlock()
	if gone {
		return 2 * time.Second
	}
	return min(30*time.Second, bound)
}

// create runs a create call like call does; AlreadyExists after a failed attempt means that
// attempt created it.
func (t *Target) create(ctx context.Context, fn func(ctx context.Context) error) error {
	failed := false
	err := t.call(ctx, func(ctx context.Context) error {
		err := fn(ctx)
		if failed && apierrors.IsAlreadyExists(err) {
			return nil
		}
		failed = err != nil
		return err
	})
	return err
}

// probePodSpec is a probe pod on the target's node: the probe image waiting for execs, as root,
// with the security context sc of the cases it holds.
// probeContainer and selfContainer are the probe pod's containers: the root one that runs every
// probe as its user, and the one a case's container probes run as (docs/spec.md
// [groups.policy]: the uid, gid and groups its kubelet and runtime gave it).
const (
	probeContainer = "probe"
	selfContainer  = "self"
)

// withSelf adds the self container to probe pod p: the case's first container's runAsUser and
// runAsGroup (unset: the pod's), every volume mounted as the probe container mounts it.
func withSelf(p *corev1.Pod, casePod *corev1.Pod) {
	self := corev1.Container{Name: selfContainer, Image: p.Spec.Containers[0].Image, ImagePullPolicy: corev1.PullNever,
		Command: []string{ProbeCommand, "-wait"}, VolumeMounts: slices.Clone(p.Spec.Containers[0].VolumeMounts)}
	if sc := casePod.Spec.Containers[0].SecurityContext; sc != nil && (sc.RunAsUser != nil || sc.RunAsGroup != nil) {
		self.SecurityContext = &corev1.SecurityContext{RunAsUser: sc.RunAsUser, RunAsGroup: sc.RunAsGroup}
	}
	p.Spec.Containers = append(p.Spec.Containers, self)
}

// kubeletRejected is the kubelet's refusal to admit pod p (v1.37 kubelet.go rejectPod: phase
// Failed, a reason, "Pod was rejected: ..." and no container ever made), as "Reason: Message".
func kubeletRejected(p *corev1.Pod) (string, bool) {
	if p.Status.Phase != corev1.PodFailed || p.Status.Reason == "" || len(p.Status.ContainerStatuses) > 0 && p.Status.ContainerStatuses[0].ContainerID != "" {
		return "", false
	}
	return p.Status.Reason + ": " + p.Status.Message, true
}

// selfUser is the self container's status user (status.containerStatuses[].user.linux), nil
// when its runtime reports none.
func selfUser(p *corev1.Pod) *framework.ContainerUser {
	for _, s := range p.Status.ContainerStatuses {
		if s.Name == selfContainer && s.User != nil && s.User.Linux != nil {
			l := s.User.Linux
			return &framework.ContainerUser{UID: l.UID, GID: l.GID, SupplementalGroups: framework.NormalGroups(l.SupplementalGroups)}
		}
	}
	return nil
}

func (t *Target) probePodSpec(name, ns string, sc *corev1.PodSecurityContext) *corev1.Pod {
	root, grace, no := int64(0), int64(0), false
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: ownedLabels()},
		Spec: corev1.PodSpec{
			NodeName:                      t.node,
			SecurityContext:               sc.DeepCopy(),
			AutomountServiceAccountToken:  &no,
			TerminationGracePeriodSeconds: &grace,
			RestartPolicy:                 corev1.RestartPolicyNever,
			Tolerations:                   []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			Containers: []corev1.Container{{
				Name:            probeContainer,
				Image:           t.opts.ProbeImage,
				ImagePullPolicy: corev1.PullNever,
				Command:         []string{ProbeCommand, "-wait"},
				// Root, so that each probe runs as exactly its user's uid, gid and groups (also
				// when the case's pod asks for runAsNonRoot: the probe is not the case's program).
				SecurityContext: &corev1.SecurityContext{RunAsUser: &root, RunAsGroup: &root, RunAsNonRoot: &no},
			}},
		},
	}
}

// startHelper creates a helper pod of the batch (what names it) and waits until it runs.
func (t *Target) startHelper(ctx context.Context, pod *corev1.Pod, what string) error {
	if err := t.create(ctx, func(ctx context.Context) error {
		_, err := t.client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
		return err
	}); err != nil {
		return fmt.Errorf("create %s: %w", what, err)
	}
	return t.waitRunning(ctx, pod.Namespace, pod.Name, what)
}

// waitRunning waits until pod ns/name (a helper pod: what names it) runs, for up to
// Timeouts.PodStart.
func (t *Target) waitRunning(ctx context.Context, ns, name, what string) error {
	timeout := t.timeouts().PodStart
	err := waitFor(ctx, timeout, 250*time.Millisecond, what+" "+ns+"/"+name+" running", func() (bool, error) {
		p, err := t.getPod(ctx, ns, name)
		if err != nil {
			return false, err
		}
		if err := containerFailure(p); err != nil {
			return false, err
		}
		return p.Status.Phase == corev1.PodRunning, nil
	})
	var nw *notWithinError
	if errors.As(err, &nw) {
		return t.notStarted(ctx, what, ns, name, timeout)
	}
	return err
}

// getPod reads pod ns/name, through the apiserver's outages (call).
func (t *Target) getPod(ctx context.Context, ns, name string) (*corev1.Pod, error) {
	var p *corev1.Pod
	err := t.call(ctx, func(ctx context.Context) (err error) {
		p, err = t.client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		return err
	})
	return p, err
}

// containerFailure reports a container that cannot start for a reason no wait will fix.
// configRefused says whether the kubelet refused to create p's probe container
// (CreateContainerConfigError), with its message.
func configRefused(p *corev1.Pod) (string, bool) {
	for _, s := range p.Status.ContainerStatuses {
		if w := s.State.Waiting; w != nil && s.Name == "probe" && w.Reason == "CreateContainerConfigError" {
			return w.Message, true
		}
	}
	return "", false
}

// mountStatuses is the probe container's status.volumeMounts[].recursiveReadOnly by volume
// name ("" for none).
func mountStatuses(p *corev1.Pod) map[string]string {
	out := map[string]string{}
	for _, s := range p.Status.ContainerStatuses {
		if s.Name != "probe" {
			continue
		}
		for _, m := range s.VolumeMounts {
			if m.RecursiveReadOnly != nil {
				out[m.Name] = string(*m.RecursiveReadOnly)
			}
		}
	}
	return out
}

func containerFailure(p *corev1.Pod) error {
	for _, s := range p.Status.ContainerStatuses {
		if w := s.State.Waiting; w != nil {
			switch w.Reason {
			case "ErrImageNeverPull", "InvalidImageName", "CreateContainerConfigError", "CreateContainerError", "RunContainerError":
				return fmt.Errorf("pod %s container %s: %s: %s", p.Name, s.Name, w.Reason, w.Message)
			}
		}
		if s.State.Terminated != nil {
			return fmt.Errorf("pod %s container %s terminated: %s %s", p.Name, s.Name, s.State.Terminated.Reason, s.State.Terminated.Message)
		}
	}
	return nil
}

// runPod creates p, waits until it runs (or its volumes fail to mount), applies its case's
// steps, observes it, and fills the observations of its cases.
func (t *Target) runPod(ctx context.Context, p *probePod) error {
	return t.runPodIn(ctx, p, nil, nil, 0)
}

// runPodIn is runPod for a pod of a step group (stepgroups.go), whose kubelet restarts are the
// group's rounds: it leaves the group once it will not reach another restart. sem, when set,
// bounds the pods starting at once (never held across a restart, which waits for the others).
// The pod is created after the group's first late rounds (stepgroups.go: lateRounds). round and
// sem nil: a pod alone.
func (t *Target) runPodIn(ctx context.Context, p *probePod, round *nodecontrol.Rounds, sem chan struct{}, late int) error {
	for range late {
		if err := round.Arrive(ctx); err != nil {
			round.Leave(ctx)
			return err
		}
	}
	if sem != nil {
		sem <- struct{}{}
	}
	err := t.startPod(ctx, p)
	if sem != nil {
		<-sem
	}
	if err == nil && p.running && len(p.runs) == 1 && len(p.runs[0].c.After) > 0 {
		var restore func()
		restore, err = t.runSteps(ctx, p, round)
		defer restore()
	}
	round.Leave(ctx)
	if err != nil {
		return err
	}
	return t.finishPod(ctx, p)
}

// startPod creates p and waits until it runs, or until its volumes have failed to mount, for
// up to Timeouts.PodStart. Hooks.PodCreated runs after the create, Hooks.PodRunning once it runs.
func (t *Target) startPod(ctx context.Context, p *probePod) error {
	if err := t.create(ctx, func(ctx context.Context) error {
		_, err := t.client.CoreV1().Pods(p.pod.Namespace).Create(ctx, p.pod, metav1.CreateOptions{})
		return err
	}); err != nil {
		return fmt.Errorf("create probe pod %s: %w", p.name, err)
	}
	if h := t.hook().PodCreated; h != nil {
		h(ctx, p.pod.Namespace, p.name)
	}
	timeout := t.timeouts().PodStart
	var firstFailure time.Time
	err := waitFor(ctx, timeout, 300*time.Millisecond, "probe pod "+p.name, func() (bool, error) {
		pod, err := t.getPod(ctx, p.pod.Namespace, p.name)
		if err != nil {
			return false, err
		}
		p.rro = mountStatuses(pod)
		if msg, rejected := kubeletRejected(pod); rejected {
			// docs/spec.md [groups.admit]: the kubelet did not admit the pod.
			p.rejected = msg
			return true, nil
		}
		if msg, refused := configRefused(pod); refused && p.mayRefuse {
			// docs/spec.md [mounts.recursive-read-only]: the kubelet refused the container.
			p.containerError = msg
			return true, nil
		}
		if err := containerFailure(pod); err != nil {
			return false, err
		}
		if pod.Status.Phase == corev1.PodRunning {
			p.running, p.containerUser = true, selfUser(pod)
			return true, nil
		}
		if err := t.failedMounts(ctx, p); err != nil {
			return false, err
		}
		if p.userNamespace {
			// docs/spec.md [userns.runtime]: a runtime without user namespaces.
			if err := t.failedSandbox(ctx, p); err != nil || p.sandbox != "" {
				return p.sandbox != "", err
			}
		}
		if len(p.setUp) > 0 && firstFailure.IsZero() {
			firstFailure = time.Now()
		}
		return !firstFailure.IsZero() && time.Since(firstFailure) > failedMountSettle, nil
	})
	var nw *notWithinError
	if errors.As(err, &nw) {
		return t.notStarted(ctx, "probe pod", p.pod.Namespace, p.name, timeout)
	}
	if err == nil && p.running {
		if h := t.hook().PodRunning; h != nil {
			h(ctx, p.pod.Namespace, p.name)
		}
	}
	return err
}

// finishPod observes p (when it runs) and fills the observations of its cases.
func (t *Target) finishPod(ctx context.Context, p *probePod) error {
	var answer *framework.Observation
	switch {
	case p.running:
		var err error
		if answer, err = t.observePod(ctx, p); err != nil {
			return err
		}
	case p.sandbox != "" || p.containerError != "":
		// The volumes as the kubelet set them up, read by the batch's disk-view pod.
		answer = &framework.Observation{}
		for _, v := range p.vols {
			answer.Volumes = append(answer.Volumes, framework.VolumeObservation{Name: v.unique})
		}
		if err := t.diskView(ctx, p, answer); err != nil {
			return err
		}
	}
	t.fill(p, answer)
	return nil
}

// podEvents lists the events of reason about p, through the apiserver's outages (call).
func (t *Target) podEvents(ctx context.Context, p *probePod, reason string) ([]corev1.Event, error) {
	sel := fields.Set{"involvedObject.name": p.name, "reason": reason}.AsSelector().String()
	var evs *corev1.EventList
	err := t.call(ctx, func(ctx context.Context) (err error) {
		evs, err = t.client.CoreV1().Events(p.pod.Namespace).List(ctx, metav1.ListOptions{FieldSelector: sel})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list events of %s: %w", p.name, err)
	}
	return evs.Items, nil
}

// sandboxEvent is how the kubelet's FailedCreatePodSandBox event begins (v1.37
// kuberuntime_manager.go SyncPod).
const sandboxEvent = "Failed to create pod sandbox: "

// failedSandbox reads the kubelet's FailedCreatePodSandBox event of p into p.sandbox.
func (t *Target) failedSandbox(ctx context.Context, p *probePod) error {
	evs, err := t.podEvents(ctx, p, "FailedCreatePodSandBox")
	if err != nil {
		return err
	}
	for _, e := range evs {
		if text, ok := strings.CutPrefix(e.Message, sandboxEvent); ok {
			p.sandbox = text
			return nil
		}
	}
	return nil
}

// failedMounts collects the kubelet's FailedMount events of p: `MountVolume.SetUp failed for
// volume "NAME" : TEXT` (v1.37 pkg/kubelet/volumemanager/reconciler, operationexecutor).
func (t *Target) failedMounts(ctx context.Context, p *probePod) error {
	evs, err := t.podEvents(ctx, p, "FailedMount")
	if err != nil {
		return err
	}
	for _, e := range evs {
		_, rest, ok := strings.Cut(e.Message, `MountVolume.SetUp failed for volume "`)
		if !ok {
			continue
		}
		name, text, ok := strings.Cut(rest, `" : `)
		if ok && !transientMountFailure(text) {
			p.setUp[name] = text
		}
	}
	return nil
}

// transientMountFailure says whether a FailedMount text is the kubelet's own wait for its
// object cache, which it retries, not a volume plugin's answer. Two texts of v1.37
// pkg/kubelet/util/manager watch_based_manager.go: GetObject gives a fresh reflector one second
// ("failed to sync secret cache: timed out waiting for the condition"), which a kubelet just
// restarted on a busy node can miss (seen once in CI, then the pod ran); objectCache.Get answers
// `object "NS"/"NAME" not registered` while the pod's objects are not yet registered in the
// manager (seen once in CI on a node at load average 30, then the pod ran), and
// cache_based_manager.go `secret "NS"/"NAME" not registered` (or configmap) likewise.
func transientMountFailure(text string) bool {
	if strings.HasPrefix(text, "failed to sync ") && strings.Contains(text, " cache: ") {
		return true
	}
	return strings.HasSuffix(text, " not registered") && strings.Contains(text, `"/"`)
}
