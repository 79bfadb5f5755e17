package execagent

import (
	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/sandbox"
)

// EnvTimeout bounds one agent call (a Go duration).
const EnvTimeout = "VOLPERM_AGENT_TIMEOUT"

func init() {
	framework.RegisterEnv(
		framework.EnvVar{Name: EnvTimeout, Owner: Name, Meaning: "how long one agent call may take, a Go duration (default " + DefaultTimeout.String() + "); the agent's process group is killed then"},
		framework.EnvVar{Name: EnvAgentMode, Owner: Name, Meaning: ModeAuto + " (default: serve when the agent answers hello, else a process per call), " + ModeServe + " or " + ModePerCall + " (docs/exec-protocol.md)"},
		framework.EnvVar{Name: EnvWritable, Owner: Name, Meaning: "':'-separated absolute paths outside its work dir that a sandboxed agent may write (docs/exec-protocol.md \"The sandbox\")"},
		framework.EnvVar{Name: sandbox.EnvOff, Owner: Name, Meaning: "off runs agents without the sandbox that makes every mount read-only but their work dir"},
	)
}
