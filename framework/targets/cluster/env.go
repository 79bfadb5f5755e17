package cluster

import "github.com/volperm/volperm/framework"

func init() {
	framework.RegisterEnv(
		framework.EnvVar{Name: EnvPodStartTimeout, Owner: Name + ", kind", Meaning: "how long a probe, fixture or driver pod may take to start, a Go duration (default " + defaultPodStart.String() + "); its cases then fail naming the pod's and its node's state"},
		framework.EnvVar{Name: EnvAPIServerTimeout, Owner: Name + ", kind", Meaning: "how long the apiserver may not answer before the cases waiting for it fail, a Go duration (default " + defaultAPIServer.String() + "); calls are retried with backoff until then"},
	)
}
