package nodeimage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLockBuilds: a second build of the same cache waits for the first (saying so once) and
// gives up when its context ends; once the first is done, it proceeds.
func TestLockBuilds(t *testing.T) {
	cache := t.TempDir()
	var logged []string
	logf := func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }
	unlock, err := lockBuilds(context.Background(), cache, logf)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 600*time.Millisecond)
	defer cancel()
	if _, err := lockBuilds(ctx, cache, logf); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a second build while the first holds the lock: %v, want it to wait until its context ends", err)
	}
	if len(logged) != 1 || !strings.Contains(logged[0], "waiting for another process's node image build") {
		t.Errorf("logged %q, want one line saying it waits", logged)
	}
	done := make(chan error, 1)
	go func() {
		u, err := lockBuilds(context.Background(), cache, logf)
		if err == nil {
			u()
		}
		done <- err
	}()
	time.Sleep(300 * time.Millisecond)
	unlock()
	select {
	case err := <-done:
		if err != nil {
			t.Error(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the second build did not proceed once the first released the lock")
	}
}

// A step that fails (a go build stopped by Ctrl-C) leaves no partial directory in the cache;
// one that succeeds is renamed into place and not made again for the same key.
func TestCachedDirLeavesNothingOnFailure(t *testing.T) {
	cache := t.TempDir()
	b := &builder{cache: cache, keys: map[string]string{}, opts: Options{Log: io.Discard}}
	boom := errors.New("signal: killed")
	if _, err := b.cachedDir("kubernetes", "k1", func(dir string) error {
		if err := os.WriteFile(filepath.Join(dir, "kubelet"), []byte("half"), 0o644); err != nil {
			t.Fatal(err)
		}
		return boom
	}); !errors.Is(err, boom) {
		t.Fatalf("cachedDir: %v, want %v", err, boom)
	}
	if entries, _ := os.ReadDir(cache); len(entries) != 0 {
		t.Errorf("a failed step left %v in the cache", entries)
	}
	made := 0
	for i, want := range []bool{false, true} {
		cached, err := b.cachedDir("kubernetes", "k1", func(dir string) error {
			made++
			return os.WriteFile(filepath.Join(dir, "kubelet"), []byte("whole"), 0o644)
		})
		if err != nil || cached != want {
			t.Errorf("cachedDir, call %d: cached %v, %v; want cached %v", i+1, cached, err, want)
		}
	}
	if made != 1 {
		t.Errorf("the step was made %d times for one key, want 1", made)
	}
	if data, err := os.ReadFile(filepath.Join(cache, "kubernetes", "kubelet")); err != nil || string(data) != "whole" {
		t.Errorf("the cached artifact: %q, %v", data, err)
	}
}
