// Command mutantagent is the reference exec agent of the mutation self-test's exec pass
// (docs/mutants.md "Through the exec target"): framework/targets/exec/agent's Main, which
// `volperm agent` runs (cmd/volperm/agent.go), in a binary of its own. mutation/mutants_test.go
// builds it with -tags volperm_mutants and runs it through a wrapper script per mutant:
//
//	VOLPERM_MUTANT=name VOLPERM_MUTANT_SEAMS=file mutantagent setup|teardown|admit|serve
//
// VOLPERM_MUTANT names the mutant it runs (read by nodeimpl/mutant/seam_on.go's init);
// VOLPERM_MUTANT_SEAMS names the file it appends every seam it reaches to (package seamfile), so
// that the test learns which mutants' code the agent ran. A binary of its own rather than
// cmd/volperm: it links the reference node and nothing else, so it starts in a quarter of the
// time, and the exec pass starts two agents (apiserver and kubelet) per mutant.
package main

import (
	"fmt"
	"os"

	"github.com/volperm/volperm/framework/targets/exec/agent"
	"github.com/volperm/volperm/mutation/seamfile"
	"github.com/volperm/volperm/nodeimpl/mutant"
)

func main() {
	if !mutant.Built {
		fmt.Fprintln(os.Stderr, "mutantagent: built without the mutation seam: build it with -tags volperm_mutants")
		os.Exit(2)
	}
	if len(os.Args) != 2 {
		fmt.Fprintf(os.Stderr, "mutantagent: want one operation: setup, teardown, admit or serve (docs/exec-protocol.md); got %q\n", os.Args[1:])
		os.Exit(2)
	}
	if p := os.Getenv(seamfile.Env); p != "" {
		rec, err := seamfile.Writer(p)
		if err != nil {
			fmt.Fprintf(os.Stderr, "mutantagent: %v\n", err)
			os.Exit(2)
		}
		mutant.Record(rec)
	}
	os.Exit(agent.Main(os.Args[1], os.Stdin, os.Stdout, os.Stderr))
}
