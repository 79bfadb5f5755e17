// Command volperm-upstream-agent is the real Kubernetes code behind volperm's exec protocol
// (docs/exec-protocol.md, protocol v2): the kube-apiserver's defaulting, field dropping and
// validation answer `admit`; the kubelet's real volume plugins (emptyDir, hostPath, secret,
// configMap, downwardAPI, projected, flexVolume) with the real mounter and host utils answer
// `setup` and `teardown` in the directories the harness gives. volperm builds it per
// Kubernetes release from this module (framework/targets/upstream, docs/releases.md) and
// drives it served: `volperm-upstream-agent serve`. Kubernetes' feature gate is process-global:
// calls are answered one at a time, each with the gates of its request in force.
package main

import (
	"fmt"
	"os"

	"github.com/volperm/volperm/framework/execproto"
)

// name is how the agent names itself in its errors.
const name = "volperm-upstream-agent"

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintf(os.Stderr, "%s: want one operation: serve, admit, setup or teardown with the request on stdin (docs/exec-protocol.md); got %q\n", name, os.Args[1:])
		os.Exit(2)
	}
	os.Exit(execproto.Main(handler{}, name, os.Args[1], os.Stdin, os.Stdout, os.Stderr))
}

// handler is the upstream code as an execproto.Handler.
type handler struct{}

func (handler) Admit(req *execproto.AdmitRequest, version string) (*execproto.AdmitResponse, error) {
	return admit(req, version)
}

// Lenient: the agent of an older release decodes requests with its release's API types, which
// may lack fields the harness's have (execproto.LenientHandler).
func (handler) Lenient() bool { return true }

func (handler) Answer(op string, req *execproto.Request, version string) (any, error) {
	return answer(op, req, version)
}

// Features lists what the agent of this release implements of the protocol's optional parts
// (userns_136.go, userns_pre136.go).
func (handler) Features() []string { return agentFeatures }
