package framework

import (
	"context"
	"sync"
	"time"

	"github.com/volperm/volperm/hostfeature"
)

// Batching is an optional capability of a pair's kubelet half: a node that observes many cases
// faster than one after another. The pair then is a Batcher: the suites Prepare an area's cases
// before its specs, the pair admits each case once and hands the node those that reach it, and
// Observe hands out what was prepared (one Prepared cache) or observes a case not prepared.

// ConcurrentNode is implemented by a kubelet half whose ObserveNode may run for several cases at
// once (each case under its own root, nothing shared): Prepare observes an area's cases in
// parallel, Concurrency at a time.
type ConcurrentNode interface {
	Node
	Concurrency() int
}

// BatchNode is implemented by a kubelet half that observes many admitted cases together (the
// container target: one container per user set for all of them): Prepare hands it every
// prepared case that reaches it in one ObserveBatch.
type BatchNode interface {
	Node
	// Batching says whether this node batches (it may be built to run case by case).
	Batching() bool
	// ObserveBatch observes each case as ObserveNode would; the results are in the order of
	// cases, and an error of the whole batch is every case's Err.
	ObserveBatch(ctx context.Context, cases []NodeCase) []NodeResult
}

// NodeCase is one admitted case on its way to a BatchNode.
type NodeCase struct {
	Case     *Case
	Admitted Admitted
}

// NodeResult is a node's answer for one case (ObserveNode, and each case of ObserveBatch): the
// Observation's node fields, or the target failing for the case.
type NodeResult struct {
	Volumes       []VolumeObservation
	Probes        []ProbeResult
	UserNamespace *UserNamespace
	SandboxError  string
	// ContainerError is Observation.ContainerError.
	ContainerError string
	// Rejected and ContainerUser are Observation's.
	Rejected      string
	ContainerUser *ContainerUser
	// Err is the target failing for this case.
	Err error
}

// NodeResultOf is the node fields of obs as a NodeResult, or err when the case failed: the
// answer of a target whose node writes an Observation (container, cluster); fill is its inverse.
func NodeResultOf(obs *Observation, err error) NodeResult {
	if err != nil || obs == nil {
		return NodeResult{Err: err}
	}
	return NodeResult{Volumes: obs.Volumes, Probes: obs.Probes, UserNamespace: obs.UserNamespace, SandboxError: obs.SandboxError, ContainerError: obs.ContainerError,
		Rejected: obs.Rejected, ContainerUser: obs.ContainerUser}
}

// fill gives obs r's node fields.
func (r NodeResult) fill(obs *Observation) {
	obs.Volumes, obs.Probes, obs.UserNamespace, obs.SandboxError, obs.ContainerError = r.Volumes, r.Probes, r.UserNamespace, r.SandboxError, r.ContainerError
	obs.Rejected, obs.ContainerUser = r.Rejected, r.ContainerUser
}

// batchPair is a Pair whose node batches (BatchNode) or runs cases concurrently
// (ConcurrentNode). What a case observes does not depend on which way it ran
// (TestConcurrentPairSameObservations, the container target's TestBatchedVsPerCase).
type batchPair struct {
	*Pair
	workers  int
	batch    BatchNode
	prepared Prepared
}

// ObserveTimer is implemented by a target that observes cases before their specs run
// (framework.Batcher): how long the observation of c took (set-up, steps, snapshot, probes,
// teardown), since the spec's own run time does not include it. The reports name it for the
// cases labelled "timed" (framework/report LabelTimed).
type ObserveTimer interface {
	ObserveTime(c *Case) (time.Duration, bool)
}

// NewTargetPair names a target made of api and node, as NewPair does, a Batcher when node
// batches (BatchNode) or runs cases concurrently (ConcurrentNode).
func NewTargetPair(name string, api APIServer, node Node) Target {
	p := NewPair(name, api, node)
	if bn, ok := node.(BatchNode); ok && bn.Batching() {
		return &batchPair{Pair: p, batch: bn}
	}
	if cn, ok := node.(ConcurrentNode); ok && cn.Concurrency() > 1 {
		return &batchPair{Pair: p, workers: cn.Concurrency()}
	}
	return p
}

