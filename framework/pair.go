package framework

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/hostfeature"
)

// Admitted is what an apiserver hands a kubelet: its answer and, when a pod was admitted, the
// pod as stored (defaults applied, disabled fields dropped).
type Admitted struct {
	Admission Admission
	// Pod is nil for a rejection or a PersistentVolume.
	Pod *corev1.Pod
}

// ReachesNode reports whether c goes on to a kubelet after this admission.
func (a Admitted) ReachesNode(c *Case) bool {
	return a.Admission.Allowed && a.Pod != nil && !c.AdmissionOnly && c.PersistentVolume == nil
}

// APIServer is the admission half of an implementation (docs/spec.md step 1). It must be safe
// for concurrent use: a pair whose node is a ConcurrentNode admits from several goroutines.
type APIServer interface {
	// SupportsAdmission says whether this apiserver has what c needs (a proposal's field, a
	// policy), and why not.
	SupportsAdmission(c *Case) (ok bool, reason string)
	// Admit admits c (Complete()d), within ctx (the suites' questions about a case, Supports
	// and HostNeeds, admit under context.Background). An error means the apiserver could not
	// run; a rejection is an Admission with Allowed false.
	Admit(ctx context.Context, c *Case) (Admitted, error)
	// Info names the apiserver and its version.
	Info() TargetInfo
}

// Node is the kubelet half (docs/spec.md steps 3-8).
type Node interface {
	// SupportsNode says whether this node can run c's node side here, after admission a.
	SupportsNode(c *Case, a Admitted) (ok bool, reason string)
	// ObserveNode sets up a.Pod with c's host fixtures, kubelet gates and steps, snapshots the
	// volumes, runs c's probes and tears everything down, also when ctx is cancelled.
	ObserveNode(ctx context.Context, c *Case, a Admitted) NodeResult
	Info() TargetInfo
	// Close releases what the node holds across cases.
	Close() error
}

// ReleaseRunner is implemented by a half that can run as an older Kubernetes release than the
// newest (the reference simulates every supported release: docs/spec.md "Releases"). A half
// without it runs NewestRelease only, and a cell that needs another release of it is not run.
type ReleaseRunner interface {
	RunsRelease(release string) bool
}

// OfRelease is implemented by a half that is one Kubernetes release (the upstream agent built
// for it: docs/releases.md): it runs the cells of that release only, and a case that names no
// releases runs as the releases of its target's halves (RunAsReleases).
type OfRelease interface {
	// Release is the half's minor release, "v1.36".
	Release() string
}

// releaseOf is half's one release: its OfRelease, else NewestRelease (a half that runs the
// newest, or, a ReleaseRunner, any).
func releaseOf(half any) string {
	if r, ok := half.(OfRelease); ok {
		return r.Release()
	}
	return NewestRelease
}

// releaseGap says why half cannot be the component of c's release ("" when it can); api says
// which component half is.
func releaseGap(half any, api bool, c *Case, info TargetInfo) string {
	component, release := "kubelet", c.Releases.Of(api)
	if api {
		component = "kube-apiserver"
	}
	if r, ok := half.(OfRelease); ok {
		if r.Release() == release {
			return ""
		}
		if g := gateLacking(c, api, r.Release()); g != "" {
			return fmt.Sprintf("sets feature gate %s, which %s %s lacks (that release refuses the flag); this target's %s (%s) is %s", g, component, r.Release(), component, info.Name, r.Release())
		}
		return fmt.Sprintf("needs %s %s; this target's %s (%s) is %s", component, release, component, info.Name, r.Release())
	}
	if release == NewestRelease {
		return ""
	}
	if rr, ok := half.(ReleaseRunner); ok && rr.RunsRelease(release) {
		return ""
	}
	return fmt.Sprintf("needs %s %s; this target's %s (%s) is %s only", component, release, component, info.Name, NewestRelease)
}

// gateLacking is the first gate c sets on the component (api: the apiserver) that release lacks,
// in its gates or a setGates step; "" for none.
func gateLacking(c *Case, api bool, release string) string {
	sets := []Gates{c.Gates}
	for _, s := range c.After {
		if s.SetGates != nil {
			sets = append(sets, *s.SetGates)
		}
	}
	for _, g := range sets {
		m := g.Kubelet
		if api {
			m = g.APIServer
		}
		for _, name := range sortedKeys(m) {
			if _, known := KnownGates[name]; known && !ReleaseHas(release, name) {
				return name
			}
		}
	}
	return ""
}

// NodeHostNeeds is implemented by a kubelet half whose set-up needs features of this machine
// (framework.HostNeeds for the pair).
type NodeHostNeeds interface {
	// HostNeeds lists the features of this machine the node needs to run c after admission a.
	HostNeeds(c *Case, a Admitted) []hostfeature.Feature
}

// APIServerFactory builds an apiserver half; NodeFactory a kubelet half.
type (
	APIServerFactory func(TargetOptions) (APIServer, error)
	NodeFactory      func(TargetOptions) (Node, error)
)

