package framework

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// CacheDir is where volperm keeps what it builds for name ("kindnode": the kind node image's
// artifacts; "upstream": the upstream agents per release): $XDG_CACHE_HOME/volperm/NAME, else
// ~/.cache/volperm/NAME. A cache, not a leftover: `volperm cleanup` leaves it.
func CacheDir(name string) (string, error) {
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "volperm", name), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("cache directory: %w (set XDG_CACHE_HOME)", err)
	}
	return filepath.Join(home, ".cache", "volperm", name), nil
}

// LockFile takes an exclusive lock (flock) on the file at path, made if missing, for one
// builder of a cache at a time whatever process builds it: the node image's build lock, a
// Kubernetes release's compile lock. When another holds it, waiting is called once and LockFile
// polls until the lock is free or ctx ends. The returned func releases it; a killed holder's
// lock is released by the kernel.
func LockFile(ctx context.Context, path string, waiting func()) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	for waited := false; ; {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if !waited && waiting != nil {
			waiting()
		}
		waited = true
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for the lock %s: %w", path, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}
