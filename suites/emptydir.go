package suites

import "github.com/volperm/volperm/framework"

// emptyDir holds the cases of KEP-5502 (seed 000): the `mode` field's validation and dropping,
// the mode at the mount root on every medium, fsGroup after the mode, and what other uids can do.
var emptyDir = area{
	name:        framework.AreaEmptyDir,
	description: "emptyDir `mode` (KEP-5502, seed 000): validation, field dropping, the mode on every medium, fsGroup after the mode, behaviour as other uids",
}