// Prepare observes the cases this machine and the target can run (Batcher), in one batch or
// workers at a time; it replaces what an earlier Prepare kept.
func (b *batchPair) Prepare(ctx context.Context, cases []*Case) error {
	b.prepared.Reset()
	if b.batch != nil {
		return b.prepareBatch(ctx, cases)
	}
	jobs := make(chan *Case)
	var wg sync.WaitGroup
	for range b.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range jobs {
				needs := b.Pair.HostNeeds(c)
				start := time.Now()
				obs, err := b.Pair.Observe(ctx, c)
				b.prepared.Keep(c, Kept{Observation: obs, Err: err, Took: time.Since(start), Timed: true, Needs: needs})
			}
		}()
	}
	for _, c := range cases {
		if ctx.Err() != nil {
			break
		}
		// Supports also says no when this machine lacks a feature the node needs.
		if ok, _ := b.Pair.supports(ctx, c); !ok {
			continue
		}
		jobs <- c
	}
	close(jobs)
	wg.Wait()
	return ctx.Err()
}

// admitWorkers is how many cases prepareBatch admits at once: an apiserver half is safe for
// concurrent use (APIServer), and a real apiserver's answer takes a round trip, not CPU of this
// process (issue 34: the kind catalogue's 2117 emptyDir cases took 47 s admitted one by one).
const admitWorkers = 8

// batchAdmission is one case's way through prepareBatch's admission: supported or not, the
// completed copy admitted, the answer, and the host's needs.
type batchAdmission struct {
	supported bool
	c         *Case
	a         Admitted
	err       error
	needs     []hostfeature.Feature
}

// prepareBatch admits each supported case once (admitWorkers at a time), keeps the answer of
// those that stop at the apiserver and observes the others in one ObserveBatch, in the order of
// cases.
func (b *batchPair) prepareBatch(ctx context.Context, cases []*Case) error {
	admitted := make([]batchAdmission, len(cases))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(admitWorkers, len(cases)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				in, r := cases[i], &admitted[i]
				if ok, _ := b.Pair.supports(ctx, in); !ok {
					continue
				}
				r.supported = true
				r.needs = b.Pair.HostNeeds(in)
				r.c, r.a, r.err = b.Pair.admit(ctx, in, true)
			}
		}()
	}
	for i := range cases {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var (
		todo []NodeCase
		ins  []*Case
		kept []Kept
	)
	for i, in := range cases {
		r := admitted[i]
		switch {
		case !r.supported:
		case r.err != nil:
			b.prepared.Keep(in, Kept{Err: r.err})
		case !r.a.ReachesNode(r.c):
			obs := b.Pair.observation(r.c, r.a)
			obs.Normalize()
			b.prepared.Keep(in, Kept{Observation: obs})
		default:
			todo = append(todo, NodeCase{Case: r.c, Admitted: r.a})
			ins = append(ins, in)
			kept = append(kept, Kept{Needs: r.needs})
		}
	}
	if len(todo) == 0 || ctx.Err() != nil {
		return ctx.Err()
	}
	for i, r := range b.batch.ObserveBatch(ctx, todo) {
		k := kept[i]
		if k.Err = r.Err; r.Err == nil {
			k.Observation = b.Pair.observation(todo[i].Case, todo[i].Admitted)
			r.fill(k.Observation)
			k.Observation.Normalize()
		}
		b.prepared.Keep(ins[i], k)
	}
	return ctx.Err()
}

// HostNeeds of a prepared case are those it had in Prepare: it is not admitted again.
func (b *batchPair) HostNeeds(c *Case) []hostfeature.Feature {
	if k, ok := b.prepared.Peek(c); ok {
		return k.Needs
	}
	return b.Pair.HostNeeds(c)
}

// Supports says yes to a prepared case (Prepare keeps only those it supported).
func (b *batchPair) Supports(c *Case) (bool, string) {
	if _, ok := b.prepared.Peek(c); ok {
		return true, ""
	}
	return b.Pair.Supports(c)
}

// Observe returns what Prepare observed for c, once, or observes c now.
func (b *batchPair) Observe(ctx context.Context, c *Case) (*Observation, error) {
	if k, ok := b.prepared.Take(c); ok {
		return k.Observation, k.Err
	}
	start := time.Now()
	obs, err := b.Pair.Observe(ctx, c)
	b.prepared.Timed(c, time.Since(start))
	return obs, err
}

// ObserveTime is how long the observation Observe last returned for c took (ObserveTimer).
func (b *batchPair) ObserveTime(c *Case) (time.Duration, bool) { return b.prepared.ObserveTime(c) }

var (
	_ Batcher      = (*batchPair)(nil)
	_ ObserveTimer = (*batchPair)(nil)
	_ HostNeeds    = (*batchPair)(nil)
)
