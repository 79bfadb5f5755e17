package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/semver"

	"github.com/volperm/volperm/framework"
)

// kubernetesModule is the module whose versions are Kubernetes' releases on the module proxy.
const kubernetesModule = "k8s.io/kubernetes"

func newReleasesCommand(s streams) *command {
	fs := flag.NewFlagSet("releases", flag.ContinueOnError)
	check := fs.Duration("check", 0, "exit 1 when a supported minor release has a patch release newer than volperm's, served for longer than this (e.g. 24h); a proxy that cannot be reached is a warning, not a failure")
	return &command{
		name:    "releases",
		summary: "the Kubernetes releases the module proxy serves, the ones volperm runs, and what is cached here",
		flags:   fs,
		run:     func() int { return runReleases(s, *check) },
	}
}

// served is one version of k8s.io/kubernetes on the proxy, with when it was published.
type served struct {
	Version string
	Time    time.Time
}

// proxyURL is the first URL of GOPROXY (default https://proxy.golang.org): the proxy the go
// command fetches the agents' and node images' Kubernetes from.
func proxyURL() string {
	v := os.Getenv("GOPROXY")
	if v == "" {
		v = "https://proxy.golang.org"
	}
	for _, p := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == '|' }) {
		if strings.HasPrefix(p, "http://") || strings.HasPrefix(p, "https://") || strings.HasPrefix(p, "file://") {
			return strings.TrimSuffix(p, "/")
		}
	}
	return ""
}

// proxyGet reads path of the proxy (file:// too: a proxy laid out on disk, as tests and offline
// mirrors have it).
func proxyGet(ctx context.Context, proxy, path string) ([]byte, error) {
	if dir, ok := strings.CutPrefix(proxy, "file://"); ok {
		return os.ReadFile(filepath.Join(dir, filepath.FromSlash(path)))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, proxy+"/"+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s/%s: %s", proxy, path, resp.Status)
	}
	return io.ReadAll(io.LimitReader(resp.Body, 1<<20))
}

// servedVersions lists k8s.io/kubernetes's versions on proxy.
func servedVersions(ctx context.Context, proxy string) ([]string, error) {
	raw, err := proxyGet(ctx, proxy, kubernetesModule+"/@v/list")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, v := range strings.Fields(string(raw)) {
		if semver.IsValid(v) {
			out = append(out, v)
		}
	}
	semver.Sort(out)
	return out, nil
}

// publishedAt is when version was published on proxy (its .info's Time).
func publishedAt(ctx context.Context, proxy, version string) (time.Time, error) {
	raw, err := proxyGet(ctx, proxy, kubernetesModule+"/@v/"+version+".info")
	if err != nil {
		return time.Time{}, err
	}
	var info struct{ Time time.Time }
	if err := json.Unmarshal(raw, &info); err != nil {
		return time.Time{}, fmt.Errorf("%s.info: %w", version, err)
	}
	return info.Time, nil
}

// releaseRow is one supported minor release: volperm's patch, the newest served, what is cached.
type releaseRow struct {
	framework.Release
	Newest served
	Cached []string
}

// cachedOf names what this machine has built of patch (docs/releases.md: the agents' and the
// node images' caches under the user cache directory).
func cachedOf(patch string, newest bool) []string {
	var out []string
	if dir, err := framework.CacheDir("upstream"); err == nil {
		if _, err := os.Stat(filepath.Join(dir, patch)); err == nil {
			out = append(out, "upstream agent")
		}
	}
	if dir, err := framework.CacheDir("kindnode"); err == nil {
		name := "kubernetes-" + patch
		if newest {
			name = "kubernetes" // the default release's binaries
		}
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			out = append(out, "kind node binaries")
		}
	}
	return out
}

func runReleases(s streams, check time.Duration) int {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	proxy := proxyURL()
	table := framework.ReleaseTable()
	var versions []string
	var err error
	if proxy == "" {
		err = fmt.Errorf("GOPROXY=%q names no proxy URL", os.Getenv("GOPROXY"))
	} else {
		versions, err = servedVersions(ctx, proxy)
	}
	if err != nil {
		fmt.Fprintf(s.out, "warning: the module proxy could not be read (%v): what it serves is unknown; volperm's releases and this machine's caches follow\n", err)
	}
	rows := make([]releaseRow, len(table))
	now := time.Now()
	behind := []string{}
	for i, r := range table {
		rows[i] = releaseRow{Release: r, Cached: cachedOf(r.Patch, i == len(table)-1)}
		for _, v := range versions {
			if semver.MajorMinor(v) == r.Minor && semver.Prerelease(v) == "" && semver.Compare(v, rows[i].Newest.Version) > 0 {
				rows[i].Newest.Version = v
			}
		}
		if n := rows[i].Newest.Version; n != "" && semver.Compare(n, r.Patch) > 0 {
			if t, err := publishedAt(ctx, proxy, n); err == nil {
				rows[i].Newest.Time = t
			}
			if check > 0 && !rows[i].Newest.Time.IsZero() && now.Sub(rows[i].Newest.Time) > check {
				behind = append(behind, fmt.Sprintf("%s: %s served since %s, volperm runs %s", r.Minor, n, rows[i].Newest.Time.Format("2006-01-02"), r.Patch))
			}
		}
	}
	if proxy != "" && err == nil {
		fmt.Fprintf(s.out, "Kubernetes releases (%s on %s, read %s):\n", kubernetesModule, proxy, now.UTC().Format("2006-01-02 15:04 UTC"))
	} else {
		fmt.Fprintf(s.out, "Kubernetes releases volperm runs:\n")
	}
	fmt.Fprintf(s.out, "%-7s %-18s %-34s %s\n", "minor", "volperm runs", "newest patch served", "cached here")
	for i, r := range rows {
		runs := r.Patch
		if i == len(rows)-1 {
			runs += " (default)"
		}
		newest := "unknown"
		switch {
		case err != nil:
		case r.Newest.Version == "":
			newest = "none"
		case r.Newest.Version == r.Patch:
			newest = r.Newest.Version + " (the same)"
		case semver.Compare(r.Newest.Version, r.Patch) > 0:
			newest = r.Newest.Version + " NEWER"
			if !r.Newest.Time.IsZero() {
				newest += ", " + r.Newest.Time.Format("2006-01-02")
			}
		default:
			newest = r.Newest.Version
		}
		cached := strings.Join(r.Cached, ", ")
		if cached == "" {
			cached = "nothing (built on first use)"
		}
		fmt.Fprintf(s.out, "%-7s %-18s %-34s %s\n", r.Minor, runs, newest, cached)
	}
	var newer []string
	newestMinor := table[len(table)-1].Minor
	for _, v := range versions {
		if semver.Compare(semver.MajorMinor(v), newestMinor) > 0 {
			newer = append(newer, v)
		}
	}
	if len(newer) > 0 {
		fmt.Fprintf(s.out, "newer than volperm's releases: %s (not supported yet: docs/releases.md \"Adding a release\")\n", strings.Join(newer, ", "))
	}
	if len(behind) > 0 {
		slices.Sort(behind)
		fmt.Fprintf(s.out, "behind for longer than %s: %s (docs/releases.md \"Adding a patch release\")\n", check, strings.Join(behind, "; "))
		return exitFailed
	}
	return exitOK
}
