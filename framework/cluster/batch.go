package cluster

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
	probeimage "github.com/volperm/volperm/framework/probe/image"
)

// ProbeCommand is the probe image's program (cmd/volperm-probe).
const ProbeCommand = probeimage.Path

// HostRoot is the node directory under which each case's hostPath fixtures get their own root.
const HostRoot = "/var/lib/volperm"

// Timeouts of one batch (the pod start and the apiserver's outages: Options.Timeouts).
const (
	// failedMountSettle is how long a Pending pod is watched after its first FailedMount event,
	// for the events of its other volumes (the kubelet sets up all volumes in one pass).
	failedMountSettle = 3 * time.Second
)

// caseRun is one admitted case of a batch on its way through the node.
type caseRun struct {
	id int // unique in its batch: names its objects
	c  *framework.Case
	// obs collects what the node observed: its Volumes and Probes.
	obs    *framework.Observation
	err    error
	pod    *corev1.Pod // as admitted (the admission half's dry-run answer)
	host   string      // node directory standing for "/" of this case's hostPath paths
	probes []framework.Probe
	vols   []batchVolume
	// sources are the Secrets and ConfigMaps its volumes project, under names of its own.
	sources []source
}

// source is one Secret or ConfigMap of a case in the batch namespace.
type source struct {
	kind   string // "secret" or "configmap", as Case.Sources keys name them
	name   string // as the case names it
	unique string
}

// batchVolume is one case volume in a probe pod, under a unique name.
type batchVolume struct {
	run    *caseRun
	index  int // in the case pod's volumes
	unique string
}

// probePod is one pod holding the volumes of several cases.
type probePod struct {
	name string
	pod  *corev1.Pod
	vols []batchVolume
	runs []*caseRun
	// setUp is the FailedMount text per unique volume name.
	setUp map[string]string
	// running is false when the pod never ran (a volume failed): nothing was observed inside.
	running bool
	// flex is true when a volume of the pod is the harness's flexVolume driver's.
	flex bool
	// hostPath is true for a pod of hostPath cases (hostPathGroup): split when it does not run.
	hostPath bool
	// userNamespace: the pod has hostUsers: false (userns.go: the disk's view too).
	userNamespace bool
	// sandbox is the kubelet's FailedCreatePodSandBox text (after "Failed to create pod
	// sandbox: "): the volumes are set up, no container runs (docs/spec.md [userns.runtime]).
	sandbox string
	// mayRefuse: a mount of the pod asks for recursiveReadOnly Enabled, which the kubelet
	// refuses on a runtime that cannot (its volumes then read by the disk-view pod).
	mayRefuse bool
	// containerError is the kubelet's CreateContainerConfigError message for the probe container
	// (docs/spec.md [mounts.recursive-read-only]).
	containerError string
	// self: a case of the pod probes as its container (the self container, withSelf).
	self bool
	// containerUser is the self container's status user (docs/spec.md [groups.policy]).
	containerUser *framework.ContainerUser
	// rejected is the kubelet's refusal to admit the pod (docs/spec.md [groups.admit]).
	rejected string
	// rro is the probe container's status.volumeMounts[].recursiveReadOnly by unique volume name.
	rro map[string]string
}

// observeAdmitted observes admitted cases together (the node half's ObserveBatch): set-up and
// observation with many cases per pod. With Options.Reconfigure the cluster's gates are changed
// in place for each group of cases (reconfigure.go); otherwise every case runs on the gates the
// cluster has. Results are in the order of cases.
func (t *Target) observeAdmitted(ctx context.Context, cases []framework.NodeCase) []framework.NodeResult {
	runs := make([]*caseRun, len(cases))
	for i, nc := range cases {
		runs[i] = &caseRun{id: i, c: nc.Case, pod: nc.Admitted.Pod, obs: &framework.Observation{}}
	}
	if t.opts.Reconfigure {
		t.observeReconfiguring(ctx, runs)
	} else {
		t.observeRuns(ctx, runs)
	}
	out := make([]framework.NodeResult, len(runs))
	for i, r := range runs {
		out[i] = framework.NodeResultOf(r.obs, r.err)
	}
	return out
}

// observeRuns runs runs on the cluster's current gates, in one namespace; a failure of the
// batch becomes the error of every case that has none yet.
func (t *Target) observeRuns(ctx context.Context, runs []*caseRun) {
	if err := t.observeIn(ctx, runs); err != nil {
		for _, r := range runs {
			if r.err == nil {
				r.err = err
			}
		}
	}
}

