package nodecontrol

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Each round's restart runs once, when every member has arrived or left; every arrival gets
// the round's error.
func TestRounds(t *testing.T) {
	var restarts atomic.Int32
	boom := errors.New("kubelet did not come back")
	var steps []int
	round := NewRounds(3, func(_ context.Context, i int) error {
		steps = append(steps, i)
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
			defer round.Leave(ctx)
			rounds := 2
			if i == 2 {
				rounds = 1 // leaves after one round: the second runs without it
			}
			for range rounds {
				time.Sleep(time.Duration(i) * 5 * time.Millisecond)
				errs[i] = append(errs[i], round.Arrive(ctx))
			}
		}()
	}
	wg.Wait()
	if n := restarts.Load(); n != 2 || len(steps) != 2 || steps[0] != 0 || steps[1] != 1 {
		t.Fatalf("%d restarts for two rounds, steps %v", n, steps)
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
	round = NewRounds(2, func(context.Context, int) error { restarts.Add(1); return nil })
	done := make(chan error)
	go func() { done <- round.Arrive(ctx) }()
	time.Sleep(10 * time.Millisecond)
	round.Leave(ctx)
	select {
	case err := <-done:
		if err != nil || restarts.Load() != 1 {
			t.Errorf("arrive = %v after %d restarts", err, restarts.Load())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting member was never released")
	}
}

// A member that joins between rounds (a timeline's pod created after a step) is waited for from
// the next round on; the rounds before it ran without it.
func TestRoundsJoin(t *testing.T) {
	ctx := context.Background()
	var ran []int
	r := NewRounds(1, func(_ context.Context, i int) error { ran = append(ran, i); return nil })
	if err := r.Arrive(ctx); err != nil { // the driver alone: round 0 runs at once
		t.Fatal(err)
	}
	r.Join()
	arrived := make(chan error)
	go func() { arrived <- r.Arrive(ctx) }()
	select {
	case <-arrived:
		t.Fatal("round 1 ran before the driver arrived")
	case <-time.After(20 * time.Millisecond):
	}
	if err := r.Arrive(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-arrived; err != nil {
		t.Fatal(err)
	}
	r.Leave(ctx)
	if err := r.Arrive(ctx); err != nil { // the joined member left: the driver alone again
		t.Fatal(err)
	}
	if len(ran) != 3 || ran[0] != 0 || ran[1] != 1 || ran[2] != 2 {
		t.Fatalf("rounds ran %v, want [0 1 2]", ran)
	}
}
