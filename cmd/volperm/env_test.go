package main

import (
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/volperm/volperm/framework"
)

// internalEnv are variables volperm sets for its own child processes, never for a user.
var internalEnv = map[string]string{
	"VOLPERM_AGENT_CALL":   "the token every process of an agent call inherits (docs/exec-protocol.md)",
	"VOLPERM_PROBE_CHILD":  "marks the reference target's probe child (framework/probe)",
	"VOLPERM_USERNS_HOLD":  "marks the child that holds a user namespace open for an idmapped mount (nodeimpl/userns)",
	"VOLPERM_MUTANT":       "the mutant an agent of the mutation self-test runs (nodeimpl/mutant, docs/mutants.md)",
	"VOLPERM_MUTANT_SEAMS": "where that agent lists the seams it reached (mutation/seamfile)",
}

// testEnv are variables of volperm's own tests, named outside a _test.go file by a package
// only tests import, never read by the volperm binary.
var testEnv = map[string]string{
	"VOLPERM_E2E": "runs the end-to-end tests make test skips (framework/e2etest, make e2e)",
}

// TestEveryEnvVarIsRegistered: every VOLPERM_* variable the program's source names (outside
// tests) is documented by framework.RegisterEnv, so that `volperm run -h` lists it, or is one of
// the variables volperm sets for its own children, or one of its tests' (testEnv).
func TestEveryEnvVarIsRegistered(t *testing.T) {
	registered := map[string]bool{}
	for _, v := range framework.EnvVars() {
		registered[v.Name] = true
		if v.Owner == "" || v.Meaning == "" {
			t.Errorf("%s is registered without an owner or a meaning", v.Name)
		}
	}
	re := regexp.MustCompile(`"(VOLPERM_[A-Z0-9_]+)"`)
	root := filepath.Join("..", "..")
	found := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "bin") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			found++
			if !registered[m[1]] && internalEnv[m[1]] == "" && testEnv[m[1]] == "" {
				t.Errorf("%s names %s, which no framework.RegisterEnv documents: register it beside its reader", p, m[1])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found == 0 {
		t.Fatal("no VOLPERM_* variable found in the source: the scan looks in the wrong place")
	}
}

// TestTargetFlags: the flags the targets registered parse into TargetOptions.Flags; a flag not
// given is absent, a boolean one given is "true".
func TestTargetFlags(t *testing.T) {
	var tf targetFlags
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	tf.register(fs)
	if err := fs.Parse([]string{"--keep", "--node-image", "img:1", "--work-dir", "/w"}); err != nil {
		t.Fatal(err)
	}
	o := tf.opts
	if o.Flag("keep") != "true" || o.Flag("node-image") != "img:1" || o.Flag("kubeconfig") != "" || o.WorkDir != "/w" {
		t.Errorf("parsed %+v", o)
	}
	if _, given := o.Flags["probe-image"]; given {
		t.Error("a flag not given has a value")
	}
}
