package cluster

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/nodecontrol"
)

func stepsPod(name string, steps ...framework.Step) *probePod {
	return &probePod{name: name, runs: []*caseRun{{c: &framework.Case{Name: name, After: steps}}}}
}

// Pods whose steps are chmods and restarts share a group, whatever their order; any other step,
// a hostPath pod or a pod of several cases runs alone.
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
	want := [][]string{{"a", "b", "c", "d"}, {"e"}, {"host"}}
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

// A step group's histories end together: each pod starts after the group's first restarts its
// case does not name (lateRounds), so that between its start and its observation exactly its
// case's restarts run, and no restart runs after any pod is observed. The pods' part is played
// as runPodIn plays it, on nodecontrol's real rounds.
func TestStepGroupHistories(t *testing.T) {
	chmod := framework.Step{Chmod: &framework.Chmod{Volume: "v", Mode: 0o700}}
	restart := framework.Step{RestartKubelet: true}
	pods := []*probePod{
		stepsPod("R", restart), stepsPod("CR", chmod, restart), stepsPod("RR", restart, restart),
		stepsPod("CRCRR", chmod, restart, chmod, restart, restart), stepsPod("C", chmod),
	}
	late := lateRounds(pods)
	if want := []int{2, 2, 1, 0, 3}; !slices.Equal(late, want) {
		t.Fatalf("late rounds %v, want %v", late, want)
	}
	var (
		mu     sync.Mutex
		events []string
	)
	log := func(e string) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	}
	ctx := context.Background()
	round := nodecontrol.NewRounds(len(pods), func(_ context.Context, i int) error {
		log(fmt.Sprintf("restart %d", i))
		return nil
	})
	var wg sync.WaitGroup
	for i, p := range pods {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range late[i] {
				if err := round.Arrive(ctx); err != nil {
					t.Error(err)
				}
			}
			time.Sleep(time.Duration(i) * time.Millisecond) // a pod start
			log("start " + p.name)
			for _, s := range p.runs[0].c.After {
				if s.RestartKubelet {
					if err := round.Arrive(ctx); err != nil {
						t.Error(err)
					}
				}
			}
			round.Leave(ctx)
			log("observe " + p.name)
		}()
	}
	wg.Wait()
	restarts := 0
	started := map[string]int{}
	for _, e := range events {
		kind, name, _ := strings.Cut(e, " ")
		switch kind {
		case "restart":
			restarts++
		case "start":
			started[name] = restarts
		case "observe":
			if got, want := restarts-started[name], strings.Count(name, "R"); got != want {
				t.Errorf("pod %s lived through %d restarts, its case names %d (events %q)", name, got, want, events)
			}
		}
	}
	if restarts != 3 {
		t.Errorf("events %q: want the group's 3 restarts", events)
	}
	first := slices.IndexFunc(events, func(e string) bool { return strings.HasPrefix(e, "observe") })
	if slices.ContainsFunc(events[first:], func(e string) bool { return strings.HasPrefix(e, "restart") }) {
		t.Errorf("events %q: a restart after an observation", events)
	}
}
