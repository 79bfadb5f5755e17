// Package container is the target "container": the volume as a workload sees it. The reference
// node (nodeimpl/kubelet) prepares a case's volumes on this machine under a case root; real
// containers of a Docker engine, started with testcontainers-go, bind-mount them (tmpfs and
// hugetlbfs exactly as the node mounted them) as the pod's volumeMounts say, and the static probe
// binary (package incontainer, image volperm/probe:<hash>) snapshots and probes them from inside,
// as the uid/gid/groups the container runs as. Admission runs like the reference target's.
//
// The target is a pair (framework.Pair): the reference apiserver admits, this package's node
// half sets up and observes; it registers that half too, so "upstream+container" pairs the real
// apiserver with it.
//
// Batching (framework.BatchNode): a suite that calls Prepare with its cases runs them all at
// once: one container per distinct user set for all of them (case i's volumes under
// /case-i/...), one snapshot exec, and the probes in phases (one exec per user per phase);
// Observe then returns what was observed. Cases not prepared, or a target built with
// "container:per-case", run with containers of their own. Nothing is held between calls: every
// run tears down its volumes and removes its containers.
package container

import (
	"context"
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
	"github.com/volperm/volperm/framework/needs"
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
	framework.RegisterHalves(Name, nil, func(o framework.TargetOptions) (framework.Node, error) { return newNode(o) })
}

// Stats count what the target did, for reports and for measuring batching.
type Stats struct {
	// ContainerStarts is how many containers were started.
	ContainerStarts int `json:"containerStarts"`
	// Execs is how many times the probe was run inside a container.
	Execs int `json:"execs"`
}

// node is the kubelet half: the reference kubelet on this machine, containers for the workload.
type node struct {
	roots   *caseroot.Roots
	perCase bool
	runID   string

	mu        sync.Mutex
	eng       *engine
	engErr    error
	connected bool
	stats     Stats
	absent    map[string]string
}

var (
	_ framework.BatchNode     = (*node)(nil)
	_ framework.NodeHostNeeds = (*node)(nil)
)

// New builds the container target: the reference apiserver and this package's node. opts.Arg is
// "" (batched) or "per-case".
func New(opts framework.TargetOptions) (framework.Target, error) {
	n, err := newNode(opts)
	if err != nil {
		return nil, err
	}
	return framework.NewTargetPair(Name, refnode.APIServer{}, n), nil
}

// newNode builds the node half. It does not reach the engine yet: a missing engine makes
// SupportsNode say so for every case that reaches the node.
func newNode(opts framework.TargetOptions) (*node, error) {
	if opts.Arg != "" && opts.Arg != ArgPerCase {
		return nil, fmt.Errorf("target %q takes no argument or %q (got %q)", Name, ArgPerCase, opts.Arg)
	}
	roots, err := caseroot.New(opts.WorkDir)
	if err != nil {
		return nil, err
	}
	return &node{
		roots:   roots,
		perCase: opts.Arg == ArgPerCase,
		runID:   strconv.FormatInt(time.Now().UnixNano(), 36) + "-" + strconv.Itoa(os.Getpid()),
		absent:  map[string]string{},
	}, nil
}

// engine connects once and imports the probe image; a failure is remembered.
func (n *node) engine(ctx context.Context) (*engine, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.connected {
		n.connected = true
		n.eng, n.engErr = connect(ctx, n.runID)
		if n.engErr == nil {
			if n.engErr = n.eng.ensureImage(ctx); n.engErr != nil {
				n.eng.cli.Close()
				n.eng = nil
			}
		}
	}
	return n.eng, n.engErr
}

