// Command volperm-probe is the probe program of the container and cluster targets' image
// (/volperm-probe in volperm/probe:<hash>), built static (CGO_ENABLED=0): incontainer.Main,
// nothing else, so that the image stays small.
package main

import (
	"os"

	"github.com/volperm/volperm/framework/probe/incontainer"
)

func main() {
	os.Exit(incontainer.Main(os.Args, os.Stdin, os.Stdout))
}
