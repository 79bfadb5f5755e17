package suites

import "github.com/volperm/volperm/framework"

// flexVolume holds the driver allowlist of seed 004 (pods and PersistentVolumes, policy
// validation) and the fixture driver's set-up with fsGroup.
var flexVolume = area{
	name:        framework.AreaFlexVolume,
	description: "flexVolume driver allowlist (seed 004) on pods and PersistentVolumes, policy validation, the fixture driver's set-up",
}
