package cluster

import (
	"context"
	"strings"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/lifecycle"
	"github.com/volperm/volperm/framework/probe"
	"github.com/volperm/volperm/framework/probe/incontainer"
)

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
	if !p.userNamespace && !p.self {
		return t.request(ctx, p, req)
	}
	if !p.userNamespace {
		obs, err := t.request(ctx, p, incontainer.Request{Volumes: req.Volumes})
		if err != nil {
			return nil, err
		}
		obs.Probes, err = t.runProbes(ctx, p, req.Probes)
		return obs, err
	}
	// In a user namespace: the pod's view, then the disk's (userns.go), both before the probes
	// change anything, then the probes.
	obs, err := t.request(ctx, p, incontainer.Request{Volumes: req.Volumes, UserNamespace: true})
	if err != nil {
		return nil, err
	}
	t.checkRange(p, obs.UserNamespace)
	if err := t.diskView(ctx, p, obs); err != nil {
		return nil, err
	}
	probes, err := t.runProbes(ctx, p, req.Probes)
	if err != nil {
		return nil, err
	}
	if err := t.made(ctx, p, req.Probes, probes); err != nil {
		return nil, err
	}
	obs.Probes = probes
	return obs, nil
}

// runProbes runs steps in order in p: each run of consecutive probes of one kind as one
// request, those of explicit users in the root probe container (each as its user), those as the
// container itself in the self container (as its own process: docs/spec.md [groups.policy]).
func (t *Target) runProbes(ctx context.Context, p *probePod, steps []probe.Step) ([]framework.ProbeResult, error) {
	var out []framework.ProbeResult
	for i := 0; i < len(steps); {
		j := i
		for j < len(steps) && steps[j].Probe.As.Container == steps[i].Probe.As.Container {
			j++
		}
		req := incontainer.Request{Probes: steps[i:j], EachAsItsUser: !steps[i].Probe.As.Container}
		container := probeContainer
		if steps[i].Probe.As.Container {
			container = selfContainer
		}
		obs, err := t.requestIn(ctx, p, container, req)
		if err != nil {
			return nil, err
		}
		out = append(out, obs.Probes...)
		i = j
	}
	return out, nil
}

// request runs req in p's probe container and decodes its answer.
func (t *Target) request(ctx context.Context, p *probePod, req incontainer.Request) (*framework.Observation, error) {
	return t.requestIn(ctx, p, probeContainer, req)
}

// requestIn runs req in container of p (inside).
func (t *Target) requestIn(ctx context.Context, p *probePod, container string, req incontainer.Request) (*framework.Observation, error) {
	return t.inside(p, container).Request(ctx, req)
}

// inside is container of p as a lifecycle.Inside: the probe binary run by an exec in the pod,
// the Request on its stdin.
func (t *Target) inside(p *probePod, container string) lifecycle.Inside {
	return lifecycle.ExecInside(p.name, func(ctx context.Context, req []byte) ([]byte, error) {
		return t.execIn(ctx, p.pod.Namespace, p.name, container, []string{ProbeCommand, "-request", "-"}, req)
	})
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
		if p.rejected != "" {
			// docs/spec.md [groups.admit]: nothing set up, no container.
			r.obs.Rejected = p.rejected
			continue
		}
		if p.self {
			r.obs.ContainerUser = p.containerUser
		}
		for _, bv := range r.vols {
			src := r.pod.Spec.Volumes[bv.index]
			vo := framework.VolumeObservation{Name: src.Name, Type: framework.VolumeType(src), SetUp: framework.SetUpOK}
			if src.EmptyDir != nil {
				vo.Medium = string(src.EmptyDir.Medium)
			}
			if text, failed := p.setUp[bv.unique]; failed {
				vo.SetUp = r.originalNames(strings.ReplaceAll(text, r.host, ""))
			} else {
				vo.Paths = paths[bv.unique]
			}
			vo.RecursiveReadOnly = p.rro[bv.unique]
			r.obs.Volumes = append(r.obs.Volumes, vo)
		}
		if answer != nil {
			r.obs.UserNamespace = answer.UserNamespace
		}
		r.obs.SandboxError = p.sandbox
		r.obs.ContainerError = r.originalVolumes(p.containerError)
		// No container ran (the sandbox or the container refused): no probe answered.
		if answer != nil && p.sandbox == "" && p.containerError == "" {
			n := len(r.probes)
			for i, res := range results[:n] {
				res.Name = r.c.Probes[i].Name
				r.obs.Probes = append(r.obs.Probes, res)
			}
			results = results[n:]
		}
	}
}
