package kind

import "github.com/volperm/volperm/framework"

func init() {
	framework.RegisterEnv(framework.EnvVar{Name: "XDG_CACHE_HOME", Owner: Name, Meaning: "where the node image's built components are cached: $XDG_CACHE_HOME/volperm/kindnode (default ~/.cache)"})
}
