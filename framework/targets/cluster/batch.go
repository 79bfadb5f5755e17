package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/httpstream"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/probe"
	probeimage "github.com/volperm/volperm/framework/probe/image"
	"github.com/volperm/volperm/framework/probe/incontainer"
	"github.com/volperm/volperm/framework/targets/fixturedriver"
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
	pods, cleanup, err := t.setUp(ctx, ns, "probe", runs)
	defer cleanup()
	if err != nil {
		return err
	}
	t.count(len(pods))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
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
			p.fail(t.explain(ctx, p, t.runPod(ctx, p)))
			t.deletePod(p)
		}()
	}
	wg.Wait()
	// Kubelet restarts disturb every pod of the node: cases with steps run alone, afterwards.
	for _, p := range withSteps {
		p.fail(t.explain(ctx, p, t.runPod(ctx, p)))
		t.deletePod(p)
	}
	return nil
}

// deletePod deletes an observed probe pod at once, so that a node's pod limit (110 by default)
// bounds only the pods running together, not a whole batch.
func (t *Target) deletePod(p *probePod) {
	zero := int64(0)
	ctx, cancel := context.WithTimeout(context.Background(), t.cleanupCallTimeout())
	defer cancel()
	t.tracker(p.pod.Namespace).ours(p.name)
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

// installFlexDriver puts the probe program, which is also the harness's flexVolume driver
// (fixturedriver.Main), into the node's kubelet plugin dir as volperm~fixture/fixture, from a
// pod that mounts the plugin dir; once per target. The kubelet's prober watches the dir (v1.37
// pkg/volume/flexvolume probe.go) and finds the driver at the next volume it sets up.
func (t *Target) installFlexDriver(ctx context.Context, ns, prefix string) error {
	t.mu.Lock()
	done := t.flexInstalled
	t.mu.Unlock()
	if done {
		return nil
	}
	pod := t.probePodSpec(prefix+"-driver", ns, nil)
	dirOrCreate := corev1.HostPathDirectoryOrCreate
	pod.Spec.Volumes = []corev1.Volume{{Name: "plugins", VolumeSource: corev1.VolumeSource{
		HostPath: &corev1.HostPathVolumeSource{Path: t.opts.FlexPluginDir, Type: &dirOrCreate}}}}
	pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "plugins", MountPath: "/plugins"}}
	if err := t.create(ctx, func(ctx context.Context) error {
		_, err := t.client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
		return err
	}); err != nil {
		return fmt.Errorf("create flexVolume driver pod: %w", err)
	}
	t.count(1)
	if err := t.waitRunning(ctx, ns, pod.Name, "flexVolume driver pod"); err != nil {
		return err
	}
	if _, err := t.exec(ctx, ns, pod.Name, []string{ProbeCommand, "-install-driver", "/plugins"}, nil); err != nil {
		return fmt.Errorf("install flexVolume driver %s in %s: %w", fixturedriver.Driver, t.opts.FlexPluginDir, err)
	}
	t.logf("flexVolume driver %s installed in %s on %s", fixturedriver.Driver, t.opts.FlexPluginDir, t.node)
	t.mu.Lock()
	t.flexInstalled = true
	t.mu.Unlock()
	return nil
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

// createNamespace creates a batch namespace, which deleteNamespace deletes (and Cleanup, if
// that fails or it gets stuck), and starts following its pods (podTracker).
func (t *Target) createNamespace(ctx context.Context) (string, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: framework.Namespace + "-" + randomSuffix(),
		Labels: ownedLabels()}}
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
	t.trackPods(ns.Name)
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

