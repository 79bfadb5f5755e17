// Package upstream is the target "upstream[@vX.Y.Z]": the catalogue against the real
// Kubernetes code of one release. The code runs in an agent built from agents/upstream for that
// release (build.go; cached per release and source) and driven served through the exec protocol
// (framework/execagent): its `admit` is the kube-apiserver's defaulting, field dropping and
// validation, its `setup`/`teardown` the kubelet's real volume plugins with the real mounter and
// host utils in the directories the harness gives. volperm itself imports no k8s.io/kubernetes.
package upstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sort"
	"strconv"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/execagent"
	"github.com/volperm/volperm/framework/k8srelease"
	"github.com/volperm/volperm/framework/knowndiff"
	"github.com/volperm/volperm/hostfeature"
)

// Name is the name the target registers under.
const Name = "upstream"

func init() {
	framework.RegisterTarget(Name, "the real Kubernetes apiserver validation and kubelet volume plugins of one release, built into an agent: upstream (= upstream@"+k8srelease.DefaultRelease+"), upstream@vX.Y.Z, or upstream@matrix: every kube-apiserver release x kubelet release the skew policy allows (needs root for node-side cases)", New)
	framework.RegisterHalves(Name,
		func(opts framework.TargetOptions) (framework.APIServer, error) { return NewAPIServer(opts) },
		func(opts framework.TargetOptions) (framework.Node, error) { return NewNode(opts) })
}

// New builds the target: the release's apiserver with its kubelet, one agent process each; or,
// for upstream@matrix, every release cell (NewMatrix).
func New(opts framework.TargetOptions) (framework.Target, error) {
	if opts.Arg == MatrixArg {
		return NewMatrix(opts)
	}
	api, err := NewAPIServer(opts)
	if err != nil {
		return nil, err
	}
	node, err := NewNode(opts)
	if err != nil {
		return nil, err
	}
	return framework.NewTargetPair(Name, api, node), nil
}

// MatrixArg is the argument of the release matrix: upstream@matrix.
const MatrixArg = "matrix"

// NewMatrix builds upstream@matrix: an agent of every release volperm supports (Releases), and a
// pair for every cell the version-skew policy allows, kube-apiserver of one release x kubelet of
// the same or up to framework.MaxKubeletSkew minors older (10 cells), sharing the halves.
func NewMatrix(opts framework.TargetOptions) (framework.Target, error) {
	apis := map[string]*APIServer{}
	nodes := map[string]*Node{}
	var closers []io.Closer
	fail := func(err error) (framework.Target, error) {
		for _, c := range closers {
			err = errors.Join(err, c.Close())
		}
		return nil, err
	}
	for _, release := range k8srelease.Releases {
		o := opts
		o.Arg = release
		a, err := NewAPIServer(o)
		if err != nil {
			return fail(err)
		}
		closers = append(closers, a)
		n, err := NewNode(o)
		if err != nil {
			return fail(err)
		}
		closers = append(closers, n)
		apis[framework.MinorRelease(release)], nodes[framework.MinorRelease(release)] = a, n
	}
	by := map[framework.Releases]framework.Target{}
	var cells []framework.Releases
	for ai := len(framework.SupportedReleases) - 1; ai >= 0; ai-- {
		api := framework.SupportedReleases[ai]
		for ki := ai; ki >= 0 && ai-ki <= framework.MaxKubeletSkew; ki-- {
			kubelet := framework.SupportedReleases[ki]
			r := framework.Releases{APIServer: api, Kubelet: kubelet}
			by[r] = framework.NewTargetPair(Name, apis[api], nodes[kubelet])
			cells = append(cells, r)
		}
	}
	return framework.NewMatrix(Name, cells, by, closers), nil
}

// agentOptions builds (or finds) the agent of the release opts.Arg names and has the exec
// driver run it served.
func agentOptions(opts framework.TargetOptions) (framework.TargetOptions, string, error) {
	release := opts.Arg
	if release == "" {
		release = k8srelease.DefaultRelease
	}
	path, err := k8srelease.Agent(opts.InterruptContext(), release, nil)
	if err != nil {
		return opts, "", err
	}
	opts.Arg = path
	return opts, release, nil
}

// APIServer is the apiserver half: the release's admission code in one agent (Kubernetes'
// feature gate is process-global: one call at a time). The suites ask about one case at a time,
// so more agents did not make admission faster (measured: 7.4 s with two against 6.4 s).
type APIServer struct {
	*execagent.APIServer
	release string
}

// NewAPIServer builds the agent of the release and starts driving it.
func NewAPIServer(opts framework.TargetOptions) (*APIServer, error) {
	o, release, err := agentOptions(opts)
	if err != nil {
		return nil, err
	}
	a, err := execagent.NewAPIServer(o)
	if err != nil {
		return nil, err
	}
	return &APIServer{APIServer: a, release: release}, nil
}

// Release is the apiserver's minor release (framework.OfRelease).
func (a *APIServer) Release() string { return framework.MinorRelease(a.release) }

// Info names the release and how its agent is driven.
func (a *APIServer) Info() framework.TargetInfo { return info(a.release, a.APIServer.Info(), 1) }

// SupportsAdmission reports whether the release's apiserver has what c needs at admission.
func (a *APIServer) SupportsAdmission(c *framework.Case) (bool, string) {
	if c.FlexVolumePolicy != nil {
		return false, "upstream has no flexVolume driver allowlist (seed 004 is a proposal; it needs a ValidatingAdmissionPolicy)"
	}
	if len(c.PreservePermissions) > 0 || len(c.OldPreservePermissions) > 0 {
		return false, "upstream has no preservePermissions (seed 002 is a proposal)"
	}
	return gateSupport(a.release, c.Gates.APIServer)
}

