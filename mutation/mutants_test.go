//go:build volperm_mutants

package mutation_test

import (
	"context"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/caseroot/caseroottest"
	"github.com/volperm/volperm/framework/catalogue"
	exectarget "github.com/volperm/volperm/framework/execagent"
	"github.com/volperm/volperm/framework/probe"
	"github.com/volperm/volperm/framework/targets/reference"
	"github.com/volperm/volperm/hostfeature"
	"github.com/volperm/volperm/mutation"
	"github.com/volperm/volperm/mutation/seamfile"
	"github.com/volperm/volperm/nodeimpl/mutant"
)

func TestMain(m *testing.M) {
	probe.MaybeRunChild()
	os.Exit(m.Run())
}

// TestMutants is `make mutants`: the whole catalogue against every mutant of nodeimpl/mutant on
// the reference node, then through the exec target on the reference agent built with the seam
// (agentTargets). It fails naming every mutant the catalogue certifies, every mutant fewer than
// mutation.MinKillers cases catch, and every mutant the exec pass lost. VOLPERM_MUTANTS selects
// mutants by substring (comma-separated); VOLPERM_MUTANTS_EXEC is sample (the default), full
// or off (mutation.ParseExecMode); VOLPERM_MUTANTS_REPORT names a file for the Markdown report.
func TestMutants(t *testing.T) {
	hostfeature.Need(t, hostfeature.Root)
	mode, err := mutation.ParseExecMode(os.Getenv("VOLPERM_MUTANTS_EXEC"))
	if err != nil {
		t.Fatalf("VOLPERM_MUTANTS_EXEC: %v", err)
	}
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
	exec := mutation.Exec{Mode: mode}
	if mode != mutation.ExecOff {
		exec.NewTarget = agentTargets(t, dir)
	}
	res, err := mutation.Run(context.Background(), catalogue.All(), mutants, newTarget, exec)
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
	if mode != mutation.ExecOff {
		killed, total := res.ExecRatio()
		t.Logf("exec kill ratio (%s): %d/%d", mode, killed, total)
	}
	for _, c := range res.Baseline {
		t.Errorf("the unmutated reference node fails %q: fix it before judging mutants", c)
	}
	for _, o := range res.Survivors() {
		t.Errorf("mutant %s (%s) is certified: no case fails when %s", o.Mutant.Name, o.Mutant.Family, o.Mutant.Bug)
	}
	for _, o := range res.Weak() {
		t.Errorf("mutant %s (%s) is caught by %d case(s) only (%s); the minimum is %d", o.Mutant.Name, o.Mutant.Family, len(o.Killers), strings.Join(o.Killers, "; "), mutation.MinKillers)
	}
	for _, c := range res.ExecBaseline {
		t.Errorf("the unmutated reference agent fails %q through exec, which the reference node passes: the exec path differs", c)
	}
	for _, o := range res.ExecLost() {
		t.Errorf("mutant %s (%s) is killed by %d case(s) in-process but by %d of %d through exec (%s): the exec path lost a kill when %s",
			o.Mutant.Name, o.Mutant.Family, len(o.Killers), len(o.Exec.Killers), o.Exec.Ran, mode, o.Mutant.Bug)
	}
	away := map[mutant.Name]bool{}
	for _, o := range res.NotInAgent() {
		away[o.Mutant.Name] = true
		if notInAgent[o.Mutant.Name] == "" {
			t.Errorf("mutant %s (%s) is killed in-process, but the agent never reached its code through exec (%d cases): the exec path no longer leads the agent to it, or add it to notInAgent with the reason", o.Mutant.Name, o.Mutant.Family, o.Exec.Ran)
		}
	}
	for _, o := range res.Outcomes {
		if why := notInAgent[o.Mutant.Name]; why != "" && o.Exec != nil && o.Killed() && !away[o.Mutant.Name] {
			t.Errorf("mutant %s is listed in notInAgent (%s), but the agent reached its code through exec: remove it from the list", o.Mutant.Name, why)
		}
	}
}

