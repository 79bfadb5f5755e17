package k8srelease

// BuildEnv and BuildFlags are how every build on this machine is compiled: volperm's own (make
// test, make build, the probe and runner images: framework/probe/image), the upstream agents,
// the kubelets of other releases, the kind node image's commands, the e2e module's test binary,
// hydrophone, and make test's vet and test of those modules (the Makefile and .ci/run export
// them as CGO_ENABLED and GOFLAGS). They are Kubernetes' own release build's (static:
// CGO_ENABLED=0; -trimpath: hack/lib/golang.sh), and they are one configuration because Go's
// build cache keys a compiled package by its flags: with one, each package (client-go, api, the
// standard library) is compiled once per machine and every stage that builds it reuses it
// (issue 34; the modules that build v1.37's code also select the same versions:
// TestKubernetesModulesAgree).
var (
	BuildEnv   = []string{"CGO_ENABLED=0"}
	BuildFlags = []string{"-trimpath"}
)

// BuildArgs is `go build` with BuildFlags, then args.
func BuildArgs(args ...string) []string {
	return append(append([]string{"build"}, BuildFlags...), args...)
}
