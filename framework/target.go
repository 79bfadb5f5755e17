package framework

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/volperm/volperm/hostfeature"
)

// Target is an implementation under test: it turns a Case into an observed Observation.
type Target interface {
	// Info names the target and the versions it runs, for reports.
	Info() TargetInfo
	// Supports says whether the target can run c on this machine; when it cannot, reason says
	// why (e.g. "needs root: mounts tmpfs"). Cases not supported are reported, never passed.
	Supports(c *Case) (ok bool, reason string)
	// Observe admits c, sets it up, applies its steps, snapshots the volumes, runs its probes
	// and tears everything down (also when ctx is cancelled). An error means the target itself
	// failed (not the case): the case is reported as an error.
	Observe(ctx context.Context, c *Case) (*Observation, error)
	// Close releases what the target holds across cases.
	Close() error
}

// Batcher is implemented by a target that runs many cases faster together (the container
// target shares one container per user set): the suites call Prepare with the cases of an area
// before its specs (of the whole run, for a RunBatcher), and each Observe then returns what
// Prepare observed.
type Batcher interface {
	Prepare(ctx context.Context, cases []*Case) error
}

// RunBatcher is a Batcher that prepares best given every case of a run at once (a cluster: the
// cases of every area share the node's gate cells, probe pods and kubelet restarts, and pod
// starts of one area fill the waits of another; issue 34): the suites call Prepare once, with
// every case, before the first area's specs (PrepareGroups).
type RunBatcher interface {
	Batcher
	// BatchesRun says whether it does (a matrix does when one of its cells does).
	BatchesRun() bool
}

// PrepareGroups are the cases a Batcher is given in each Prepare, in the order the suites run
// them: one group per area (framework.Areas' order), or one group of them all for a RunBatcher.
// Cases of no area in Areas are left out (the suites run none).
func PrepareGroups(t Target, cases []*Case) [][]*Case {
	var groups [][]*Case
	for _, a := range Areas {
		var g []*Case
		for _, c := range cases {
			if c.Area == a {
				g = append(g, c)
			}
		}
		if len(g) > 0 {
			groups = append(groups, g)
		}
	}
	if rb, ok := t.(RunBatcher); ok && rb.BatchesRun() && len(groups) > 1 {
		return [][]*Case{slices.Concat(groups...)}
	}
	return groups
}

// HostNeeds is implemented by a target whose cases need features of this machine (root, a huge
// page size, a container engine): framework.Ask asks it before Supports, so that a case this machine
// cannot run is "not run" with the feature named, or a failure when the run requires that feature
// (hostfeature.Required), whatever the target.
type HostNeeds interface {
	// HostNeeds lists the features of this machine c needs on the target; none for a case that
	// never reaches a node here.
	HostNeeds(c *Case) []hostfeature.Feature
}

// KnownDifferences is implemented by a target that is expected to disagree with the spec in
// documented places (upstream v1.37: emptyDir mode on Memory and HugePages, docs/spec.md). Such
// a case still fails; the reports explain it in one line next to the failure.
type KnownDifferences interface {
	// KnownDifference returns the difference when c is a documented difference of the target.
	KnownDifference(c *Case) (KnownDifference, bool)
}

// KnownDifference is one documented place where a target differs from the spec for a case: why,
// in one line for the reports, and which lines of the case's Diff it makes. A failure is that
// difference only when every line of its Diff is one the difference makes: a case the
// difference matches that fails in another way too fails as any case does, so that a known
// difference never hides another.
type KnownDifference struct {
	Why string
	// Makes says whether line, one of Diff's lines for the case, is one the difference makes.
	Makes func(line string) bool
}

// Unexplained are the lines of diff that k does not make (all of them for no difference).
func (k KnownDifference) Unexplained(diff []string) []string {
	var out []string
	for _, line := range diff {
		if k.Why == "" || k.Makes == nil || !k.Makes(line) {
			out = append(out, line)
		}
	}
	return out
}

// TargetInfo describes a target for reports.
type TargetInfo struct {
	Name    string            `json:"name"`
	Version string            `json:"version,omitempty"`
	Details map[string]string `json:"details,omitempty"`
}

