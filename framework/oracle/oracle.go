// Package oracle is the spec in code: a pure function from a Case to the Observation a
// conforming implementation must produce. It makes no syscalls.
package oracle

import "github.com/volperm/volperm/framework"

// Expect returns the Observation the spec demands for c (c must be Complete()d).
func Expect(c *framework.Case) *framework.Observation {
	panic("oracle.Expect: being written")
}