// Node is the kubelet half: the release's volume plugins in agents, one case at a time each.
// Kubernetes' feature gate is process-global, so one agent process answers one call at a time;
// the node runs one agent per CPU (framework.ConcurrentNode), each with its own work dir and
// sandbox: cases are independent, as on the reference node.
type Node struct {
	agents  *pool[*execagent.Node]
	release string
}

// NewNode builds the agent of the release and starts driving it, once per CPU.
func NewNode(opts framework.TargetOptions) (*Node, error) {
	o, release, err := agentOptions(opts)
	if err != nil {
		return nil, err
	}
	agents, err := newPool(func() (*execagent.Node, error) { return execagent.NewNode(o) })
	if err != nil {
		return nil, err
	}
	return &Node{agents: agents, release: release}, nil
}

// Concurrency is the number of agents (framework.ConcurrentNode).
func (n *Node) Concurrency() int { return len(n.agents.all) }

// ObserveNode runs the case on a free agent (execagent.Node.ObserveNode).
func (n *Node) ObserveNode(ctx context.Context, c *framework.Case, a framework.Admitted) framework.NodeResult {
	agent := n.agents.get(ctx.Done())
	if agent == nil {
		return framework.NodeResult{Err: ctx.Err()}
	}
	defer n.agents.put(agent)
	return agent.ObserveNode(ctx, c, a)
}

// Close stops every agent and removes their work dirs.
func (n *Node) Close() error { return n.agents.close() }

// Info names the release and how its agents are driven.
func (n *Node) Info() framework.TargetInfo {
	return info(n.release, n.agents.all[0].Info(), len(n.agents.all))
}

// pool is one agent per CPU, each handed to one caller at a time.
type pool[T interface{ Close() error }] struct {
	all  []T
	free chan T
}

func newPool[T interface{ Close() error }](start func() (T, error)) (*pool[T], error) {
	p := &pool[T]{}
	for range max(1, runtime.NumCPU()) {
		a, err := start()
		if err != nil {
			return nil, errors.Join(err, p.close())
		}
		p.all = append(p.all, a)
	}
	p.free = make(chan T, len(p.all))
	for _, a := range p.all {
		p.free <- a
	}
	return p, nil
}

// get waits for a free agent; the zero T when done is closed first.
func (p *pool[T]) get(done <-chan struct{}) T {
	select {
	case a := <-p.free:
		return a
	case <-done:
		var zero T
		return zero
	}
}

func (p *pool[T]) put(a T) { p.free <- a }

func (p *pool[T]) close() error {
	var errs []error
	for _, a := range p.all {
		errs = append(errs, a.Close())
	}
	return errors.Join(errs...)
}

// Release is the kubelet's minor release (framework.OfRelease).
func (n *Node) Release() string { return framework.MinorRelease(n.release) }

// KnownDifference explains a case the upstream kubelet is expected to fail (framework/knowndiff).
func (n *Node) KnownDifference(c *framework.Case) (framework.KnownDifference, bool) {
	return knowndiff.Explain(c)
}

// SupportsNode reports whether the release's kubelet can run c's node side: no proposal
// features, only gates it has, and what the exec driver can run (a pod with hostUsers: false
// when the agent's hello lists the feature userNamespaces).
func (n *Node) SupportsNode(c *framework.Case, a framework.Admitted) (bool, string) {
	if len(a.Admission.PreservePermissions) > 0 {
		return false, "upstream has no preservePermissions (seed 002 is a proposal)"
	}
	if ok, why := gateSupport(n.release, c.Gates.Kubelet); !ok {
		return false, why
	}
	for _, s := range c.After {
		if s.SetGates != nil {
			if ok, why := gateSupport(n.release, s.SetGates.Kubelet); !ok {
				return false, why
			}
		}
	}
	return n.agents.all[0].SupportsNode(c, a)
}

// HostNeeds: what the exec driver needs for the pod (the agent mounts and chowns as the
// reference kubelet would).
func (n *Node) HostNeeds(c *framework.Case, a framework.Admitted) []hostfeature.Feature {
	return n.agents.all[0].HostNeeds(c, a)
}

// info is the target's name and release, with the exec driver's details and the number of agents.
func info(release string, driven framework.TargetInfo, agents int) framework.TargetInfo {
	out := framework.TargetInfo{Name: Name, Version: release, Details: map[string]string{"kubernetes": "k8s.io/kubernetes " + release, "agents": strconv.Itoa(agents)}}
	for k, v := range driven.Details {
		out.Details[k] = v
	}
	return out
}

// upstreamGates are the volperm gates Kubernetes has, by the same name (pkg/features
// kube_features.go): KEP-5502's EmptyDirVolumeMode and KEP-5936's AtomicWriteVolumeUserFields,
// from the release framework.ReleaseHas names.
var upstreamGates = framework.UpstreamGates()

// gateSupport reports whether the release can run with the volperm gates g: a gate it lacks
// can only be off (that is what it does without the gate).
func gateSupport(release string, g map[string]bool) (bool, string) {
	names := make([]string, 0, len(g))
	for n := range g {
		names = append(names, n)
	}
	sort.Strings(names)
	minor := framework.MinorRelease(release)
	for _, name := range names {
		if _, known := framework.KnownGates[name]; !known {
			return false, fmt.Sprintf("unknown feature gate %q", name)
		}
		has := false
		for _, u := range upstreamGates {
			has = has || (u == name && framework.ReleaseHas(minor, name))
		}
		if !has && g[name] {
			return false, fmt.Sprintf("upstream %s has no feature gate %s", release, name)
		}
	}
	return true, ""
}