func (t *Target) observeIn(ctx context.Context, runs []*caseRun) error {
	ns, err := t.createNamespace(ctx, true)
	if ns != "" {
		defer t.deleteNamespace(ns)
	}
	if err != nil {
		return err
	}
	const prefix = "probe"
	pods, err := t.setUp(ctx, ns, prefix, runs)
	if err != nil {
		return err
	}
	t.count(len(pods))
	var wg sync.WaitGroup
	sem := make(chan struct{}, t.opts.Parallel)
	var withSteps []*probePod
	for _, p := range pods {
		if len(p.runs[0].c.After) > 0 {
			withSteps = append(withSteps, p)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if p.hostPath {
				t.runSharedHostPath(ctx, p, prefix+"-fixtures")
				return
			}
			p, err := t.runPodOnceMore(ctx, p)
			p.fail(t.explain(ctx, p, err))
			t.deletePod(p)
		}()
	}
	wg.Wait()
	// Kubelet restarts disturb every pod of the node: cases with steps run afterwards, a step
	// group at a time (stepgroups.go: pods whose steps share their restarts).
	for _, g := range stepGroups(withSteps) {
		t.runStepGroup(ctx, g)
	}
	return nil
}

// setUp plans the probe pods (named prefix-N) of admitted runs in namespace ns and creates the
// hostPath fixtures and the Secrets and ConfigMaps they need.
func (t *Target) setUp(ctx context.Context, ns, prefix string, runs []*caseRun) ([]*probePod, error) {
	pods, err := t.plan(runs, ns, prefix)
	if err != nil {
		return nil, err
	}
	if err := t.createFixtures(ctx, ns, prefix, runs); err != nil {
		return nil, err
	}
	if err := t.createSources(ctx, ns, runs); err != nil {
		return nil, err
	}
	if err := t.createDiskPod(ctx, ns, prefix, pods); err != nil {
		return nil, err
	}
	for _, p := range pods {
		if p.flex {
			if err := t.installFlexDriver(ctx, ns, prefix); err != nil {
				return nil, err
			}
			break
		}
	}
	return pods, nil
}

// fail makes err the error of every case of p that has none yet.
func (p *probePod) fail(err error) {
	if err == nil {
		return
	}
	for _, r := range p.runs {
		if r.err == nil {
			r.err = err
		}
	}
}

// count adds n to the probe pods this target has started (PodStarts).
func (t *Target) count(n int) {
	t.mu.Lock()
	t.podStarts += n
	t.mu.Unlock()
}

// PodStarts is the number of probe pods this target has created so far.
func (t *Target) PodStarts() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.podStarts
}

// runPodOnceMore runs p (runPod); when nothing known keeps its cases from an answer in another
// pod (onceMore: p did not start on a live node with no warning event, seen on a 2-core CI with
// other work beside it; or the connection of its probes' exec was cut, seen on a kind node
// loaded by other clusters), they run once more in a new pod, p.name-s1, on new volumes, with
// the whole pod start bound again, and the log says so. Its answer is the pod that ran last and
// its error; a second such failure names both pods'.
func (t *Target) runPodOnceMore(ctx context.Context, p *probePod) (*probePod, error) {
	err := t.runPod(ctx, p)
	first := onceMore(err)
	if first == "" || ctx.Err() != nil {
		return p, err
	}
	next := p.renamed(p.name + "-s1")
	t.deletePod(p)
	t.count(1)
	t.logf("%s; its %d cases run again in %s", first, len(p.runs), next.name)
	err = t.runPod(ctx, next)
	if onceMore(err) != "" {
		err = fmt.Errorf("%w; before it, %s", err, first)
	}
	return next, err
}

// onceMore says why err leaves a pod's cases for another pod ("" when it does not): a pod that
// did not start on a live node with no warning event, or a probe exec whose connection was cut.
func onceMore(err error) string {
	var notStarted *notStartedError
	var cut *execCutError
	switch {
	case errors.As(err, &notStarted) && notStarted.nodeLive:
		return notStarted.msg
	case errors.As(err, &cut):
		return cut.Error()
	}
	return ""
}

// renamed is a new probe pod of p's cases and volumes named name, as p was before it started.
func (p *probePod) renamed(name string) *probePod {
	q := &probePod{name: name, pod: p.pod.DeepCopy(), vols: p.vols, runs: p.runs, setUp: map[string]string{},
		flex: p.flex, hostPath: p.hostPath, userNamespace: p.userNamespace, mayRefuse: p.mayRefuse, self: p.self}
	q.pod.Name, q.pod.ResourceVersion, q.pod.UID = name, "", ""
	return q
}
