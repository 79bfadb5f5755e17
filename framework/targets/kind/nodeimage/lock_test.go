package nodeimage

import (
	"context"
	"errors"
	"fmt"
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
