// Command volperm is the one binary of the harness: `run` runs the suites against a target and
// writes the reports, `expect` prints what the oracle says a case must do, `observe` what a
// target did, `diff` where two targets disagree, `version` the versions a report names, `catalogue rules` the spec-rule coverage, `agent` the reference node behind the exec
// protocol, `probe` what runs inside a probe container.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/probe"
	"github.com/volperm/volperm/framework/probe/incontainer"
	_ "github.com/volperm/volperm/framework/targets/cluster"
	_ "github.com/volperm/volperm/framework/targets/container"
	_ "github.com/volperm/volperm/framework/targets/exec"
	_ "github.com/volperm/volperm/framework/targets/kind"
	_ "github.com/volperm/volperm/framework/targets/reference"
	_ "github.com/volperm/volperm/framework/targets/upstream"
)

// Exit codes (docs/commands.md "Exit codes").
const (
	exitOK     = 0
	exitFailed = 1 // a case failed, or a target failed
	exitUsage  = 2 // bad flags, unknown target/profile/gate, bad label filter, bad case file
)

// streams are where a command writes.
type streams struct {
	out, err io.Writer
}

// command is one subcommand: its flags, parsed by main, and the function that runs it.
type command struct {
	name    string
	summary string
	flags   *flag.FlagSet
	run     func() int
	// env: -h also lists the environment variables volperm and the targets read.
	env bool
}

// usageError is bad input: main prints it as one line and exits 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return usageError{fmt.Sprintf(format, a...)} }

func main() {
	// The reference target's probes re-execute this binary as other uids.
	probe.MaybeRunChild()
	if args, ok := agentArgs(os.Args); ok {
		os.Exit(runAgent(args))
	}
	if len(os.Args) > 1 && os.Args[1] == "probe" {
		// What runs inside a probe container: stat the mounts, try the probes, print JSON.
		os.Exit(incontainer.ProbeMain(os.Args[2:], os.Stdin, os.Stdout))
	}
	os.Exit(Main(os.Args[1:], streams{out: os.Stdout, err: os.Stderr}))
}

// Main runs the volperm command line and returns the exit code.
func Main(args []string, s streams) int {
	cmds := []*command{newRunCommand(s), newRunnerCommand(s), newExpectCommand(s), newObserveCommand(s), newDiffCommand(s), newReleasesCommand(s), newVersionCommand(s), newCleanupCommand(s)}
	if len(args) == 0 {
		usage(s.err, cmds)
		return exitUsage
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		usage(s.out, cmds)
		return exitOK
	case "cluster":
		return runCluster(s, args[1:])
	case "image":
		return runImage(s, args[1:])
	case "catalogue":
		return runCatalogue(s, args[1:])
	case "report":
		return runReport(s, args[1:])
	case "spec":
		return runSpec(s, args[1:])
	case "bench":
		return runBench(s, args[1:])
	}
	for _, c := range cmds {
		if c.name != args[0] {
			continue
		}
		c.flags.SetOutput(io.Discard)
		if err := c.flags.Parse(args[1:]); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				c.flags.SetOutput(s.out)
				fmt.Fprintf(s.out, "volperm %s: %s\n\nFlags:\n", c.name, c.summary)
				c.flags.PrintDefaults()
				if c.env {
					printEnv(s.out)
				}
				return exitOK
			}
			return fail(s, c.name, usagef("%v: run 'volperm %s -h' for the flags", err, c.name))
		}
		if c.flags.NArg() > 0 {
			return fail(s, c.name, usagef("unexpected argument %q: case files go after -f", c.flags.Arg(0)))
		}
		return c.run()
	}
	return fail(s, "", usagef("unknown command %q: use one of %s", args[0], names(cmds)))
}

// parseSubcommand parses the flags of `volperm NAME` (a subcommand outside the run-like
// commands): -h prints summary and the flags (exit 0), a bad flag or a stray argument is a
// usage error. done says that the command ends with code.
func parseSubcommand(s streams, name, summary string, fs *flag.FlagSet, args []string) (code int, done bool) {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(s.out)
			fmt.Fprintf(s.out, "volperm %s: %s\n\nFlags:\n", name, summary)
			fs.PrintDefaults()
			return exitOK, true
		}
		return fail(s, name, usagef("%v: run 'volperm %s -h' for the flags", err, name)), true
	}
	if fs.NArg() > 0 {
		return fail(s, name, usagef("unexpected argument %q", fs.Arg(0))), true
	}
	return 0, false
}

// fail prints err as one line on stderr and returns its exit code.
func fail(s streams, cmd string, err error) int {
	prefix := "volperm"
	if cmd != "" {
		prefix += " " + cmd
	}
	fmt.Fprintf(s.err, "%s: %s\n", prefix, strings.ReplaceAll(err.Error(), "\n", " "))
	var ue usageError
	if errors.As(err, &ue) {
		return exitUsage
	}
	return exitFailed
}

// printEnv lists the environment variables volperm and the targets read (framework.RegisterEnv).
func printEnv(w io.Writer) {
	fmt.Fprintf(w, "\nEnvironment:\n")
	for _, v := range framework.EnvVars() {
		fmt.Fprintf(w, "  %s (%s)\n    \t%s\n", v.Name, v.Owner, v.Meaning)
	}
}

func usage(w io.Writer, cmds []*command) {
	fmt.Fprintf(w, "volperm checks the node-side volume permission semantics of Kubernetes.\n\nUsage: volperm COMMAND [flags]\n\nCommands:\n")
	for _, c := range cmds {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "  %-8s %s\n", "catalogue", "catalogue rules: per rule of docs/spec.md, the cases that check it and the conditions they cover")
	fmt.Fprintf(w, "  %-8s %s\n", "cluster", "cluster image [--kubernetes-version v1.N.P] [--runtime containerd2|debian]: build the kind node image of a Kubernetes release (default v1.37.1) and container runtime (default containerd2: containerd 2 and runc built here; debian: Debian 12's containerd 1.6 and runc 1.1) and the probe image offline (cached per release and runtime); cluster run --in-cluster / retrieve / remove: volperm as a Job in the cluster, its reports fetched later; cluster sonobuoy-plugin: the Sonobuoy plugin")
	fmt.Fprintf(w, "  %-8s %s\n", "spec", "spec texts [--json] [-f FILE]: every text the spec demands of an implementation (admission errors and warnings, set-up and sandbox errors), from the oracle's Observations of the catalogue (docs/texts.md)")
	fmt.Fprintf(w, "  %-8s %s\n", "report", "report verify DIR: check a hand-in (the files volperm run --implementation wrote) agree with each other and certify what they claim (docs/certify.md)")
	fmt.Fprintf(w, "  %-8s %s\n", "image", "image save [--runner] -o FILE: write the cluster target's probe image (or the runner image) as a tarball, for air-gapped clusters")
	fmt.Fprintf(w, "  %-8s %s\n", "probe", "what runs inside a probe container: stat mounts and try probes as this uid (volperm probe -h)")
	fmt.Fprintf(w, "  %-8s %s\n", "agent", "be the reference node agent of the exec protocol: volperm agent setup|teardown < request.json")
	fmt.Fprintf(w, "\nRun 'volperm COMMAND -h' for a command's flags.\n")
}

func names(cmds []*command) string {
	var n []string
	for _, c := range cmds {
		n = append(n, c.name)
	}
	sort.Strings(n)
	return strings.Join(n, ", ")
}
