// Package container is the target "container": the volume as a workload sees it. The reference
// node (nodeimpl/kubelet) prepares a case's volumes on this machine under a case root; real
// containers of a Docker engine, started with testcontainers-go, bind-mount them (tmpfs and
// hugetlbfs exactly as the node mounted them) as the pod's volumeMounts say, and the static probe
// binary (package incontainer, image volperm/probe:<hash>) snapshots and probes them from inside,
// as the uid/gid/groups the container runs as. Admission runs like the reference target's.
//
// Batching: a suite that calls Prepare with its cases runs them all at once: one container per
// distinct user set for all of them (case i's volumes under /case-i/...), one snapshot exec, and
// the probes in phases (one exec per user per phase); Observe then returns what was observed.
// Cases not prepared, or a target built with "container:per-case", run with containers of their
// own. Nothing is held between calls: every run tears down its volumes and removes its containers.
package container

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/caseroot"
	"github.com/volperm/volperm/framework/hostfix"
	"github.com/volperm/volperm/framework/refnode"
	"github.com/volperm/volperm/framework/snapshot"
	"github.com/volperm/volperm/hostfeature"
	"github.com/volperm/volperm/nodeimpl/hostpath"
	"github.com/volperm/volperm/nodeimpl/kubelet"
)

// Name is the name the target registers under.
const Name = "container"

// ArgPerCase is the target argument ("container:per-case") that turns batching off.
const ArgPerCase = "per-case"

func init() {
	framework.RegisterTarget(Name, "volumes prepared by the reference node, seen from inside real Docker containers run as the pod's users (testcontainers-go; arg per-case turns batching off)", New)
}

// Stats count what the target did, for reports and for measuring batching.
type Stats struct {
	// ContainerStarts is how many containers were started.
	ContainerStarts int `json:"containerStarts"`
	// Execs is how many times the probe was run inside a container.
	Execs int `json:"execs"`
}

// Target runs cases in containers.
type Target struct {
	roots   *caseroot.Roots
	perCase bool
	runID   string

	mu        sync.Mutex
	eng       *engine
	engErr    error
	connected bool
	done      map[string]kept
	stats     Stats
	absent    map[string]string
}

var (
	_ framework.Target  = (*Target)(nil)
	_ framework.Batcher = (*Target)(nil)
)

// New builds the container target. opts.Arg is "" (batched) or "per-case". It does not reach the
// engine yet: a missing engine makes Supports say so for every case that needs a node.
func New(opts framework.TargetOptions) (framework.Target, error) {
	if opts.Arg != "" && opts.Arg != ArgPerCase {
		return nil, fmt.Errorf("target %q takes no argument or %q (got %q)", Name, ArgPerCase, opts.Arg)
	}
	// testcontainers-go's reaper (Ryuk) would pull an image from a registry; the target removes
	// its containers itself.
	if err := os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true"); err != nil {
		return nil, err
	}
	roots, err := caseroot.New(opts.WorkDir)
	if err != nil {
		return nil, err
	}
	return &Target{
		roots:   roots,
		perCase: opts.Arg == ArgPerCase,
		runID:   strconv.FormatInt(time.Now().UnixNano(), 36) + "-" + strconv.Itoa(os.Getpid()),
		absent:  map[string]string{},
	}, nil
}

// engine connects once and imports the probe image; a failure is remembered.
func (t *Target) engine(ctx context.Context) (*engine, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.connected {
		t.connected = true
		t.eng, t.engErr = connect(ctx, t.runID)
		if t.engErr == nil {
			if t.engErr = t.eng.ensureImage(ctx); t.engErr != nil {
				t.eng.cli.Close()
				t.eng = nil
			}
		}
	}
	return t.eng, t.engErr
}