// notInAgent are the mutants whose code the reference agent never runs behind the exec target,
// each with the reason (docs/mutants.md "Through the exec target"). The exec pass neither can nor
// must kill them; TestMutants fails when this list and the measured one differ.
var notInAgent = map[mutant.Name]string{
	mutant.UsernsNoIdmap:                     usernsNotInAgent,
	mutant.UsernsOtherRange:                  usernsNotInAgent,
	mutant.BlindUsernsIdmapGIDsUnshifted:     usernsNotInAgent,
	mutant.BlindUsernsIdmapFilePlainBind:     usernsNotInAgent,
	mutant.BlindUsernsHostNetworkRatchetV134: releaseNotInAgent,
	mutant.SELinuxAnyAccessModeWithoutGate:   releaseNotInAgent,
	mutant.SELinuxPolicyMountOptionOld:       releaseNotInAgent,
	mutant.FlexDir0755:                       "the harness plays the fixture driver's mount (populateFixtures, framework/execagent/exec.go)",
	mutant.FlexStorageOwnerLost:              "the harness plays the fixture driver's mount (populateFixtures, framework/execagent/exec.go)",
	mutant.BlindFlexRootEntryIgnored:         "the harness plays the fixture driver's mount (populateFixtures, framework/execagent/exec.go)",
	mutant.BlindFlexChmodBeforeChown:         "the harness plays the fixture driver's mount (populateFixtures, framework/execagent/exec.go)",
	mutant.FlexRestartRepopulates: "the reference flexVolume tells a restart by the marker of the mount it did itself (populateOnce, nodeimpl/flexvolume/flexvolume.go); " +
		"behind exec the harness mounted the storage, so every SetUp looks like the first",
	mutant.FlexNoWalkOnRestart: "the reference flexVolume tells a restart by the marker of the mount it did itself (populateOnce, nodeimpl/flexvolume/flexvolume.go); " +
		"behind exec the harness mounted the storage, so every SetUp looks like the first",
	mutant.BlindPolicyIgnoredOnRestart: "the reference flexVolume tells a restart by the marker of the mount it did itself (populateOnce, nodeimpl/flexvolume/flexvolume.go); " +
		"behind exec the harness mounted the storage, so every SetUp looks like the first",
	mutant.GatesModeDefaultOn:            "the exec target sends the value of every kubelet gate (allGates, framework/execagent/exec.go): an agent never sees a gate left unset",
	mutant.BlindGatesUserFieldsDefaultOn: "the exec target sends the value of every kubelet gate (allGates, framework/execagent/exec.go): an agent never sees a gate left unset",
	mutant.BlindGatesOffNotApplied: "the exec target sends the value of every kubelet gate with every call (allGates, framework/execagent/exec.go): " +
		"an agent's kubelet is never told of a gate change, so Kubelet.SetGates never runs in it",
	mutant.ReleaseWarnSilently:              releaseNotInAgent,
	mutant.ReleaseStrictIgnored:             releaseNotInAgent,
	mutant.ReleaseKubeletKnowsAll:           releaseNotInAgent,
	mutant.BlindReleaseStrictSortedFields:   releaseNotInAgent,
	mutant.BlindReleaseUnknownListedDropped: releaseNotInAgent,
}

// usernsNotInAgent: the agent answers a pod's range (the kubelet's part); the idmapped mount of
// each volume is the container runtime's, which the harness plays for every node it drives.
const usernsNotInAgent = "the harness plays the runtime's idmapped mount of a volume with the range the agent answers (IDMappedMount, framework/execagent/exec.go)"

// releaseNotInAgent: the exec protocol names no release, so an agent is the newest release and
// the exec target runs no release-skew cell (framework.ReleaseRunner).
const releaseNotInAgent = "an agent is the newest release (the exec protocol names none), so the exec target runs no release-skew cell"

