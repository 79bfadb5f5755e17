package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os/signal"
	"syscall"

	"github.com/volperm/volperm/framework/targets/kind"
	"github.com/volperm/volperm/framework/targets/kind/nodeimage"
)

// runCluster is `volperm cluster image`: build (or find in the cache) the probe image and the
// Kubernetes v1.37 kind node image that preloads it, offline, and print both tags and the step
// timings as JSON. Progress goes to stderr, one line per step.
func runCluster(s streams, args []string) int {
	if len(args) == 0 || args[0] != "image" {
		return fail(s, "cluster", usagef("want a subcommand: volperm cluster image [--cache DIR] [--mirror URL]"))
	}
	fs := flag.NewFlagSet("cluster image", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var opts nodeimage.Options
	fs.StringVar(&opts.CacheDir, "cache", "", "artifact cache (default $XDG_CACHE_HOME/volperm/kindnode or ~/.cache/volperm/kindnode)")
	fs.StringVar(&opts.Mirror, "mirror", "", "Debian mirror for debootstrap (default http://deb.debian.org/debian)")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(s.out)
			fs.PrintDefaults()
			return exitOK
		}
		return fail(s, "cluster image", usagef("%v", err))
	}
	if fs.NArg() > 0 {
		return fail(s, "cluster image", usagef("unexpected argument %q", fs.Arg(0)))
	}
	opts.Log = s.err
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	images, err := kind.BuildImages(ctx, opts)
	if err != nil {
		return fail(s, "cluster image", err)
	}
	enc := json.NewEncoder(s.out)
	enc.SetIndent("", "  ")
	if err := enc.Encode(images); err != nil {
		return fail(s, "cluster image", err)
	}
	return exitOK
}