// TargetOptions configure a target.
type TargetOptions struct {
	// Arg is what follows "NAME:" in a target reference ("exec:/path/agent" -> "/path/agent").
	Arg string
	// WorkDir is where the target may create its temporary roots ("" = os.TempDir()).
	WorkDir string
	// Flags are the values given to the flags targets register (RegisterTargetFlag), by name;
	// a flag not given is absent.
	Flags map[string]string
	// Interrupt is cancelled when the user interrupts the run while the target is being built
	// (kind builds its images then); nil means never. The command owns the signals.
	Interrupt context.Context
}

// Flag is the value given to the target flag name, "" when it was not given.
func (o TargetOptions) Flag(name string) string { return o.Flags[name] }

// InterruptContext is Interrupt, or a context never cancelled.
func (o TargetOptions) InterruptContext() context.Context {
	if o.Interrupt == nil {
		return context.Background()
	}
	return o.Interrupt
}

// TargetFlag is a command-line flag of volperm run, observe and diff that a target reads: a
// target registers its own (RegisterTargetFlag, from init) and reads it from
// TargetOptions.Flag.
type TargetFlag struct {
	Name string
	// Owner is the targets that read it ("cluster, kind").
	Owner string
	Usage string
	// Bool: a flag without a value ("--keep"); its value is then "true".
	Bool bool
}

var targetFlags = map[string]TargetFlag{}

// RegisterTargetFlag adds a flag to volperm run, observe and diff. A name registered twice panics.
func RegisterTargetFlag(f TargetFlag) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := targetFlags[f.Name]; dup {
		panic("volperm: target flag registered twice: " + f.Name)
	}
	targetFlags[f.Name] = f
}

// TargetFlags lists the registered target flags by name.
func TargetFlags() []TargetFlag {
	registryMu.Lock()
	defer registryMu.Unlock()
	out := make([]TargetFlag, 0, len(targetFlags))
	for _, f := range targetFlags {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// TargetFactory builds a target.
type TargetFactory func(TargetOptions) (Target, error)

type registration struct {
	factory TargetFactory
	summary string
}

var (
	registryMu sync.Mutex
	registry   = map[string]registration{}
)

// RegisterTarget makes a target available by name. Target packages call it from init.
func RegisterTarget(name, summary string, f TargetFactory) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[name]; dup {
		panic("volperm: target registered twice: " + name)
	}
	registry[name] = registration{factory: f, summary: summary}
}

// TargetNames lists the registered targets, sorted.
func TargetNames() []string {
	registryMu.Lock()
	defer registryMu.Unlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// TargetSummary is the one-line description a target registered with.
func TargetSummary(name string) string {
	registryMu.Lock()
	defer registryMu.Unlock()
	return registry[name].summary
}

// TargetName is the name the target built from ref reports (its Info().Name), known before it
// is built: a registered target's name ("exec" for "exec:/path/agent"), or a pair's whole
// reference ("upstream+reference").
func TargetName(ref string) string {
	if strings.Contains(ref, PairSeparator) {
		return ref
	}
	name, _ := SplitRef(ref)
	return name
}

// SplitRef splits one target (or half) reference into its name and argument: "NAME:ARG"
// ("exec:/path/agent") or "NAME@RELEASE" ("upstream@v1.36.3"); the first of ':' and '@' ends
// the name.
func SplitRef(ref string) (name, arg string) {
	if i := strings.IndexAny(ref, ":@"); i >= 0 {
		return ref[:i], ref[i+1:]
	}
	return ref, ""
}

// NewTarget builds the target named by ref: "reference", "exec:/path/agent", or a pair
// "APISERVER+KUBELET" ("upstream+reference").
func NewTarget(ref string, opts TargetOptions) (Target, error) {
	if strings.Contains(ref, PairSeparator) {
		return newPairTarget(ref, opts)
	}
	name, arg := SplitRef(ref)
	registryMu.Lock()
	reg, ok := registry[name]
	registryMu.Unlock()
	if !ok {
		return nil, fmt.Errorf("unknown target %q: use one of %s", ref, strings.Join(TargetNames(), ", "))
	}
	if arg != "" {
		opts.Arg = arg
	}
	return reg.factory(opts)
}
