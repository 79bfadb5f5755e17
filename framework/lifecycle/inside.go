package lifecycle

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/probe"
	"github.com/volperm/volperm/framework/probe/incontainer"
)

// Inside is where a pod's volumes are seen as its containers see them: the one seam between
// what a target observes (an incontainer.Request: volumes to snapshot, then probes to run) and
// how the harness gets there (issue 35). Three targets give one each: this machine (Here, in
// this process: the reference, exec and upstream targets, through Observe), a container on
// this machine (framework/targets/container: docker exec of the probe binary) and a pod of a
// cluster (framework/cluster: an exec of the probe binary in the pod's container). A target of
// a node elsewhere gives an Inside that runs the probe binary there (ProbeCommand) and reuses
// the rest (docs/architecture.md "Add a target", remote).
type Inside interface {
	// Request snapshots req's volumes and runs its probes where the pod's containers are; the
	// answer has one VolumeObservation (name and paths) per volume and one result per probe, in
	// req's order.
	Request(ctx context.Context, req incontainer.Request) (*framework.Observation, error)
}

// Here is this machine, in this process: a Request's paths are this machine's, and probes run
// each as its user in a child process (probe.Run).
type Here struct{}

var _ Inside = Here{}

// Request runs req here (incontainer.Run).
func (Here) Request(ctx context.Context, req incontainer.Request) (*framework.Observation, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return incontainer.Run(ctx, req)
}

// Sender runs the probe binary somewhere with a Request as its input (`volperm-probe -request
// JSON`, or `-request -` with the JSON on stdin) and returns what it printed: all an Inside
// that execs the probe binary (docker exec, pod exec, ssh) has to give (ExecInside).
type Sender func(ctx context.Context, request []byte) ([]byte, error)

// ExecInside is the Inside of a probe binary that send runs: it encodes a Request, and decodes
// and checks the answer (incontainer.DecodeAnswer); where names the place in errors.
func ExecInside(where string, send Sender) Inside { return execInside{where, send} }

type execInside struct {
	where string
	send  Sender
}

func (e execInside) Request(ctx context.Context, req incontainer.Request) (*framework.Observation, error) {
	in, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	out, err := e.send(ctx, in)
	if err != nil {
		return nil, err
	}
	obs, err := incontainer.DecodeAnswer(out, req)
	if err != nil {
		return nil, fmt.Errorf("probe answer of %s: %w: %q", e.where, err, out)
	}
	return obs, nil
}

// RequestAll runs req through in as requests of at most max bytes of JSON each (a request that
// travels as one argument is bounded: Linux MAX_ARG_STRLEN is 128 KiB), its volumes first,
// then its probes, each in order; the answer is theirs, concatenated. A volume or probe larger
// than max travels alone.
func RequestAll(ctx context.Context, in Inside, req incontainer.Request, max int) (*framework.Observation, error) {
	out := &framework.Observation{APIVersion: framework.ObservationVersion}
	if len(req.Volumes) == 0 && req.UserNamespace {
		ans, err := in.Request(ctx, incontainer.Request{UserNamespace: true})
		if err != nil {
			return nil, err
		}
		out.UserNamespace = ans.UserNamespace
	}
	for _, vols := range parts(req.Volumes, max) {
		ans, err := in.Request(ctx, incontainer.Request{Volumes: vols, UserNamespace: req.UserNamespace})
		if err != nil {
			return nil, err
		}
		if len(ans.Volumes) != len(vols) {
			return nil, fmt.Errorf("the probe answered %d volumes for %d", len(ans.Volumes), len(vols))
		}
		out.Volumes = append(out.Volumes, ans.Volumes...)
		if ans.UserNamespace != nil {
			out.UserNamespace = ans.UserNamespace
		}
	}
	for _, steps := range parts(req.Probes, max) {
		ans, err := in.Request(ctx, incontainer.Request{Probes: steps, EachAsItsUser: req.EachAsItsUser})
		if err != nil {
			return nil, err
		}
		if len(ans.Probes) != len(steps) {
			return nil, fmt.Errorf("the probe answered %d probes for %d", len(ans.Probes), len(steps))
		}
		out.Probes = append(out.Probes, ans.Probes...)
	}
	return out, nil
}

// parts splits items, in order, into runs of at most max bytes of JSON; an item larger than max
// is a run of its own.
func parts[T any](items []T, max int) [][]T {
	size := func(v T) int {
		b, _ := json.Marshal(v)
		return len(b) + 1
	}
	var out [][]T
	for len(items) > 0 {
		n, total := 0, 0
		for ; n < len(items) && (n == 0 || total+size(items[n]) <= max); n++ {
			total += size(items[n])
		}
		out = append(out, items[:n])
		items = items[n:]
	}
	return out
}

// ProbeSteps are probes as steps of a Request, each at its volume's root in roots; a probe of
// a volume not in roots is an error (it was not set up).
func ProbeSteps(probes []framework.Probe, roots map[string]string) ([]probe.Step, error) {
	steps := make([]probe.Step, 0, len(probes))
	for _, p := range probes {
		root, ok := roots[p.Volume]
		if !ok {
			return nil, fmt.Errorf("probe %q: volume %q was not set up", p.Name, p.Volume)
		}
		steps = append(steps, probe.Step{Root: root, Probe: p})
	}
	return steps, nil
}