// agentTargets builds the reference agent with the seam once (mutation/mutantagent: the agent
// `volperm agent` is, in a binary of its own) and returns a factory of exec targets whose agent
// runs one mutant: a wrapper script per mutant sets VOLPERM_MUTANT (read by
// nodeimpl/mutant/seam_on.go's init in the agent process) and the file the agent lists the seams
// it reaches in (package seamfile), then execs the agent. The wrapper is both halves of the
// target (exec:W+exec:W), so that the agent is the apiserver too and the admission mutants run
// in it as well.
func agentTargets(t *testing.T, workDir string) mutation.NewAgentTarget {
	t.Helper()
	bin := t.TempDir()
	agent := filepath.Join(bin, "mutantagent")
	goBuild(t, "volperm_mutants", agent, "./mutation/mutantagent")
	// The agents' sandbox lets them write the seam files there (framework/sandbox).
	t.Setenv(exectarget.EnvWritable, bin)
	return func(n mutant.Name) (mutation.AgentTarget, error) {
		name := string(n)
		if n == "" {
			name = "unmutated"
		}
		w := filepath.Join(bin, "agent-"+name)
		seams := filepath.Join(bin, "seams-"+name)
		// VOLPERM_MUTANT is set even when empty: one in this test's environment must not reach
		// the unmutated agent.
		script := fmt.Sprintf("#!/bin/sh\n# The reference agent running mutant %q (mutation/mutants_test.go).\n%s='%s' %s='%s' exec '%s' \"$@\"\n",
			name, mutant.EnvActive, n, seamfile.Env, seams, agent)
		if err := os.WriteFile(w, []byte(script), 0755); err != nil {
			return nil, err
		}
		if err := os.Remove(seams); err != nil && !os.IsNotExist(err) {
			return nil, err
		}
		opts := framework.TargetOptions{Arg: w, WorkDir: workDir}
		api, err := exectarget.NewAPIServer(opts)
		if err != nil {
			return nil, err
		}
		node, err := exectarget.NewNode(opts)
		if err != nil {
			return nil, err
		}
		ref := exectarget.Name + ":" + w
		return agentTarget{framework.NewTargetPair(ref+framework.PairSeparator+ref, api, node), seams}, nil
	}
}

// agentTarget is an exec target on a wrapper agent, with the file its agents list the seams
// they reached in.
type agentTarget struct {
	framework.Target
	seams string
}

// Reached reads the seams the agents listed (seamfile.Read).
func (a agentTarget) Reached() ([]mutant.Name, error) { return seamfile.Read(a.seams) }

// TestRecordingOwnsAdmission: the recording run gives each seam to the case that reached it,
// also when a Pair admits the case in HostNeeds before Observe (framework/pair.go admits once).
// The seams were given to the case before, and four admission mutants survived in CI.
func TestRecordingOwnsAdmission(t *testing.T) {
	hostfeature.Need(t, hostfeature.Root)
	const killer = "flexVolume allowlist: an emptyDir and two flexVolumes, the last driver not in the allowlist (pod)"
	// The killer comes second: the seam it reaches in HostNeeds must not go to the first.
	cases := make([]*framework.Case, 2)
	for _, c := range catalogue.All() {
		switch c.Name {
		case "emptyDir mode -512 at admission, both gates on":
			cases[0] = c
		case killer:
			cases[1] = c
		}
	}
	if cases[0] == nil || cases[1] == nil {
		t.Fatal("the catalogue lacks one of the two cases")
	}
	dir := caseroottest.TempDir(t)
	newTarget := func() (framework.Target, error) {
		return reference.New(framework.TargetOptions{WorkDir: dir})
	}
	var m []mutant.Mutant
	for _, x := range mutant.All {
		if x.Name == mutant.AllowFirstVolumeOnly {
			m = append(m, x)
		}
	}
	res, err := mutation.Run(context.Background(), cases, m, newTarget, mutation.Exec{Mode: mutation.ExecOff})
	if err != nil {
		t.Fatal(err)
	}
	if o := res.Outcomes[0]; o.Reached != 1 || len(o.Killers) != 1 || o.Killers[0] != killer {
		t.Errorf("%s reached by %d case(s), killed by %q; want reached by and killed by %q", o.Mutant.Name, o.Reached, o.Killers, killer)
	}
}

// goBuild builds pkg (a path from the module's root) with tags into out.
func goBuild(t *testing.T, tags, out, pkg string) {
	t.Helper()
	build := osexec.Command("go", "build", "-tags", tags, "-o", out, pkg)
	build.Dir = repoRoot(t)
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -tags %q %s: %v\n%s", tags, pkg, err, b)
	}
}

// repoRoot is the module's root directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	gomod, err := osexec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	return filepath.Dir(strings.TrimSpace(string(gomod)))
}
