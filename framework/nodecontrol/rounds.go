package nodecontrol

import (
	"context"
	"sync"
)

// Rounds make a node-wide step that several pods' cases name (a kubelet restart, gate write or
// kubelet release: it acts on every pod of the node) happen once for all of them: round i's step
// runs when every member has arrived at it (or left), once, run by the last to arrive, and each
// arrival returns its error. Step groups (framework/cluster stepgroups.go: every round a
// restart) and timelines (framework/cluster timeline.go: round i the history's i-th kubelet
// step, the timeline's driver a member too; HistoryPod) are both made of rounds.
type Rounds struct {
	step func(ctx context.Context, i int) error

	mu      sync.Mutex
	members int
	arrived int
	fired   int
	current *round
}

// round is one step of rounds: done is closed once it has run, with err.
type round struct {
	done chan struct{}
	err  error
}

// NewRounds are rounds of members members, round i running step(i).
func NewRounds(members int, step func(ctx context.Context, i int) error) *Rounds {
	return &Rounds{step: step, members: members, current: &round{done: make(chan struct{})}}
}

// Join adds a member, who arrives next at the round that has not run yet.
func (r *Rounds) Join() {
	r.mu.Lock()
	r.members++
	r.mu.Unlock()
}

// Arrive waits until the current round's step has run (the last member to arrive runs it) and
// returns its error; ctx ending returns at once (the round still runs for the others).
func (r *Rounds) Arrive(ctx context.Context) error {
	r.mu.Lock()
	r.arrived++
	cur := r.current
	if r.arrived == r.members {
		r.fire(ctx) // unlocks
	} else {
		r.mu.Unlock()
	}
	select {
	case <-cur.done:
		return cur.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Leave takes a member out (its pod did not run, failed a step, or is done with its steps): when
// the others are all waiting, their round runs now. A nil r (a pod alone) has nothing to leave.
func (r *Rounds) Leave(ctx context.Context) {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.members--
	if r.arrived > 0 && r.arrived == r.members {
		r.fire(ctx) // unlocks
		return
	}
	r.mu.Unlock()
}

// fire runs the current round's step with the lock released, after starting the next round.
// Called with r.mu held; returns with it released.
func (r *Rounds) fire(ctx context.Context) {
	cur, i := r.current, r.fired
	r.arrived = 0
	r.fired++
	r.current = &round{done: make(chan struct{})}
	r.mu.Unlock()
	cur.err = r.step(context.WithoutCancel(ctx), i)
	close(cur.done)
}
