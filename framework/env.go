package framework

import (
	"slices"
	"strings"
	"sync"

	probeimage "github.com/volperm/volperm/framework/probe/image"
	"github.com/volperm/volperm/hostfeature"
	"github.com/volperm/volperm/nodeimpl/mountinfo"
)

// EnvVar is one environment variable volperm reads, documented where its reader registers it,
// so that `volperm run -h` lists every one with its meaning (TestEveryEnvVarIsRegistered in
// cmd/volperm keeps the list whole).
type EnvVar struct {
	// Name is the variable.
	Name string
	// Owner is who reads it: a target's name, or "run" for the run itself.
	Owner string
	// Meaning says what it does, its values and its default.
	Meaning string
}

var (
	envMu   sync.Mutex
	envVars = map[string]EnvVar{}
)

// RegisterEnv documents environment variables; target packages call it from init, beside
// RegisterTarget. A name registered twice panics.
func RegisterEnv(vars ...EnvVar) {
	envMu.Lock()
	defer envMu.Unlock()
	for _, v := range vars {
		if _, dup := envVars[v.Name]; dup {
			panic("volperm: environment variable registered twice: " + v.Name)
		}
		envVars[v.Name] = v
	}
}

// EnvVars lists the registered environment variables by owner ("run" first), then name.
func EnvVars() []EnvVar {
	envMu.Lock()
	defer envMu.Unlock()
	out := make([]EnvVar, 0, len(envVars))
	for _, v := range envVars {
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b EnvVar) int {
		if (a.Owner == "run") != (b.Owner == "run") {
			if a.Owner == "run" {
				return -1
			}
			return 1
		}
		if c := strings.Compare(a.Owner, b.Owner); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

func init() {
	RegisterEnv(
		EnvVar{hostfeature.EnvRequire, "run", "what this run requires, comma-separated: feature names (hugepages-1Gi, container-engine, mount-setattr, ...), hugepages, cases (every selected case must run on the target) or all; a case that cannot run for a required reason fails instead of being not run (docs/host-features.md)"},
		EnvVar{hostfeature.EnvCI, "run", "true (as CI systems set it) requires cases, root and container-engine"},
		EnvVar{probeimage.EnvBinary, "container, cluster, kind", "a prebuilt static volperm-probe to put in the probe image instead of building cmd/volperm-probe (runs outside the source tree)"},
		EnvVar{mountinfo.EnvMountinfo, "run", "table makes every mount lookup of the reference node and the harness read the whole mount table, as before issue 52 (default: ask the kernel about a directory's own mounts where it answers, Linux 6.8; volperm bench --compare mounts-kernel-vs-table)"},
	)
}
