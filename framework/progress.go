package framework

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// Progress counts the cases a run has observed so far, per area, as each one finishes: a batch
// observes a whole area before its specs report (Prepared), so Ginkgo's dot per spec comes only
// after the batch, and a long run showed nothing for minutes (issue 52). Every observation kept
// for a spec (Prepared.Keep) counts; a target that does not batch observes each case in its
// spec, and Ginkgo's dot shows it.
type Progress struct {
	mu    sync.Mutex
	start time.Time
	total map[Area]int
	done  map[Area]int
	first map[Area]time.Time
	last  map[Area]time.Time
	area  Area // the area observed most recently
}

// RunProgress is the process's run's progress (cmd/volperm run prints it).
var RunProgress Progress

// Start resets p for a run of cases.
func (p *Progress) Start(cases []*Case) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.start = time.Now()
	p.total, p.done = map[Area]int{}, map[Area]int{}
	p.first, p.last = map[Area]time.Time{}, map[Area]time.Time{}
	p.area = ""
	for _, c := range cases {
		p.total[c.Area]++
	}
}

// Observed counts one observation of c.
func (p *Progress) Observed(c *Case) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done == nil {
		return // no run started: a test, or mutation's own loop
	}
	now := time.Now()
	if _, ok := p.first[c.Area]; !ok {
		p.first[c.Area] = now
	}
	p.last[c.Area] = now
	p.done[c.Area]++
	p.area = c.Area
}

// Line is the progress in one line: "1,234 of 4,275 cases observed in 12 s (emptydir 1,200 of
// 3,153)".
func (p *Progress) Line() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	done, total := 0, 0
	for a, n := range p.total {
		total += n
		done += min(p.done[a], n)
	}
	l := fmt.Sprintf("%d of %d cases observed in %s", done, total, time.Since(p.start).Round(time.Second))
	if p.area != "" {
		l += fmt.Sprintf(" (%s %d of %d)", p.area, min(p.done[p.area], p.total[p.area]), p.total[p.area])
	}
	return l
}

// Slowest names the areas that took longest, from their first observation to their last, the
// longest first, at most n: "the slowest areas: emptydir 3153 cases in 5.2s, atomicwriter 392
// cases in 1.1s". A target that observes the areas together (a cluster prepares the whole run as
// one batch: every area's cases spread over all of it) has no slowest area: then it says so,
// "the areas were observed together: 733 cases of 9 areas in 5m52.6s". "" before any observation.
func (p *Progress) Slowest(n int) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	type took struct {
		a Area
		d time.Duration
	}
	var all []took
	var sum time.Duration
	var first, last time.Time
	cases := 0
	for a, f := range p.first {
		d := p.last[a].Sub(f)
		all = append(all, took{a, d})
		sum += d
		cases += p.done[a]
		if first.IsZero() || f.Before(first) {
			first = f
		}
		if p.last[a].After(last) {
			last = p.last[a]
		}
	}
	if len(all) == 0 {
		return ""
	}
	// Areas one after the other span the run once; areas observed together each span most of
	// it (seen on kind: 9 areas, each 5m52.6s of a 5m52.6s batch).
	if span := last.Sub(first); len(all) > 1 && span > 0 && float64(sum) > 1.5*float64(span) {
		return fmt.Sprintf("the areas were observed together: %d cases of %d areas in %s", cases, len(all), span.Round(100*time.Millisecond))
	}
	sort.Slice(all, func(i, j int) bool { return all[i].d > all[j].d || all[i].d == all[j].d && all[i].a < all[j].a })
	var parts []string
	for _, t := range all[:min(n, len(all))] {
		parts = append(parts, fmt.Sprintf("%s %d cases in %s", t.a, p.done[t.a], t.d.Round(100*time.Millisecond)))
	}
	return "the slowest areas: " + strings.Join(parts, ", ")
}
