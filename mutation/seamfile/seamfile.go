// Package seamfile carries the mutation seams an agent process reached back to the mutation
// self-test (docs/mutants.md "Through the exec target"). An agent process has no way to call
// the test's recorder, so the reference agent of the exec pass (mutation/mutantagent) appends
// the name of every seam it reaches to the file Env names, and the test reads that file once
// the agent has exited. The package is a leaf beside nodeimpl/mutant: an agent built with it
// stays small.
package seamfile

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/volperm/volperm/nodeimpl/mutant"
)

// Env names the file an agent process appends the seams it reaches to.
const Env = "VOLPERM_MUTANT_SEAMS"

// Writer opens the file at path for appending (creating it) and returns a recorder for
// mutant.Record that writes each name it is given, the first time only, as a line of its own.
// Both halves of an exec target (two processes) may share one file: each line is one append.
// A failed write is told on stderr once; the name is then missing, which the exec pass reports
// as a seam the agent did not reach.
func Writer(path string) (func(mutant.Name), error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0644)
	if err != nil {
		return nil, fmt.Errorf("seam file: %w", err)
	}
	var mu sync.Mutex
	seen := map[mutant.Name]bool{}
	warned := false
	return func(n mutant.Name) {
		mu.Lock()
		defer mu.Unlock()
		if seen[n] {
			return
		}
		seen[n] = true
		if _, err := f.WriteString(string(n) + "\n"); err != nil && !warned {
			warned = true
			fmt.Fprintf(os.Stderr, "seam file %s: %v\n", path, err)
		}
	}, nil
}

// Read returns the distinct names in the file at path, in the order first written. A missing
// file holds no name: no agent process started, or none reached a seam.
func Read(path string) ([]mutant.Name, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []mutant.Name
	seen := map[mutant.Name]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		n := mutant.Name(strings.TrimSpace(sc.Text()))
		if n != "" && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out, sc.Err()
}