var (
	halvesMu   sync.Mutex
	apiservers = map[string]APIServerFactory{}
	nodes      = map[string]NodeFactory{}
)

// RegisterHalves makes name's apiserver and kubelet halves available for pairs
// ("upstream+reference": the upstream apiserver with the reference kubelet). Either may be nil.
func RegisterHalves(name string, api APIServerFactory, node NodeFactory) {
	halvesMu.Lock()
	defer halvesMu.Unlock()
	if api != nil {
		apiservers[name] = api
	}
	if node != nil {
		nodes[name] = node
	}
}

// PairSeparator joins an apiserver and a kubelet in a target reference: "upstream+reference".
const PairSeparator = "+"

// newPairTarget builds "APISERVER+KUBELET".
func newPairTarget(ref string, opts TargetOptions) (Target, error) {
	apiRef, nodeRef, _ := strings.Cut(ref, PairSeparator)
	apiName, apiArg := SplitRef(apiRef)
	nodeName, nodeArg := SplitRef(nodeRef)
	halvesMu.Lock()
	af, aok := apiservers[apiName]
	nf, nok := nodes[nodeName]
	halvesMu.Unlock()
	if !aok {
		return nil, fmt.Errorf("unknown apiserver %q in %q: use one of %s", apiName, ref, strings.Join(halfNames(apiservers), ", "))
	}
	if !nok {
		return nil, fmt.Errorf("unknown kubelet %q in %q: use one of %s", nodeName, ref, strings.Join(halfNames(nodes), ", "))
	}
	apiOpts, nodeOpts := opts, opts
	apiOpts.Arg, nodeOpts.Arg = apiArg, nodeArg
	api, err := af(apiOpts)
	if err != nil {
		return nil, err
	}
	node, err := nf(nodeOpts)
	if err != nil {
		return nil, err
	}
	return NewTargetPair(ref, api, node), nil
}

