// Command kindimage builds the probe image and the kind node image (nodeimage.Build) and prints
// both tags and the step timings as JSON: what `volperm cluster image` will do.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/volperm/volperm/framework/targets/kind/nodeimage"
)

func main() {
	cache := flag.String("cache", "", "artifact cache (default $XDG_CACHE_HOME/volperm/kindnode or ~/.cache/volperm/kindnode)")
	mirror := flag.String("mirror", "", "Debian mirror for debootstrap (default http://deb.debian.org/debian)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, nodeimage.Options{CacheDir: *cache, Mirror: *mirror}); err != nil {
		fmt.Fprintln(os.Stderr, "kindimage:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, opts nodeimage.Options) error {
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	module, err := nodeimage.FindModuleDir(wd)
	if err != nil {
		return err
	}
	opts.ModuleDir = module
	probe, err := nodeimage.BuildProbeImage(ctx, opts, filepath.Dir(filepath.Dir(module)))
	if err != nil {
		return err
	}
	opts.Preload = []string{probe}
	res, err := nodeimage.Build(ctx, opts)
	if err != nil {
		return err
	}
	out := struct {
		ProbeImage string `json:"probeImage"`
		*nodeimage.Result
	}{probe, res}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
