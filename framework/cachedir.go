package framework

import (
	"fmt"
	"os"
	"path/filepath"
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