// admit sends the case's object to the apiserver as a dry-run create: the answer is what the
// apiserver would store (defaulted, disabled fields dropped) or its rejection.
func (r *caseRun) admit(ctx context.Context, t *Target, ns string) {
	i := r.id
	c := r.c
	if c.Pod == nil && c.PersistentVolume != nil {
		pv := c.PersistentVolume.DeepCopy()
		pv.Name = fmt.Sprintf("volperm-%s-%d", strings.TrimPrefix(ns, framework.Namespace+"-"), i)
		r.label(&pv.ObjectMeta)
		err := t.call(ctx, func(ctx context.Context) error {
			_, err := t.client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			return err
		})
		r.setAdmission(err)
		return
	}
	if c.Pod == nil {
		r.obs.Admission.Allowed = true
		return
	}
	pod := c.Pod.DeepCopy()
	pod.Name = fmt.Sprintf("case-%d", i)
	pod.Namespace = ns
	pod.UID = ""
	r.label(&pod.ObjectMeta)
	no := false
	pod.Spec.AutomountServiceAccountToken = &no // no token volume is added to the case's volumes
	if len(pod.Spec.Containers) == 0 {
		ctr := corev1.Container{Name: "probe"}
		for _, v := range pod.Spec.Volumes {
			ctr.VolumeMounts = append(ctr.VolumeMounts, corev1.VolumeMount{Name: v.Name, MountPath: "/volumes/" + v.Name})
		}
		pod.Spec.Containers = []corev1.Container{ctr}
	}
	for i := range pod.Spec.Containers {
		pod.Spec.Containers[i].Image = t.opts.ProbeImage
		pod.Spec.Containers[i].ImagePullPolicy = corev1.PullNever
	}
	var stored *corev1.Pod
	err := t.call(ctx, func(ctx context.Context) (err error) {
		stored, err = t.client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	})
	r.setAdmission(err)
	if err != nil {
		return
	}
	// v1.37 pkg/api/pod/util.go dropDisabledFields: a field the gate-off apiserver cleared.
	for i, v := range pod.Spec.Volumes {
		if v.EmptyDir != nil && v.EmptyDir.Mode != nil && i < len(stored.Spec.Volumes) &&
			stored.Spec.Volumes[i].EmptyDir != nil && stored.Spec.Volumes[i].EmptyDir.Mode == nil {
			r.obs.Admission.Dropped = append(r.obs.Admission.Dropped, fmt.Sprintf("spec.volumes[%d].emptyDir.mode", i))
		}
	}
	if !c.AdmissionOnly {
		r.pod = stored
	}
}

// label selects the binding of the case's allowlist, if it has one.
func (r *caseRun) label(m *metav1.ObjectMeta) {
	if r.policy == "" {
		return
	}
	if m.Labels == nil {
		m.Labels = map[string]string{}
	}
	m.Labels[PolicyLabel] = r.policy
}

func (r *caseRun) setAdmission(err error) {
	if err == nil {
		r.obs.Admission.Allowed = true
		return
	}
	var down *APIServerDownError
	if errors.As(err, &down) || !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err) {
		r.err = fmt.Errorf("admission: %w", err)
		return
	}
	r.obs.Admission.Errors = admissionErrors(err)
	if errs := policyErrors(err.Error()); errs != nil {
		r.obs.Admission.Errors = errs
	}
}

// plan puts the admitted volumes into probe pods: cases with the same pod-level security
// context share pods (up to BatchVolumes volumes); a case with a hostPath volume gets a pod of
// its own, since a failing hostPath keeps the whole pod from running, and so do a case with
// steps and one projecting a key its source lacks (missingKey).
func (t *Target) plan(runs []*caseRun, ns, prefix string) ([]*probePod, error) {
	t.mu.Lock()
	alone := t.opts.PodPerCase
	t.mu.Unlock()
	var pods []*probePod
	open := map[string]*probePod{}
	for _, r := range runs {
		if r.pod == nil || r.err != nil {
			continue
		}
		i := r.id
		sc, err := json.Marshal(r.pod.Spec.SecurityContext)
		if err != nil {
			return nil, err
		}
		group := string(sc)
		if len(r.c.After) > 0 || alone {
			group = fmt.Sprintf("alone-%d", i)
		}
		for _, v := range r.pod.Spec.Volumes {
			if v.HostPath != nil {
				group = fmt.Sprintf("alone-%d", i)
				r.host = path.Join(HostRoot, ns, fmt.Sprint(i))
			}
		}
		if missingKey(r.c, r.pod) {
			group = fmt.Sprintf("alone-%d", i)
		}
		p := open[group]
		if p == nil || len(p.vols)+len(r.pod.Spec.Volumes) > t.opts.BatchVolumes {
			p = &probePod{name: fmt.Sprintf("%s-%d", prefix, len(pods)), setUp: map[string]string{}}
			p.pod = t.probePodSpec(p.name, ns, r.pod.Spec.SecurityContext)
			pods = append(pods, p)
			open[group] = p
		}
		p.runs = append(p.runs, r)
		names := map[string]string{}
		for vi, v := range r.pod.Spec.Volumes {
			u := fmt.Sprintf("c%d-v%d", i, vi)
			names[v.Name] = u
			bv := batchVolume{run: r, index: vi, unique: u}
			r.vols = append(r.vols, bv)
			p.vols = append(p.vols, bv)
			v = *v.DeepCopy()
			v.Name = u
			if v.HostPath != nil {
				v.HostPath.Path = path.Join(r.host, v.HostPath.Path)
			}
			if v.FlexVolume != nil && v.FlexVolume.Driver == fixturedriver.Driver {
				// The driver reads the volume's storage from its options (fixturedriver.Main).
				storage, err := json.Marshal(r.c.Storage[r.pod.Spec.Volumes[vi].Name])
				if err != nil {
					return nil, err
				}
				if v.FlexVolume.Options == nil {
					v.FlexVolume.Options = map[string]string{}
				}
				v.FlexVolume.Options[fixturedriver.StorageOption] = string(storage)
				p.flex = true
			}
			r.renameSources(&v.VolumeSource)
			p.pod.Spec.Volumes = append(p.pod.Spec.Volumes, v)
			p.pod.Spec.Containers[0].VolumeMounts = append(p.pod.Spec.Containers[0].VolumeMounts,
				corev1.VolumeMount{Name: u, MountPath: "/volumes/" + u})
		}
		for _, pr := range r.c.Probes {
			pr.Volume = names[pr.Volume]
			r.probes = append(r.probes, pr)
		}
	}
	return pods, nil
}

