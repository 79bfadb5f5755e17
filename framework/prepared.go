package framework

import (
	"encoding/json"
	"sync"
	"time"

	"github.com/volperm/volperm/hostfeature"
)

// Prepared keeps what a Batcher observed before the specs ran, one entry per case, until that
// case's Observe takes it: the one prepared-results cache of every batching target (a pair whose
// kubelet half batches or runs cases concurrently, and the cluster and kind targets). A case is
// found by its name and content: a case changed since Prepare is observed again. It remembers how
// long each case's observation took when that is known (ObserveTimer). The zero value is ready.
type Prepared struct {
	mu   sync.Mutex
	kept map[string]Kept
	// took is how long the observation Take last handed out took, by case name.
	took map[string]time.Duration
}

// Kept is what a Batcher observed for one case.
type Kept struct {
	Observation *Observation
	// Err is the target failing for the case (Observe's error).
	Err error
	// Took is how long the observation took, when Timed (a case of a batch has no time of
	// its own).
	Took  time.Duration
	Timed bool
	// Needs are the features of this machine the case needed (HostNeeds), all present.
	Needs []hostfeature.Feature
}

// preparedKey is a case's name and content.
func preparedKey(c *Case) string {
	b, _ := json.Marshal(c)
	return c.Name + "\x00" + string(b)
}

// Reset forgets every case kept (a new Prepare replaces what an earlier one kept).
func (p *Prepared) Reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.kept = nil
}

// Keep keeps k for c until Take.
func (p *Prepared) Keep(c *Case, k Kept) {
	key := preparedKey(c)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.kept == nil {
		p.kept = map[string]Kept{}
	}
	p.kept[key] = k
	RunProgress.Observed(c)
}

// Peek says what is kept for c without handing it out.
func (p *Prepared) Peek(c *Case) (Kept, bool) {
	key := preparedKey(c)
	p.mu.Lock()
	defer p.mu.Unlock()
	k, ok := p.kept[key]
	return k, ok
}

// Take hands out what was kept for c, once; ok is false when nothing was.
func (p *Prepared) Take(c *Case) (Kept, bool) {
	key := preparedKey(c)
	p.mu.Lock()
	defer p.mu.Unlock()
	k, ok := p.kept[key]
	if !ok {
		return Kept{}, false
	}
	delete(p.kept, key)
	if k.Timed {
		p.timed(c, k.Took)
	} else {
		delete(p.took, c.Name)
	}
	return k, true
}

// Timed records how long c's observation took when Observe made it itself.
func (p *Prepared) Timed(c *Case, took time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.timed(c, took)
}

func (p *Prepared) timed(c *Case, took time.Duration) {
	if p.took == nil {
		p.took = map[string]time.Duration{}
	}
	p.took[c.Name] = took
}

// ObserveTime is how long the observation last handed out for c took (ObserveTimer); unknown
// for a case observed in a batch.
func (p *Prepared) ObserveTime(c *Case) (time.Duration, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	d, ok := p.took[c.Name]
	return d, ok
}
