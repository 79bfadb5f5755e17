//go:build !volperm_mutants

package mutant

// Built is false: this binary has no seam, every On is a constant false the compiler removes.
const Built = false

// On reports whether the mutant named is the one this process runs. Without the
// volperm_mutants build tag it is always false.
func On(Name) bool { return false }

// Activate does nothing without the volperm_mutants tag: there is no seam to turn on.
func Activate(Name) {}

// Record does nothing without the volperm_mutants tag: no seam is ever reached.
func Record(func(Name)) {}