// renameSources points the volume's Secret and ConfigMap references at the case's own copies.
func (r *caseRun) renameSources(v *corev1.VolumeSource) {
	i := r.id
	rename := func(kind string, name *string) {
		u := fmt.Sprintf("c%d-%s-%s", i, kind, *name)
		r.sources = append(r.sources, source{kind: kind, name: *name, unique: u})
		*name = u
	}
	switch {
	case v.Secret != nil:
		rename("secret", &v.Secret.SecretName)
	case v.ConfigMap != nil:
		rename("configmap", &v.ConfigMap.Name)
	case v.Projected != nil:
		for _, p := range v.Projected.Sources {
			if p.Secret != nil {
				rename("secret", &p.Secret.Name)
			}
			if p.ConfigMap != nil {
				rename("configmap", &p.ConfigMap.Name)
			}
		}
	}
}

// createSources makes every Secret and ConfigMap the cases project, from Case.Sources; an
// object the case does not give is created empty (docs/spec.md: "A missing object is set up
// from an empty map").
func (t *Target) createSources(ctx context.Context, ns string, runs []*caseRun) error {
	done := map[string]bool{}
	for _, r := range runs {
		for _, s := range r.sources {
			if done[s.kind+"/"+s.unique] {
				continue
			}
			done[s.kind+"/"+s.unique] = true
			data := r.c.Sources[s.kind+"/"+s.name]
			meta := metav1.ObjectMeta{Name: s.unique, Namespace: ns, Labels: ownedLabels()}
			err := t.create(ctx, func(ctx context.Context) error {
				var err error
				if s.kind == "secret" {
					sec := &corev1.Secret{ObjectMeta: meta, Data: map[string][]byte{}}
					for k, v := range data {
						sec.Data[k] = []byte(v)
					}
					_, err = t.client.CoreV1().Secrets(ns).Create(ctx, sec, metav1.CreateOptions{})
				} else {
					_, err = t.client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: meta, Data: data}, metav1.CreateOptions{})
				}
				return err
			})
			if err != nil {
				return fmt.Errorf("create %s %s: %w", s.kind, s.unique, err)
			}
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
				Name:            "probe",
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

// createFixtures makes every hostPath case's host objects on the node, under the case's root,
// from a pod that mounts HostRoot at the same path (symlinks resolve alike).
func (t *Target) createFixtures(ctx context.Context, ns, prefix string, runs []*caseRun) error {
	var need []*caseRun
	for _, r := range runs {
		if r.host != "" {
			need = append(need, r)
		}
	}
	if len(need) == 0 {
		return nil
	}
	// Not privileged: root with the runtime's default capabilities (CAP_MKNOD for device
	// fixtures) is enough, and privileged asks for capabilities some nodes lack (docs/host-features.md: cap-sys-resource).
	pod := t.probePodSpec(prefix+"-fixtures", ns, nil)
	dirOrCreate := corev1.HostPathDirectoryOrCreate
	pod.Spec.Volumes = []corev1.Volume{{Name: "host", VolumeSource: corev1.VolumeSource{
		HostPath: &corev1.HostPathVolumeSource{Path: HostRoot, Type: &dirOrCreate}}}}
	pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "host", MountPath: HostRoot}}
	if err := t.create(ctx, func(ctx context.Context) error {
		_, err := t.client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
		return err
	}); err != nil {
		return fmt.Errorf("create fixture pod: %w", err)
	}
	if err := t.waitRunning(ctx, ns, pod.Name, "fixture pod"); err != nil {
		return err
	}
	for _, r := range need {
		req, err := json.Marshal(map[string]any{"root": r.host, "objects": r.c.Host})
		if err != nil {
			return err
		}
		if _, err := t.exec(ctx, ns, pod.Name, []string{ProbeCommand, "-fixtures", string(req)}, nil); err != nil {
			r.err = fmt.Errorf("host fixtures: %w", err)
		}
	}
	return nil
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