func halfNames[F any](m map[string]F) []string {
	out := make([]string, 0, len(m))
	for n := range m {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Pair is a target made of an apiserver and a kubelet: every target is one, and mixed pairs
// run the skew matrix with real code on one side and the reference on the other.
type Pair struct {
	name string
	api  APIServer
	node Node

	// admitted remembers the admission of the cases asked about last (admit), so that the
	// suites' HostNeeds, Supports and Observe of one case admit it once.
	mu       sync.Mutex
	admitted map[*Case]admission
	order    []*Case
}

// admission is one case's admission: the completed copy that was admitted, and the answer.
type admission struct {
	c   *Case
	a   Admitted
	err error
}

// admittedKept bounds the admissions a Pair remembers: more than the cases a ConcurrentNode
// prepares at once; an admission forgotten is only made again.
const admittedKept = 256

// admit admits a completed copy of in, once for as long as it is remembered. take forgets it
// (Observe: the copy and pod are the caller's from then on).
func (p *Pair) admit(ctx context.Context, in *Case, take bool) (*Case, Admitted, error) {
	p.mu.Lock()
	e, ok := p.admitted[in]
	if ok && take {
		delete(p.admitted, in)
	}
	p.mu.Unlock()
	if ok {
		return e.c, e.a, e.err
	}
	c := in.DeepCopy()
	c.Complete()
	a, err := p.api.Admit(ctx, c)
	if take {
		return c, a, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.admitted == nil {
		p.admitted = map[*Case]admission{}
	}
	p.admitted[in] = admission{c, a, err}
	p.order = append(p.order, in)
	for len(p.order) > admittedKept {
		delete(p.admitted, p.order[0])
		p.order = p.order[1:]
	}
	return c, a, err
}

// NewPair names a target made of api and node.
func NewPair(name string, api APIServer, node Node) *Pair {
	return &Pair{name: name, api: api, node: node}
}

// Releases are the releases of the pair's halves when one of them is of one release other than
// the newest (OfRelease), else the zero Releases: a case that names none runs as the newest.
func (p *Pair) Releases() Releases {
	r := Releases{APIServer: releaseOf(p.api), Kubelet: releaseOf(p.node)}
	if !r.Skewed() {
		return Releases{}
	}
	return r
}

// Info names the pair; a mixed pair lists both halves.
func (p *Pair) Info() TargetInfo {
	n := p.node.Info()
	a := p.api.Info()
	info := TargetInfo{Name: p.name, Version: n.Version, Details: map[string]string{}}
	for k, v := range n.Details {
		info.Details[k] = v
	}
	if a.Name != n.Name {
		info.Details["apiserver"] = strings.TrimSpace(a.Name + " " + a.Version)
		info.Details["kubelet"] = strings.TrimSpace(n.Name + " " + n.Version)
	}
	return info
}

// Supports asks the apiserver, then, for a case that reaches a node, whether this machine has
// what the kubelet needs (HostNeeds) and the kubelet itself.
func (p *Pair) Supports(c *Case) (bool, string) { return p.supports(context.Background(), c) }

// supports is Supports admitting within ctx (a Prepare's).
func (p *Pair) supports(ctx context.Context, c *Case) (bool, string) {
	if why := releaseGap(p.api, true, c, p.api.Info()); why != "" {
		return false, why
	}
	if ok, why := p.api.SupportsAdmission(c); !ok {
		return false, why
	}
	cc, a, err := p.admit(ctx, c, false)
	if err != nil || !a.ReachesNode(cc) {
		// An apiserver that could not admit is the target failing, not a case it cannot
		// run: Observe reports the error (the case fails).
		return true, ""
	}
	if why := releaseGap(p.node, false, c, p.node.Info()); why != "" {
		return false, why
	}
	if m := hostfeature.First(p.nodeHostNeeds(cc, a)); m != nil {
		return false, m.Error()
	}
	return p.node.SupportsNode(cc, a)
}

// CheckClaims asks each half that can tell (ClaimChecker) whether it can have the claims.
func (p *Pair) CheckClaims(claims []string) error {
	for _, h := range []any{p.api, p.node} {
		if cc, ok := h.(ClaimChecker); ok {
			if err := cc.CheckClaims(claims); err != nil {
				return err
			}
		}
	}
	return nil
}

// APIServerHalf is the pair's apiserver (the mutation self-test asks it alone: mutation.Run).
func (p *Pair) APIServerHalf() APIServer { return p.api }

// NotApplicable says why c names a release one of the halves does not run, "" when both run
// c's releases (framework.NotApplicable).
func (p *Pair) NotApplicable(c *Case) string {
	if why := releaseGap(p.api, true, c, p.api.Info()); why != "" {
		return why
	}
	if why := releaseGap(p.node, false, c, p.node.Info()); why != "" {
		return why
	}
	// A kubeletRelease step makes the node a kubelet of another release: a case of a node that
	// has that release too (the reference, kind@matrix), not of one that is one release.
	for _, s := range c.After {
		r := s.KubeletRelease
		if r == "" || r == releaseOf(p.node) {
			continue
		}
		if rr, ok := p.node.(ReleaseRunner); ok && rr.RunsRelease(r) {
			continue
		}
		return fmt.Sprintf("a kubeletRelease step to %s: this target's kubelet (%s) is %s only", r, p.node.Info().Name, releaseOf(p.node))
	}
	return ""
}

// HostNeeds is what the kubelet half needs of this machine for c, when c reaches it.
func (p *Pair) HostNeeds(c *Case) []hostfeature.Feature {
	if ok, _ := p.api.SupportsAdmission(c); !ok {
		return nil
	}
	cc, a, err := p.admit(context.Background(), c, false)
	if err != nil || !a.ReachesNode(cc) {
		return nil
	}
	return p.nodeHostNeeds(cc, a)
}

func (p *Pair) nodeHostNeeds(c *Case, a Admitted) []hostfeature.Feature {
	if hn, ok := p.node.(NodeHostNeeds); ok {
		return hn.HostNeeds(c, a)
	}
	return nil
}

// Observe admits c, then has the kubelet set it up and observe it.
func (p *Pair) Observe(ctx context.Context, in *Case) (*Observation, error) {
	if why := releaseGap(p.api, true, in, p.api.Info()); why != "" {
		return nil, fmt.Errorf("case %q cannot run on this apiserver: %s", in.Name, why)
	}
	c, a, err := p.admit(ctx, in, true)
	if err != nil {
		return nil, err
	}
	obs := p.observation(c, a)
	if a.ReachesNode(c) {
		if m := hostfeature.First(p.nodeHostNeeds(c, a)); m != nil {
			return nil, fmt.Errorf("case %q cannot run on this kubelet here: %v", c.Name, m)
		}
		if ok, why := p.node.SupportsNode(c, a); !ok {
			return nil, fmt.Errorf("case %q cannot run on this kubelet here: %s", c.Name, why)
		}
		if why := releaseGap(p.node, false, c, p.node.Info()); why != "" {
			return nil, fmt.Errorf("case %q cannot run on this kubelet: %s", c.Name, why)
		}
		r := p.node.ObserveNode(ctx, c, a)
		if r.Err != nil {
			return nil, r.Err
		}
		r.fill(obs)
	}
	obs.Normalize()
	return obs, nil
}

// observation is c's Observation after admission a, before the node: the whole answer for a
// case that never reaches a node.
func (p *Pair) observation(c *Case, a Admitted) *Observation {
	return &Observation{APIVersion: ObservationVersion, Case: c.Name, Source: p.name, Admission: a.Admission}
}

// Close closes the kubelet half, and the apiserver half when it holds something (an agent).
func (p *Pair) Close() error {
	err := p.node.Close()
	if c, ok := p.api.(interface{ Close() error }); ok {
		err = errors.Join(err, c.Close())
	}
	return err
}

// KnownDifference asks both halves.
func (p *Pair) KnownDifference(c *Case) (KnownDifference, bool) {
	for _, h := range []any{p.node, p.api} {
		if kd, ok := h.(KnownDifferences); ok {
			if k, known := kd.KnownDifference(c); known {
				return k, true
			}
		}
	}
	return KnownDifference{}, false
}
