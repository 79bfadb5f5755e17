package cluster

import (
	"context"
	"fmt"
	"path"
)

// runSharedHostPath runs a pod of hostPath cases (hostPathGroup) to the end: when it runs, as
// runPod does; when it does not (a volume failed its set-up), the cases with a failed volume
// get their answer from the FailedMount texts, as a pod of their own would have given it, and
// the others are run again in a new pod, under new host roots with their fixtures made afresh
// (the failed pod's kubelet may have made a *OrCreate path already), until a pod runs or holds
// one case. The kubelet sets up every volume of a pod in one pass and such a pod holds at most
// ten volumes (hostPathPodVolumes), so one split is the rule.
func (t *Target) runSharedHostPath(ctx context.Context, p *probePod, fixturePod string) {
	base := p.name
	for round := 1; ; round++ {
		err := t.startPod(ctx, p)
		if err != nil || p.running || len(p.runs) == 1 {
			if err == nil {
				err = t.finishPod(ctx, p)
			}
			p.fail(t.explain(ctx, p, err))
			t.deletePod(p)
			return
		}
		failed, rest := p.splitFailed()
		t.deletePod(p)
		if len(rest) == 0 {
			t.fill(p, nil)
			return
		}
		if len(failed) == 0 {
			p.fail(fmt.Errorf("probe pod %s did not run, and none of its volumes reported a FailedMount", p.name))
			return
		}
		t.fill(&probePod{runs: failed, setUp: p.setUp}, nil)
		next, err := t.again(ctx, p, rest, base, round, fixturePod)
		if err != nil {
			(&probePod{runs: rest}).fail(err)
			return
		}
		if next == nil {
			return
		}
		p = next
	}
}

// splitFailed parts p's cases into those with a volume that failed its set-up and the others.
func (p *probePod) splitFailed() (failed, rest []*caseRun) {
	for _, r := range p.runs {
		hit := false
		for _, v := range r.vols {
			if _, ok := p.setUp[v.unique]; ok {
				hit = true
			}
		}
		if hit {
			failed = append(failed, r)
		} else {
			rest = append(rest, r)
		}
	}
	return failed, rest
}

// again puts runs into a new pod named after the first's (base-rROUND), each case under a new host
// root (HostRoot/NAMESPACE/CASE-ROUND) whose fixtures the fixture pod makes again; a case whose
// fixtures fail keeps that error and stays out. nil when no case is left.
func (t *Target) again(ctx context.Context, p *probePod, runs []*caseRun, base string, round int, fixturePod string) (*probePod, error) {
	ns := p.pod.Namespace
	for _, r := range runs {
		r.vols, r.probes = nil, nil
		r.host = path.Join(HostRoot, ns, fmt.Sprintf("%d-%d", r.id, round))
	}
	t.makeFixtures(ctx, ns, fixturePod, runs)
	next := &probePod{name: fmt.Sprintf("%s-r%d", base, round), setUp: map[string]string{}, hostPath: true}
	for _, r := range runs {
		if r.err != nil {
			continue
		}
		if next.pod == nil {
			next.pod = t.probePodSpec(next.name, ns, r.pod.Spec.SecurityContext)
			shapeFsUser(next.pod, r.pod)
		}
		if err := next.add(r, ns); err != nil {
			return nil, err
		}
	}
	if len(next.runs) == 0 {
		return nil, nil
	}
	t.count(1)
	t.logf("probe pod %s did not run: %d of its cases had a failed volume, %d run again in %s", p.name, len(p.runs)-len(runs), len(next.runs), next.name)
	return next, nil
}
