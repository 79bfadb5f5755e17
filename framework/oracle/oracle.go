// Package oracle is the spec in code: a pure function from a Case to the Observation a
// conforming implementation must produce (docs/spec.md). It makes no syscalls and models the
// node's filesystem in memory; it is written independently of nodeimpl so that comparing the
// two means something.
package oracle

import (
	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/rule"
)

// Source is Observation.Source for what the oracle expects.
const Source = "oracle"

// Expect returns the Observation the spec demands for c. c is not modified: Expect completes
// a copy of it (framework.Case.Complete is idempotent, so a completed c is fine too).
func Expect(in *framework.Case) *framework.Observation {
	return expect(in, nil)
}

// Explain returns what Expect returns and every rule of docs/spec.md the oracle applied to reach
// it, each with the conditions it was applied under (framework/rule, docs/coverage.md): the
// rules the case checks.
func Explain(in *framework.Case) (*framework.Observation, []rule.Hit) {
	t := &tracer{}
	obs := expect(in, t)
	return obs, t.hits
}

// AssumesProtectedSymlinks reports whether c's expected Observation depends on the host's
// fs.protected_symlinks being 1 ([probes.protected-symlinks]): a probe is refused at a symlink
// it may not follow. A target whose probes run on a kernel without it answers otherwise.
func AssumesProtectedSymlinks(c *framework.Case) bool {
	_, hits := Explain(c)
	for _, h := range hits {
		if h.Rule == rule.ProbeProtectedLinks {
			return true
		}
	}
	return false
}

// expect is Expect, recording into t when t is not nil.
func expect(in *framework.Case, t *tracer) *framework.Observation {
	c := in.DeepCopy()
	c.Complete()
	obs := &framework.Observation{APIVersion: framework.ObservationVersion, Case: c.Name, Source: Source}

	// docs/spec.md "The order of events" 1: admission.
	adm := admit(c, t)
	obs.Admission = adm.result

	// docs/spec.md "The order of events" 2: rejected, admission-only or no pod: stop.
	if !adm.result.Allowed || c.AdmissionOnly || c.Pod == nil || c.PersistentVolume != nil {
		obs.Normalize()
		return obs
	}

	// docs/spec.md [groups.admit]: the kubelet's admission, before any volume.
	// The predicate admit handler first, the declared-features one last (kubelet.go).
	obs.Rejected = kubeletRejection(c, adm.pod, t)
	if obs.Rejected == "" {
		obs.Rejected = bindMountRejection(c, adm.pod, t)
	}
	if obs.Rejected != "" {
		obs.Normalize()
		return obs
	}

	// docs/spec.md "The order of events" 3-7: host fixtures, SetUp, steps, snapshot, probes.
	k := newKubelet(c, adm, t)
	k.setUpAll()
	for _, s := range c.After {
		k.step(s)
	}
	obs.Volumes = k.snapshot()
	// docs/spec.md [mounts.recursive-read-only]: the container status's view of each readOnly
	// mount, and the container the kubelet refuses to create.
	rro := !c.Lacks(framework.RuntimeRecursiveReadOnlyMounts)
	for i := range obs.Volumes {
		obs.Volumes[i].RecursiveReadOnly = framework.RecursiveReadOnlyStatus(k.pod, obs.Volumes[i].Name, rro)
	}
	k.rro = rro
	k.traceRRO()
	if c.SandboxFails() {
		// docs/spec.md [userns.runtime]: the volumes are set up, then the sandbox fails.
		obs.SandboxError = k.sandboxError()
		obs.Normalize()
		return obs
	}
	obs.UserNamespace = k.userNamespace(c)
	if e := framework.ContainerConfigError(k.pod, rro); e != "" {
		obs.ContainerError = e
		obs.Normalize()
		return obs
	}
	probes := c.Probes
	if framework.HasContainerProbes(c) {
		// docs/spec.md [groups.policy]: probes as the container itself.
		var u framework.User
		u, obs.ContainerUser = containerUser(c, k.pod, t)
		probes = framework.WithContainerUser(probes, u)
	}
	obs.Probes = k.runProbes(probes)
	if k.userns {
		k.made(probes, obs.Probes)
	}
	obs.Normalize()
	return obs
}

// Coverage explains every case and folds the rules applied into the coverage of every rule of
// docs/spec.md (framework/rule): which cases check each rule, under which conditions, and
// which needed conditions no case reaches.
func Coverage(cases []*framework.Case) (*rule.Coverage, error) {
	names := make([]string, len(cases))
	hits := make(map[string][]rule.Hit, len(cases))
	for i, c := range cases {
		names[i] = c.Name
		_, hits[c.Name] = Explain(c)
	}
	return rule.Cover(names, hits)
}
