package container

import (
	"os"
	"sync"

	"github.com/volperm/volperm/framework"
)

// envNoReaper is testcontainers-go's switch for its reaper (Ryuk), read once by the library.
const envNoReaper = "TESTCONTAINERS_RYUK_DISABLED"

func init() {
	framework.RegisterEnv(
		framework.EnvVar{Name: "DOCKER_HOST", Owner: Name + ", kind", Meaning: "the Docker engine to use (default unix:///var/run/docker.sock; hack/docker-up.sh starts one)"},
		framework.EnvVar{Name: envNoReaper, Owner: Name, Meaning: "set to true by the target before it first reaches the engine: testcontainers-go's reaper would pull its image from a registry, and the target removes its containers itself, by run label"},
	)
}

var noReaper sync.Once

// disableReaper turns testcontainers-go's reaper off before the library reads its
// configuration (once per process, from the environment: the library has no other switch).
func disableReaper() {
	noReaper.Do(func() { _ = os.Setenv(envNoReaper, "true") })
}
