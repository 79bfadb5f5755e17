// Command probebin is the static probe binary of the container target's image
// (/volperm-probe in volperm/probe:<hash>): incontainer.ProbeMain, nothing else, so that the
// image stays small. The container target builds it with CGO_ENABLED=0 at run time.
package main

import (
	"os"

	"github.com/volperm/volperm/framework/targets/container/incontainer"
)

func main() {
	os.Exit(incontainer.ProbeMain(os.Args[1:], os.Stdin, os.Stdout))
}
