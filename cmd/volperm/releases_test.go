package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/volperm/volperm/framework"
)

// fakeProxy lays out k8s.io/kubernetes's versions as a module proxy does, on disk (file://):
// every patch volperm runs, plus extra, each published at its time.
func fakeProxy(t *testing.T, extra map[string]time.Time) string {
	t.Helper()
	dir := t.TempDir()
	at := filepath.Join(dir, "k8s.io", "kubernetes", "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		t.Fatal(err)
	}
	versions := map[string]time.Time{}
	for _, r := range framework.ReleaseTable() {
		versions[r.Patch] = time.Now().Add(-90 * 24 * time.Hour)
	}
	for v, tm := range extra {
		versions[v] = tm
	}
	var list []string
	for v, tm := range versions {
		list = append(list, v)
		info := fmt.Sprintf(`{"Version": %q, "Time": %q}`, v, tm.UTC().Format(time.RFC3339))
		if err := os.WriteFile(filepath.Join(at, v+".info"), []byte(info), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(at, "list"), []byte(strings.Join(list, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return "file://" + dir
}

// `volperm releases`: every supported minor with volperm's patch and the newest served; --check
// fails when a newer patch has been served for longer than its bound, not before; a proxy that
// cannot be read is a warning line and exit 0, --check or not.
func TestReleases(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // nothing cached
	newest := framework.ReleaseTable()[len(framework.ReleaseTable())-1]
	var major, minor, patch int
	fmt.Sscanf(newest.Patch, "v%d.%d.%d", &major, &minor, &patch)
	next := fmt.Sprintf("v%d.%d.%d", major, minor, patch+1)
	nextMinor := fmt.Sprintf("v%d.%d.0-beta.0", major, minor+1)

	t.Setenv("GOPROXY", fakeProxy(t, map[string]time.Time{next: time.Now().Add(-48 * time.Hour), nextMinor: time.Now()}))
	code, out, _ := runMain("releases")
	for _, want := range []string{
		newest.Minor + "   " + newest.Patch + " (default)",
		next + " NEWER, ",
		"nothing (built on first use)",
		"newer than volperm's releases: " + nextMinor,
	} {
		if code != exitOK || !strings.Contains(out, want) {
			t.Errorf("exit %d, output lacks %q:\n%s", code, want, out)
		}
	}
	if code, out, _ := runMain("releases", "--check", "24h"); code != exitFailed || !strings.Contains(out, "behind for longer than 24h0m0s: "+newest.Minor+": "+next+" served since") {
		t.Errorf("--check 24h with a patch 48 h old: exit %d:\n%s", code, out)
	}
	if code, out, _ := runMain("releases", "--check", "72h"); code != exitOK || strings.Contains(out, "behind") {
		t.Errorf("--check 72h with a patch 48 h old: exit %d:\n%s", code, out)
	}
	t.Setenv("GOPROXY", "http://127.0.0.1:9")
	if code, out, _ := runMain("releases", "--check", "24h"); code != exitOK || !strings.HasPrefix(out, "warning: the module proxy could not be read") || !strings.Contains(out, newest.Patch+" (default)") {
		t.Errorf("an unreachable proxy: exit %d:\n%s", code, out)
	}
}
