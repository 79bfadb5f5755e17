package suites

import "github.com/volperm/volperm/framework"

// atomicWriter holds the secret, configMap, downwardAPI and projected cases: the AtomicWriter
// layout, defaultMode and item modes, and the preservePermissions proposal (seed 002).
var atomicWriter = area{
	name:        framework.AreaAtomicWriter,
	description: "secret/configMap/downwardAPI/projected (atomic_writer.go): layout, defaultMode and item modes, fsGroup read-only mask, preservePermissions (seed 002)",
}
