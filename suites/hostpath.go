package suites

import "github.com/volperm/volperm/framework"

// hostPath holds the cases of seed 001: every hostPath `type` against every kind of object on
// the host, the *OrCreate creations, and the upstream failure texts.
var hostPath = area{
	name:        framework.AreaHostPath,
	description: "hostPath `type` checks (seed 001): every type against every host object, *OrCreate, failure texts, no ownership change",
}
