package kind

import "github.com/volperm/volperm/framework"

// The target's flags (volperm run, observe, diff); it also reads cluster.FlagProbeImage.
const (
	FlagNodeImage = "node-image"
	FlagKeep      = "keep"
)

func init() {
	framework.RegisterTargetFlag(framework.TargetFlag{Name: FlagNodeImage, Owner: Name, Usage: "kind node image (built offline and cached when empty: volperm cluster image)"})
	framework.RegisterTargetFlag(framework.TargetFlag{Name: FlagKeep, Owner: Name, Bool: true, Usage: "keep the clusters the kind target created"})
	framework.RegisterEnv(framework.EnvVar{Name: "XDG_CACHE_HOME", Owner: Name, Meaning: "where the node image's built components are cached: $XDG_CACHE_HOME/volperm/kindnode (default ~/.cache)"})
}
