// Package exec is the target "exec:PATH": an out-of-tree node agent driven through the
// command-line protocol of docs/exec-protocol.md (framework/execagent drives it). The reference
// apiserver admits; the agent is the kubelet ("exec:PATH+exec:PATH" has it be the apiserver
// too, through the protocol's admit call).
package exec

import (
	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/execagent"
	"github.com/volperm/volperm/framework/refnode"
)

// Name is the name the target registers under.
const Name = execagent.Name

func init() {
	framework.RegisterTarget(Name, "an out-of-tree node agent behind volperm's exec protocol, with the reference apiserver: exec:/path/to/agent (docs/exec-protocol.md)", New)
	framework.RegisterHalves(Name,
		func(opts framework.TargetOptions) (framework.APIServer, error) { return execagent.NewAPIServer(opts) },
		func(opts framework.TargetOptions) (framework.Node, error) { return execagent.NewNode(opts) })
}

// New builds the target exec:PATH: the reference apiserver with the agent as the kubelet.
func New(opts framework.TargetOptions) (framework.Target, error) {
	node, err := execagent.NewNode(opts)
	if err != nil {
		return nil, err
	}
	return framework.NewPair(Name, refnode.APIServer{}, node), nil
}
