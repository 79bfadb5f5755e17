package cluster

import (
	"context"
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

// caseRun is one case of a batch on its way through admission and the node.
type caseRun struct {
	id     int // unique in its ObserveBatch: names its objects
	c      *framework.Case
	obs    *framework.Observation
	err    error
	pod    *corev1.Pod // as admitted (dry-run answer), nil when rejected
	host   string      // node directory standing for "/" of this case's hostPath paths
	policy string      // PolicyLabel value selecting the binding of the case's allowlist
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
}

// ObserveBatch runs cases together: admission one by one, set-up and observation with many
// cases per pod. With Options.Reconfigure the cluster's gates are changed in place for each
// group of cases (reconfigure.go); otherwise every case runs on the gates the cluster has.
// Results are in the order of cases.
func (t *Target) ObserveBatch(ctx context.Context, cases []*framework.Case) []Result {
	why := make([]string, len(cases))
	for i, c := range cases {
		if ok, reason := t.supports(c); !ok {
			why[i] = reason
		}
	}
	return t.observeBatch(ctx, cases, why)
}

// observeBatch is ObserveBatch of cases already asked about: why[i] says why case i is not
// supported ("" = it is; nil = all are).
func (t *Target) observeBatch(ctx context.Context, cases []*framework.Case, why []string) []Result {
	runs := make([]*caseRun, len(cases))
	for i, c := range cases {
		runs[i] = &caseRun{id: i, c: c, obs: &framework.Observation{APIVersion: framework.ObservationVersion, Case: c.Name, Source: Name}}
		if why != nil && why[i] != "" {
			runs[i].err = fmt.Errorf("case not supported by the cluster target: %s", why[i])
		}
	}
	if t.opts.Reconfigure {
		t.observeReconfiguring(ctx, runs)
	} else {
		t.observeRuns(ctx, runs)
	}
	out := make([]Result, len(runs))
	for i, r := range runs {
		if r.err != nil {
			out[i] = Result{Err: r.err}
			continue
		}
		r.obs.Normalize()
		out[i] = Result{Observation: r.obs}
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
	ns, err := t.createNamespace(ctx)
	if ns != "" {
		defer t.deleteNamespace(ns)
	}
	if err != nil {
		return err
	}
	const prefix = "probe"
	pods, cleanup, err := t.setUp(ctx, ns, prefix, runs)
	defer cleanup()
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
			p.fail(t.explain(ctx, p, t.runPod(ctx, p)))
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

// setUp admits runs in namespace ns (under their flexVolume policies), plans their probe pods
// (named prefix-N) and creates the hostPath fixtures and the Secrets and ConfigMaps they need.
// cleanup removes the policy bindings.
func (t *Target) setUp(ctx context.Context, ns, prefix string, runs []*caseRun) (pods []*probePod, cleanup func(), err error) {
	bindings, err := t.bindPolicies(ctx, ns, runs)
	cleanup = func() { t.unbindPolicies(bindings) }
	if err != nil {
		return nil, cleanup, err
	}
	for _, r := range runs {
		if r.err == nil {
			r.admit(ctx, t, ns)
		}
	}
	if pods, err = t.plan(runs, ns, prefix); err != nil {
		return nil, cleanup, err
	}
	if err := t.createFixtures(ctx, ns, prefix, runs); err != nil {
		return nil, cleanup, err
	}
	if err := t.createSources(ctx, ns, runs); err != nil {
		return nil, cleanup, err
	}
	for _, p := range pods {
		if p.flex {
			if err := t.installFlexDriver(ctx, ns, prefix); err != nil {
				return nil, cleanup, err
			}
			break
		}
	}
	return pods, cleanup, nil
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
