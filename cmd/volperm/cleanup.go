package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/volperm/volperm/framework/sweep"
)

type cleanupFlags struct {
	dryRun  bool
	workDir string
}

func newCleanupCommand(s streams) *command {
	f := &cleanupFlags{}
	fs := flag.NewFlagSet("cleanup", flag.ContinueOnError)
	fs.BoolVar(&f.dryRun, "dry-run", false, "list what would be removed, remove nothing")
	fs.StringVar(&f.workDir, "work-dir", "", "the work dir the runs used (default $TMPDIR, which is always swept)")
	return &command{
		name:    "cleanup",
		summary: "remove what killed runs left: case roots and their mounts, probe containers, kind clusters (every run does this first)",
		flags:   fs,
		run: func() int {
			if err := sweepLeftovers(s.out, "cleanup", sweep.Options{WorkDir: f.workDir, DryRun: f.dryRun}, true); err != nil {
				return fail(s, "cleanup", err)
			}
			return exitOK
		},
	}
}

// sweepLeftovers runs every sweeper and prints one line per item found, and with sayNothing a
// line when there was nothing.
func sweepLeftovers(w io.Writer, cmd string, o sweep.Options, sayNothing bool) error {
	found, err := sweep.All(context.Background(), o)
	verb := "removed"
	if o.DryRun {
		verb = "would remove"
	}
	for _, f := range found {
		fmt.Fprintf(w, "volperm %s: %s %s, left by a run that is no longer alive\n", cmd, verb, f.Item)
	}
	if len(found) == 0 && sayNothing {
		fmt.Fprintf(w, "volperm %s: nothing left by dead runs\n", cmd)
	}
	return err
}
