package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os/signal"
	"syscall"

	"github.com/volperm/volperm/framework"
)

// observeFlags are the flags of `volperm observe`.
type observeFlags struct {
	target     string
	targetOpts targetFlags
	cases      caseFlags
}

func newObserveCommand(s streams) *command {
	f := &observeFlags{}
	fs := flag.NewFlagSet("observe", flag.ContinueOnError)
	fs.StringVar(&f.target, "target", "reference", "implementation under test: "+targetList())
	f.targetOpts.register(fs)
	f.cases.register(fs)
	return &command{
		name:    "observe",
		summary: "run each case of -f FILE on a target and print what it observed (same schema as expect)",
		flags:   fs,
		env:     true,
		run:     func() int { return runObserve(s, f) },
	}
}

// runObserve observes every case in order; SIGINT/SIGTERM cancel the running case, whose
// teardown the target still does, and the target is closed before returning.
func runObserve(s streams, f *observeFlags) int {
	if len(f.cases.files) == 0 {
		return fail(s, "observe", needFiles("observe"))
	}
	cases, err := f.cases.load()
	if err != nil {
		return fail(s, "observe", err)
	}
	// This command owns the signals: they cancel the target's build and then the cases.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	opts := f.targetOpts.opts
	opts.Interrupt = ctx
	target, err := framework.NewTarget(f.target, opts)
	if err != nil {
		return fail(s, "observe", usagef("--target: %v", err))
	}
	obs, err := observeAll(ctx, target, cases)
	err = errors.Join(err, target.Close())
	if err != nil {
		return fail(s, "observe", err)
	}
	if err := writeObservations(s.out, obs); err != nil {
		return fail(s, "observe", err)
	}
	return exitOK
}

func observeAll(ctx context.Context, target framework.Target, cases []*framework.Case) ([]*framework.Observation, error) {
	name := target.Info().Name
	var obs []*framework.Observation
	for _, c := range cases {
		a := framework.Ask(ctx, target, c)
		if why := a.NotRun(); why != "" {
			return nil, fmt.Errorf("case %q: target %s cannot run it here: %s", c.Name, name, why)
		}
		if a.Err != nil {
			return nil, fmt.Errorf("case %q: target %s: %w", c.Name, name, a.Err)
		}
		obs = append(obs, a.Observation)
	}
	return obs, nil
}
