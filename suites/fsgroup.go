package suites

import "github.com/volperm/volperm/framework"

// fsGroup holds the cases of the kubelet blog post (seed 003): the ownership walk's OR-masks,
// symlinks never followed, fsGroupChangePolicy, and the walk re-run by a kubelet restart.
var fsGroup = area{
	name:        framework.AreaFSGroup,
	description: "fsGroup ownership walk (seed 003, volume_linux.go): OR-masks, setgid dirs, symlinks untouched, OnRootMismatch, re-run on kubelet restart",
}
