package cluster

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/volperm/volperm/framework"
)

func stepsPod(name string, steps ...framework.Step) *probePod {
	return &probePod{name: name, runs: []*caseRun{{c: &framework.Case{Name: name, After: steps}}}}
}

// Pods whose steps are chmods and restarts in the same order share a group; any other step, a
// hostPath pod or a pod of several cases runs alone.
func TestStepGroups(t *testing.T) {
	chmod := framework.Step{Chmod: &framework.Chmod{Volume: "v", Mode: 0o700}}
	restart := framework.Step{RestartKubelet: true}
	gates := framework.Step{SetGates: &framework.Gates{Kubelet: map[string]bool{framework.GateEmptyDirVolumeMode: true}}}
	a, b, c := stepsPod("a", chmod, restart), stepsPod("b", restart), stepsPod("c", chmod, restart)
	d, e := stepsPod("d", restart), stepsPod("e", gates, restart)
	host := stepsPod("host", restart)
	host.hostPath = true
	got := stepGroups([]*probePod{a, b, c, d, e, host})
	var names [][]string
	for _, g := range got {
		var n []string
		for _, p := range g {
			n = append(n, p.name)
		}
		names = append(names, n)
	}
	want := [][]string{{"a", "c"}, {"b", "d"}, {"e"}, {"host"}}
	if len(names) != len(want) {
		t.Fatalf("groups %v, want %v", names, want)
	}
	for i := range want {
		if len(names[i]) != len(want[i]) {
			t.Fatalf("groups %v, want %v", names, want)
		}
		for j := range want[i] {
			if names[i][j] != want[i][j] {
				t.Fatalf("groups %v, want %v", names, want)
			}
		}
	}
}

// Each round's restart runs once, when every member has arrived or left; every arrival gets
// the round's error.
func TestRestartRound(t *testing.T) {
	var restarts atomic.Int32
	boom := errors.New("kubelet did not come back")
	round := newRestartRound(3, func(context.Context) error {
		if restarts.Add(1) == 2 {
			return boom
		}
		return nil
	})
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make([][]error, 3)
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer round.leave(ctx)
			rounds := 2
			if i == 2 {
				rounds = 1 // leaves after one round: the second runs without it
			}
			for range rounds {
				time.Sleep(time.Duration(i) * 5 * time.Millisecond)
				errs[i] = append(errs[i], round.arrive(ctx))
			}
		}()
	}
	wg.Wait()
	if n := restarts.Load(); n != 2 {
		t.Fatalf("%d restarts for two rounds", n)
	}
	for i, e := range errs {
		if e[0] != nil {
			t.Errorf("member %d: round 1 error %v", i, e[0])
		}
		if i < 2 && !errors.Is(e[1], boom) {
			t.Errorf("member %d: round 2 error %v, want %v", i, e[1], boom)
		}
	}
	// A member that leaves while the others wait lets their round run.
	restarts.Store(0)
	round = newRestartRound(2, func(context.Context) error { restarts.Add(1); return nil })
	done := make(chan error)
	go func() { done <- round.arrive(ctx) }()
	time.Sleep(10 * time.Millisecond)
	round.leave(ctx)
	select {
	case err := <-done:
		if err != nil || restarts.Load() != 1 {
			t.Errorf("arrive = %v after %d restarts", err, restarts.Load())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting member was never released")
	}
}
