package container

import "github.com/volperm/volperm/framework"

func init() {
	framework.RegisterEnv(framework.EnvVar{Name: "DOCKER_HOST", Owner: Name + ", kind", Meaning: "the Docker engine to use (default unix:///var/run/docker.sock; hack/docker-up.sh starts one)"})
}
