//go:build volperm_mutants

package mutation_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/caseroot/caseroottest"
	"github.com/volperm/volperm/framework/catalogue"
	"github.com/volperm/volperm/framework/probe"
	"github.com/volperm/volperm/framework/targets/reference"
	"github.com/volperm/volperm/hostfeature"
	"github.com/volperm/volperm/mutation"
	"github.com/volperm/volperm/nodeimpl/mutant"
)

func TestMain(m *testing.M) {
	probe.MaybeRunChild()
	os.Exit(m.Run())
}

// TestMutants is `make mutants`: the whole catalogue against every mutant of nodeimpl/mutant on
// the reference node. It fails naming every mutant the catalogue certifies and every mutant
// fewer than mutation.MinKillers cases catch. VOLPERM_MUTANTS selects mutants by substring
// (comma-separated); VOLPERM_MUTANTS_REPORT names a file for the Markdown report.
func TestMutants(t *testing.T) {
	hostfeature.Need(t, hostfeature.Root)
	mutants := mutant.All
	if sel := os.Getenv("VOLPERM_MUTANTS"); sel != "" {
		mutants = nil
		for _, m := range mutant.All {
			for _, s := range strings.Split(sel, ",") {
				if s != "" && strings.Contains(string(m.Name), s) {
					mutants = append(mutants, m)
					break
				}
			}
		}
	}
	dir := caseroottest.TempDir(t)
	newTarget := func() (framework.Target, error) {
		return reference.New(framework.TargetOptions{WorkDir: dir})
	}
	res, err := mutation.Run(context.Background(), catalogue.All(), mutants, newTarget)
	if err != nil {
		t.Fatal(err)
	}
	report := res.Markdown()
	t.Log("\n" + report)
	if p := os.Getenv("VOLPERM_MUTANTS_REPORT"); p != "" {
		if err := os.WriteFile(p, []byte(report), 0644); err != nil {
			t.Fatal(err)
		}
	}
	killed, total := res.Ratio()
	t.Logf("kill ratio: %d/%d", killed, total)
	for _, c := range res.Baseline {
		t.Errorf("the unmutated reference node fails %q: fix it before judging mutants", c)
	}
	for _, o := range res.Survivors() {
		t.Errorf("mutant %s (%s) is certified: no case fails when %s", o.Mutant.Name, o.Mutant.Family, o.Mutant.Bug)
	}
	for _, o := range res.Weak() {
		t.Errorf("mutant %s (%s) is caught by %d case(s) only (%s); the minimum is %d", o.Mutant.Name, o.Mutant.Family, len(o.Killers), strings.Join(o.Killers, "; "), mutation.MinKillers)
	}
}
