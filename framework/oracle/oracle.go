// Package oracle is the spec in code: a pure function from a Case to the Observation a
// conforming implementation must produce (docs/spec.md). It makes no syscalls and models the
// node's filesystem in memory; it is written independently of nodeimpl so that comparing the
// two means something.
package oracle

import (
	"github.com/volperm/volperm/framework"
)

// Source is Observation.Source for what the oracle expects.
const Source = "oracle"

// Expect returns the Observation the spec demands for c. c is not modified: Expect completes
// a copy of it (framework.Case.Complete is idempotent, so a completed c is fine too).
func Expect(in *framework.Case) *framework.Observation {
	c := in.DeepCopy()
	c.Complete()
	obs := &framework.Observation{APIVersion: framework.ObservationVersion, Case: c.Name, Source: Source}

	// docs/spec.md "The order of events" 1: admission.
	adm := admit(c)
	obs.Admission = adm.result

	// docs/spec.md "The order of events" 2: rejected, admission-only or no pod: stop.
	if !adm.result.Allowed || c.AdmissionOnly || c.Pod == nil || c.PersistentVolume != nil {
		obs.Normalize()
		return obs
	}

	// docs/spec.md "The order of events" 3-7: host fixtures, SetUp, steps, snapshot, probes.
	k := newKubelet(c, adm)
	k.setUpAll()
	for _, s := range c.After {
		k.step(s)
	}
	obs.Volumes = k.snapshot()
	obs.Probes = k.runProbes(c.Probes)
	obs.Normalize()
	return obs
}
