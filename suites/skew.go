package suites

import "github.com/volperm/volperm/framework"

// skew holds the feature-gate version-skew matrix, run in-process on one target: apiserver gate
// x kubelet gate x pod created before or after a gate flip, and upgrade/downgrade sequences
// (KEP-5502 "Version Skew Strategy"; the catalogue generates the matrix).
var skew = area{
	name:        framework.AreaSkew,
	description: "feature-gate skew: apiserver gate x kubelet gate x pod created before/after a flip, upgrade -> downgrade -> upgrade (KEP-5502 version skew)",
}