func (t *Target) getPod(ctx context.Context, ns, name string) (*corev1.Pod, error) {
	var p *corev1.Pod
	err := t.call(ctx, func(ctx context.Context) (err error) {
		p, err = t.client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		return err
	})
	return p, err
}

// containerFailure reports a container that cannot start for a reason no wait will fix.
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
	if err := t.startPod(ctx, p); err != nil {
		return err
	}
	if p.running && len(p.runs) == 1 && len(p.runs[0].c.After) > 0 {
		restore, err := t.runSteps(ctx, p)
		defer restore()
		if err != nil {
			return err
		}
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
		if err := containerFailure(pod); err != nil {
			return false, err
		}
		if pod.Status.Phase == corev1.PodRunning {
			p.running = true
			return true, nil
		}
		if err := t.failedMounts(ctx, p); err != nil {
			return false, err
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
	if p.running {
		var err error
		if answer, err = t.observePod(ctx, p); err != nil {
			return err
		}
	}
	t.fill(p, answer)
	return nil
}

// failedMounts collects the kubelet's FailedMount events of p: `MountVolume.SetUp failed for
// volume "NAME" : TEXT` (v1.37 pkg/kubelet/volumemanager/reconciler, operationexecutor).
func (t *Target) failedMounts(ctx context.Context, p *probePod) error {
	sel := fields.Set{"involvedObject.name": p.name, "reason": "FailedMount"}.AsSelector().String()
	var evs *corev1.EventList
	err := t.call(ctx, func(ctx context.Context) (err error) {
		evs, err = t.client.CoreV1().Events(p.pod.Namespace).List(ctx, metav1.ListOptions{FieldSelector: sel})
		return err
	})
	if err != nil {
		return fmt.Errorf("list events of %s: %w", p.name, err)
	}
	for _, e := range evs.Items {
		_, rest, ok := strings.Cut(e.Message, `MountVolume.SetUp failed for volume "`)
		if !ok {
			continue
		}
		name, text, ok := strings.Cut(rest, `" : `)
		if ok {
			p.setUp[name] = text
		}
	}
	return nil
}

// observePod runs one request in the probe container: every volume's snapshot, then every
// case's probes in case order.
func (t *Target) observePod(ctx context.Context, p *probePod) (*framework.Observation, error) {
	req := incontainer.Request{EachAsItsUser: true}
	for _, v := range p.vols {
		src := v.run.pod.Spec.Volumes[v.index]
		req.Volumes = append(req.Volumes, incontainer.Volume{Name: v.unique, Path: "/volumes/" + v.unique, Root: src.HostPath != nil})
	}
	for _, r := range p.runs {
		for _, pr := range r.probes {
			req.Probes = append(req.Probes, probe.Step{Root: "/volumes/" + pr.Volume, Probe: pr})
		}
	}
	in, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	out, err := t.exec(ctx, p.pod.Namespace, p.name, []string{ProbeCommand, "-request", "-"}, in)
	if err != nil {
		return nil, err
	}
	obs, err := incontainer.DecodeAnswer(out, req)
	if err != nil {
		return nil, fmt.Errorf("probe answer of %s: %w: %q", p.name, err, out)
	}
	return obs, nil
}

// fill writes the pod's answer into each case's Observation, under the case's own names.
func (t *Target) fill(p *probePod, answer *framework.Observation) {
	paths := map[string][]framework.PathObservation{}
	var results []framework.ProbeResult
	if answer != nil {
		for _, v := range answer.Volumes {
			paths[v.Name] = v.Paths
		}
		results = answer.Probes
	}
	for _, r := range p.runs {
		for _, bv := range r.vols {
			src := r.pod.Spec.Volumes[bv.index]
			vo := framework.VolumeObservation{Name: src.Name, Type: framework.VolumeType(src), SetUp: framework.SetUpOK}
			if src.EmptyDir != nil {
				vo.Medium = string(src.EmptyDir.Medium)
			}
			if text, failed := p.setUp[bv.unique]; failed {
				vo.SetUp = strings.ReplaceAll(text, r.host, "")
			} else {
				vo.Paths = paths[bv.unique]
			}
			r.obs.Volumes = append(r.obs.Volumes, vo)
		}
		if answer != nil {
			n := len(r.probes)
			for i, res := range results[:n] {
				res.Name = r.c.Probes[i].Name
				r.obs.Probes = append(r.obs.Probes, res)
			}
			results = results[n:]
		}
	}
}

// exec runs cmd in the pod's probe container, stdin from in, and returns stdout. It is retried
// only when the apiserver refused the connection (the command did not start: the probes must
// not run twice), and bounded by execTimeout.
func (t *Target) exec(ctx context.Context, ns, pod string, cmd []string, in []byte) ([]byte, error) {
	// The apiserver answers (or an outage is waited out) before the exec, not in the middle.
	if _, err := t.getPod(ctx, ns, pod); err != nil {
		return nil, fmt.Errorf("exec %s in %s/%s: %w", cmd[0], ns, pod, err)
	}
	var out []byte
	err := t.callWith(ctx, execTimeout, func(actx context.Context) error {
		var err error
		out, err = t.execOnce(actx, ns, pod, cmd, in)
		switch {
		case err == nil:
		case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
			return permanentError{fmt.Errorf("%w (not finished within %s)", err, execTimeout)}
		case execNotStarted(err):
		case isTransient(err):
			return permanentError{fmt.Errorf("%w (the connection was cut while the command ran: it is not run again, so that no probe runs twice)", err)}
		default:
			return permanentError{err}
		}
		return err
	})
	return out, err
}

// execNotStarted reports whether an exec failed before it reached the apiserver.
func execNotStarted(err error) bool {
	return utilnet.IsConnectionRefused(err) || strings.Contains(err.Error(), "connection refused") ||
		strings.Contains(err.Error(), "no route to host")
}

func (t *Target) execOnce(ctx context.Context, ns, pod string, cmd []string, in []byte) ([]byte, error) {
	req := t.client.CoreV1().RESTClient().Post().Resource("pods").Namespace(ns).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: "probe", Command: cmd, Stdin: in != nil, Stdout: true, Stderr: true},
			scheme.ParameterCodec)
	ws, err := remotecommand.NewWebSocketExecutor(t.config, "GET", req.URL().String())
	if err != nil {
		return nil, err
	}
	spdy, err := remotecommand.NewSPDYExecutor(t.config, "POST", req.URL())
	if err != nil {
		return nil, err
	}
	ex, err := remotecommand.NewFallbackExecutor(ws, spdy, httpstream.IsUpgradeFailure)
	if err != nil {
		return nil, err
	}
	var stdout, stderr bytes.Buffer
	opts := remotecommand.StreamOptions{Stdout: &stdout, Stderr: &stderr}
	if in != nil {
		opts.Stdin = bytes.NewReader(in)
	}
	if err := ex.StreamWithContext(ctx, opts); err != nil {
		return nil, fmt.Errorf("exec %s in %s/%s: %w: %s", cmd[0], ns, pod, err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// missingKey reports whether a secret or configMap (or a projection of one) of pod selects a key
// that the case's source does not have without being optional: v1.37 MakePayload fails that
// volume's set-up, and the kubelet never starts the pod holding it.
func missingKey(c *framework.Case, pod *corev1.Pod) bool {
	lacks := func(object string, items []corev1.KeyToPath, optional *bool) bool {
		if optional != nil && *optional {
			return false
		}
		data, ok := c.Sources[object]
		if !ok {
			return true
		}
		for _, it := range items {
			if _, ok := data[it.Key]; !ok {
				return true
			}
		}
		return false
	}
	for _, v := range pod.Spec.Volumes {
		switch {
		case v.Secret != nil:
			if lacks("secret/"+v.Secret.SecretName, v.Secret.Items, v.Secret.Optional) {
				return true
			}
		case v.ConfigMap != nil:
			if lacks("configmap/"+v.ConfigMap.Name, v.ConfigMap.Items, v.ConfigMap.Optional) {
				return true
			}
		case v.Projected != nil:
			for _, src := range v.Projected.Sources {
				if src.Secret != nil && lacks("secret/"+src.Secret.Name, src.Secret.Items, src.Secret.Optional) ||
					src.ConfigMap != nil && lacks("configmap/"+src.ConfigMap.Name, src.ConfigMap.Items, src.ConfigMap.Optional) {
					return true
				}
			}
		}
	}
	return false
}