// Info names the node half, the engine and the probe image.
func (n *node) Info() framework.TargetInfo {
	info := framework.TargetInfo{Name: Name, Details: map[string]string{"engineHost": engineHost(), "mode": "batched"}}
	if n.perCase {
		info.Details["mode"] = ArgPerCase
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.eng != nil {
		info.Version = "docker " + n.eng.version
		info.Details["apiVersion"] = n.eng.apiVersion
		info.Details["image"] = n.eng.image
	}
	info.Details["containerStarts"] = strconv.Itoa(n.stats.ContainerStarts)
	return info
}

// Stats returns what the node did so far.
func (n *node) Stats() Stats {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.stats
}

// SupportsNode tells whether the admitted c can run here: what the reference node needs (root,
// hugetlbfs), an engine, mounts without subPath, no step's chmod through a read-only mount, and
// hostPath volumes where something exists after set-up.
func (n *node) SupportsNode(c *framework.Case, a framework.Admitted) (bool, string) {
	if framework.InUserNamespace(a.Pod) {
		return false, "hostUsers: false: Docker 20.10 (runc 1.1) has no per-container user namespace nor idmapped mounts (only the daemon-wide userns-remap)"
	}
	if ok, why := refnode.SupportsHere(a.Pod); !ok {
		return false, why
	}
	for _, ctr := range a.Pod.Spec.Containers {
		for _, m := range ctr.VolumeMounts {
			if m.SubPath != "" || m.SubPathExpr != "" {
				return false, fmt.Sprintf("volumeMount %q of container %q uses subPath: the container target mounts whole volumes only", m.Name, ctr.Name)
			}
		}
	}
	if why := readOnlyWrite(c, a.Pod); why != "" {
		return false, why
	}
	for _, n := range needs.Of(c) {
		if n.Label == needs.RecursiveReadOnly {
			return false, "recursiveReadOnly: Docker 20.10 has no recursive read-only bind mount (bind-recursive=readonly came with Docker 25)"
		}
	}
	for _, n := range needs.Of(c) {
		if n.Label == needs.ImageVolumes {
			return false, "image volumes: Docker 20.10 mounts no image as a volume (the container target's runtime)"
		}
		if n.Label == needs.SELinux {
			return false, "a node with SELinux on: " + n.Reason
		}
		if n.Label == needs.MountOptions || n.Label == needs.RuntimeWithoutMountOptions {
			return false, "bindMountOptions on a node: the container target's kubelet plays no admission (the declared node features) and its probe containers are not the pod's mounts"
		}
	}
	if sc := a.Pod.Spec.SecurityContext; framework.HasContainerProbes(c) || (sc != nil && sc.SupplementalGroupsPolicy != nil) {
		return false, "supplementalGroupsPolicy and probes as the container: the container target runs probe containers of its own with explicit ids, not the pod's container as its kubelet and runtime make it (Docker 20.10 always merges the image's groups and has no Strict)"
	}
	if e := framework.ContainerConfigError(a.Pod, !c.Lacks(framework.RuntimeRecursiveReadOnlyMounts)); e != "" {
		return false, "the kubelet refuses the pod's container (" + e + "): the container target runs probe containers of its own, not the pod's"
	}
	if _, err := n.engine(context.Background()); err != nil {
		why := err.Error()
		if hostfeature.Required(hostfeature.ContainerEngine) {
			why += " (required here: " + hostfeature.EnvRequire + " or CI=true)"
		}
		return false, why
	}
	if why := n.hostPathAbsent(c, a.Pod); why != "" {
		return false, why
	}
	return true, ""
}

// RunsRelease: the reference kubelet sets the volumes up as any supported release would
// (docs/spec.md "Releases").
func (n *node) RunsRelease(string) bool { return true }

// HostNeeds: what the reference node needs here (kubelet.HostNeeds) and a container engine.
func (n *node) HostNeeds(_ *framework.Case, a framework.Admitted) []hostfeature.Feature {
	return append(kubelet.HostNeeds(a.Pod), hostfeature.ContainerEngine)
}

// readOnlyWrite says why c is unsupported when a step chmods a volume that containers mount
// read-only (framework.ReadOnlyMount): the target plays the step inside a container, where the
// kernel refuses with EROFS, and docs/spec.md's steps act on the node's directory. Probes
// through a read-only mount are modelled (docs/spec.md [probes.read-only]).
func readOnlyWrite(c *framework.Case, pod *corev1.Pod) string {
	for i, s := range c.After {
		if s.Chmod == nil {
			continue
		}
		for _, v := range pod.Spec.Volumes {
			if v.Name == s.Chmod.Volume && framework.ReadOnlyMount(pod, v) {
				return fmt.Sprintf("after[%d].chmod changes volume %q, which containers mount read-only: a container cannot chmod there (EROFS), which docs/spec.md does not model", i, s.Chmod.Volume)
			}
		}
	}
	return ""
}

// hostPathAbsent sets up c's hostPath volumes alone on a scratch host and says why the case is
// unsupported when one of them has nothing at its path afterwards (docs/spec.md "Snapshot":
// `absent`). The kubelet leaves that path to the runtime: containerd and CRI-O create a
// directory, Docker's mount API refuses the bind. What a container sees there is the runtime's
// choice, not the node's, so the target does not claim an answer. Cached per case name.
func (n *node) hostPathAbsent(c *framework.Case, pod *corev1.Pod) string {
	n.mu.Lock()
	why, done := n.absent[c.Name]
	n.mu.Unlock()
	if done {
		return why
	}
	why = n.checkHostPaths(c, pod)
	n.mu.Lock()
	n.absent[c.Name] = why
	n.mu.Unlock()
	return why
}

func (n *node) checkHostPaths(c *framework.Case, pod *corev1.Pod) (why string) {
	var vols []corev1.Volume
	for _, v := range pod.Spec.Volumes {
		if v.HostPath != nil {
			vols = append(vols, v)
		}
	}
	if len(vols) == 0 {
		return ""
	}
	root, err := n.roots.Make("volperm-ctr-check-")
	if err != nil {
		return "cannot check hostPath set-up: " + err.Error()
	}
	defer func() {
		if err := n.roots.Remove(root); err != nil && why == "" {
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

// Batching is false for a node built with "container:per-case".
func (n *node) Batching() bool { return !n.perCase }

// ObserveBatch runs cases sharing containers (one per distinct user set).
func (n *node) ObserveBatch(ctx context.Context, cases []framework.NodeCase) []framework.NodeResult {
	out, err := n.run(ctx, cases, true)
	if err != nil {
		out = make([]framework.NodeResult, len(cases))
		for i := range out {
			out[i].Err = err
		}
	}
	return out
}

// ObserveNode runs c (docs/spec.md "The order of events") with containers of its own and
// removes them before returning.
func (n *node) ObserveNode(ctx context.Context, c *framework.Case, a framework.Admitted) framework.NodeResult {
	out, err := n.run(ctx, []framework.NodeCase{{Case: c, Admitted: a}}, false)
	if err != nil {
		return framework.NodeResult{Err: err}
	}
	return out[0]
}

func (n *node) count(f func(*Stats)) {
	n.mu.Lock()
	defer n.mu.Unlock()
	f(&n.stats)
}

// Close removes every container this run started (also those a cancelled start left) and every
// case root left behind.
func (n *node) Close() error {
	ctx := context.Background()
	n.mu.Lock()
	eng := n.eng
	n.eng, n.connected = nil, false
	n.mu.Unlock()
	var errs []error
	if eng != nil {
		errs = append(errs, eng.removeAll(ctx), eng.cli.Close())
	}
	errs = append(errs, n.roots.RemoveAll())
	return errors.Join(errs...)
}