// Info names the target, the engine and the probe image.
func (t *Target) Info() framework.TargetInfo {
	info := framework.TargetInfo{Name: Name, Details: map[string]string{"engineHost": engineHost(), "mode": "batched"}}
	if t.perCase {
		info.Details["mode"] = ArgPerCase
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.eng != nil {
		info.Version = "docker " + t.eng.version
		info.Details["apiVersion"] = t.eng.apiVersion
		info.Details["image"] = t.eng.image
	}
	info.Details["containerStarts"] = strconv.Itoa(t.stats.ContainerStarts)
	return info
}

// Stats returns what the target did so far.
func (t *Target) Stats() Stats {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.stats
}

// Supports tells whether c can run here: admission-only cases always; cases that reach a node
// need what the reference node needs (root, hugetlbfs), an engine, mounts without subPath, no
// change made through a read-only mount, and hostPath volumes where something exists after
// set-up.
func (t *Target) Supports(c *framework.Case) (bool, string) {
	cc := c.DeepCopy()
	cc.Complete()
	res := admit(cc)
	if !reachesNode(cc, res) {
		return true, ""
	}
	if ok, why := refnode.SupportsHere(res.Pod); !ok {
		return false, why
	}
	for _, ctr := range res.Pod.Spec.Containers {
		for _, m := range ctr.VolumeMounts {
			if m.SubPath != "" || m.SubPathExpr != "" {
				return false, fmt.Sprintf("volumeMount %q of container %q uses subPath: the container target mounts whole volumes only", m.Name, ctr.Name)
			}
		}
	}
	if why := readOnlyWrite(cc, res.Pod); why != "" {
		return false, why
	}
	if _, err := t.engine(context.Background()); err != nil {
		why := err.Error()
		if hostfeature.Required(hostfeature.ContainerEngine) {
			why += " (required here: " + hostfeature.EnvRequire + " or CI=true)"
		}
		return false, why
	}
	if why := t.hostPathAbsent(cc, res.Pod); why != "" {
		return false, why
	}
	return true, ""
}

// HostNeeds: a case that reaches a node needs what the reference node needs here
// (kubelet.HostNeeds) and a container engine.
func (t *Target) HostNeeds(c *framework.Case) []hostfeature.Feature {
	cc := c.DeepCopy()
	cc.Complete()
	res := admit(cc)
	if !reachesNode(cc, res) {
		return nil
	}
	return append(kubelet.HostNeeds(res.Pod), hostfeature.ContainerEngine)
}

// mutating are the probe ops a read-only mount refuses with EROFS.
var mutating = map[framework.ProbeOp]bool{
	framework.OpCreate: true, framework.OpWrite: true, framework.OpDelete: true,
	framework.OpRename: true, framework.OpMkdir: true,
}

// readOnlyWrite says why c is unsupported when it changes a volume that containers mount
// read-only (volumeMounts readOnly, or a secret/configMap/downwardAPI/projected volume: v1.37
// kubelet makeMounts mustMountRO). Inside a container the kernel refuses with EROFS, and a
// container cannot chmod there; docs/spec.md models neither (its probes and steps act on the
// node's directory), so the target does not claim an answer that would differ only by that.
func readOnlyWrite(c *framework.Case, pod *corev1.Pod) string {
	ro := map[string]bool{}
	mounts := volumeMounts(pod)
	for _, v := range pod.Spec.Volumes {
		m, ok := mounts[v.Name]
		ro[v.Name] = mustMountRO(v) || (ok && m.ReadOnly)
	}
	for _, p := range c.Probes {
		if mutating[p.Op] && ro[p.Volume] {
			return fmt.Sprintf("probe %q (%s) changes volume %q, which containers mount read-only: the kernel answers EROFS there, which docs/spec.md does not model", p.Name, p.Op, p.Volume)
		}
	}
	for i, s := range c.After {
		if s.Chmod != nil && ro[s.Chmod.Volume] {
			return fmt.Sprintf("after[%d].chmod changes volume %q, which containers mount read-only: a container cannot chmod there (EROFS), which docs/spec.md does not model", i, s.Chmod.Volume)
		}
	}
	return ""
}

func reachesNode(c *framework.Case, res framework.Admitted) bool {
	return res.ReachesNode(c)
}

// hostPathAbsent sets up c's hostPath volumes alone on a scratch host and says why the case is
// unsupported when one of them has nothing at its path afterwards (docs/spec.md "Snapshot":
// `absent`). The kubelet leaves that path to the runtime: containerd and CRI-O create a
// directory, Docker's mount API refuses the bind. What a container sees there is the runtime's
// choice, not the node's, so the target does not claim an answer. Cached per case name.
func (t *Target) hostPathAbsent(c *framework.Case, pod *corev1.Pod) string {
	t.mu.Lock()
	why, done := t.absent[c.Name]
	t.mu.Unlock()
	if done {
		return why
	}
	why = t.checkHostPaths(c, pod)
	t.mu.Lock()
	t.absent[c.Name] = why
	t.mu.Unlock()
	return why
}

func (t *Target) checkHostPaths(c *framework.Case, pod *corev1.Pod) (why string) {
	var vols []corev1.Volume
	for _, v := range pod.Spec.Volumes {
		if v.HostPath != nil {
			vols = append(vols, v)
		}
	}
	if len(vols) == 0 {
		return ""
	}
	root, err := t.roots.Make("volperm-ctr-check-")
	if err != nil {
		return "cannot check hostPath set-up: " + err.Error()
	}
	defer func() {
		if err := t.roots.Remove(root); err != nil && why == "" {
			why = "cannot check hostPath set-up: " + err.Error()
		}
	}()
	if err := hostfix.Create(root, c.Host); err != nil {
		return "cannot check hostPath set-up: " + err.Error()
	}
	h := hostpath.Host{Root: root}
	for _, v := range vols {
		// In pod order, as the kubelet sets them up: one volume's *OrCreate may make another's path.
		if h.SetUp(v.HostPath.Path, v.HostPath.Type) != nil {
			continue
		}
		paths, err := snapshot.Root(h.RealPath(v.HostPath.Path))
		if err != nil {
			return "cannot check hostPath set-up: " + err.Error()
		}
		if paths[0].Type == snapshot.Absent {
			return fmt.Sprintf("hostPath volume %q: nothing exists at %s after set-up; what a container sees there is the runtime's choice (containerd creates a directory, Docker refuses the bind), not the node's", v.Name, v.HostPath.Path)
		}
	}
	return ""
}

// Prepare runs every case of cases that reaches a node and that the target supports, sharing
// containers (one per distinct user set), and keeps each Observation for its Observe. It replaces
// what an earlier Prepare kept. In per-case mode it does nothing.
func (t *Target) Prepare(ctx context.Context, cases []*framework.Case) error {
	if t.perCase {
		return nil
	}
	var todo []*framework.Case
	keys := map[string]string{}
	for _, c := range cases {
		if ok, _ := t.Supports(c); !ok {
			continue
		}
		cc := c.DeepCopy()
		cc.Complete()
		if reachesNode(cc, admit(cc)) {
			todo = append(todo, cc)
			keys[c.Name] = caseKey(c)
		}
	}
	t.mu.Lock()
	t.done = map[string]kept{}
	t.mu.Unlock()
	if len(todo) == 0 {
		return nil
	}
	out, err := t.run(ctx, todo, true)
	if err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for name, o := range out {
		t.done[name] = kept{key: keys[name], outcome: o}
	}
	return nil
}

// kept is a prepared case's outcome, with the case it was for.
type kept struct {
	key string
	outcome
}

// caseKey identifies a case's content: Observe uses a kept outcome only for the very same case.
func caseKey(c *framework.Case) string {
	b, err := json.Marshal(c)
	if err != nil {
		return ""
	}
	return string(b)
}

// Observe runs c (docs/spec.md "The order of events"). A case Prepare ran returns what it
// observed; any other starts its own containers and removes them before returning.
func (t *Target) Observe(ctx context.Context, in *framework.Case) (*framework.Observation, error) {
	c := in.DeepCopy()
	c.Complete()
	res := admit(c)
	if !reachesNode(c, res) {
		obs := &framework.Observation{
			APIVersion: framework.ObservationVersion,
			Case:       c.Name,
			Source:     Name,
			Admission:  res.Admission,
		}
		obs.Normalize()
		return obs, nil
	}
	if ok, why := t.Supports(c); !ok {
		return nil, fmt.Errorf("case %q cannot run here: %s", c.Name, why)
	}
	t.mu.Lock()
	k, ok := t.done[c.Name]
	if ok && k.key == caseKey(in) {
		delete(t.done, c.Name)
	} else {
		ok = false
	}
	t.mu.Unlock()
	if ok {
		return k.obs, k.err
	}
	out, err := t.run(ctx, []*framework.Case{c}, false)
	if err != nil {
		return nil, err
	}
	return out[c.Name].obs, out[c.Name].err
}

func (t *Target) count(f func(*Stats)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	f(&t.stats)
}

// Close removes every container this run started (also those a cancelled start left) and every
// case root left behind.
func (t *Target) Close() error {
	ctx := context.Background()
	t.mu.Lock()
	eng := t.eng
	t.eng, t.connected, t.done = nil, false, nil
	t.mu.Unlock()
	var errs []error
	if eng != nil {
		errs = append(errs, eng.removeAll(ctx), eng.cli.Close())
	}
	errs = append(errs, t.roots.RemoveAll())
	return errors.Join(errs...)
}

// admit is the reference apiserver: the container target tests a node, not an apiserver.
func admit(c *framework.Case) framework.Admitted {
	a, _ := refnode.APIServer{}.Admit(c) // the reference apiserver never errs
	return a
}
