package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/volperm/volperm/framework/targets/exec/agent"
)

// agentName is the name under which this binary is the reference exec agent
// (docs/exec-protocol.md): `make build` links bin/volperm-agent to bin/volperm.
const agentName = "volperm-agent"

// agentArgs returns the agent's arguments when this process is the reference agent: invoked as
// volperm-agent, or as `volperm agent`.
func agentArgs(argv []string) ([]string, bool) {
	if filepath.Base(argv[0]) == agentName {
		return argv[1:], true
	}
	if len(argv) > 1 && argv[1] == "agent" {
		return argv[2:], true
	}
	return nil, false
}

// runAgent answers one protocol call (`volperm agent setup|teardown`, request on stdin) or serves
// (`volperm agent serve`).
func runAgent(args []string) int {
	if len(args) != 1 {
		fmt.Fprintf(os.Stderr, "volperm agent: want one operation: setup or teardown with the request on stdin, or serve (docs/exec-protocol.md); got %q\n", args)
		return exitUsage
	}
	return agent.Main(args[0], os.Stdin, os.Stdout, os.Stderr)
}
