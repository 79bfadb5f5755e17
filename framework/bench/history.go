package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"
)

// The history (docs/bench.md): reports/bench/history.jsonl, one JSON object per `volperm bench`
// run, appended and never rewritten. Fields are only ever added, never renamed nor given
// another meaning: a reader ignores the fields it does not know, and a field an older volperm
// did not write reads as its zero value.

// HistoryEntry is one line of the history: one bench run.
type HistoryEntry struct {
	Date time.Time `json:"date"`
	// Commit is the volperm commit the binary was built from (Commit).
	Commit string `json:"commit"`
	// Dirty: the work tree had changes to tracked files when it was built.
	Dirty       bool                `json:"dirty,omitempty"`
	Machine     Machine             `json:"machine"`
	Runs        int                 `json:"runs"`
	Comparisons []HistoryComparison `json:"comparisons"`
}

// HistoryComparison is one comparison of a run: both sides and B's median over A's.
type HistoryComparison struct {
	Name  string      `json:"name"`
	A     HistorySide `json:"a"`
	B     HistorySide `json:"b"`
	Ratio float64     `json:"ratio"`
	Same  bool        `json:"same"`
}

// HistorySide is one side's figures.
type HistorySide struct {
	Side          string  `json:"side"`
	Cases         int     `json:"cases"`
	MedianSeconds float64 `json:"medianSeconds"`
	CasesPerSec   float64 `json:"casesPerSecond"`
}

// Side returns the side "A" or "B" ("a" and "b" too).
func (c HistoryComparison) Side(letter string) HistorySide {
	if strings.EqualFold(letter, "B") {
		return c.B
	}
	return c.A
}

// Entry is the report as a line of the history, built from commit (with dirty).
func (r *Report) Entry(commit string, dirty bool) HistoryEntry {
	e := HistoryEntry{Date: r.Date, Commit: commit, Dirty: dirty, Machine: r.Machine, Runs: r.Runs}
	side := func(m Measure) HistorySide {
		return HistorySide{Side: m.Side.Name, Cases: m.Cases, MedianSeconds: round(m.MedianSeconds, 6), CasesPerSec: round(m.CasesPerSec, 1)}
	}
	for _, res := range r.Results {
		e.Comparisons = append(e.Comparisons, HistoryComparison{Name: res.Name, A: side(res.A), B: side(res.B), Ratio: round(res.Ratio, 3), Same: res.Same})
	}
	return e
}

func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

// ReadHistory reads the history at path: nothing when there is no file yet. Blank lines are
// skipped; a line that is not a JSON object of the history is an error of one line that names
// the file and the line.
func ReadHistory(path string) ([]HistoryEntry, error) {
	raw, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return parseHistory(path, raw)
}

func parseHistory(path string, raw []byte) ([]HistoryEntry, error) {
	var out []HistoryEntry
	for i, line := range bytes.Split(raw, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var e HistoryEntry
		if err := json.Unmarshal(line, &e); err != nil {
			return nil, fmt.Errorf("%s:%d: not a line of the bench history (%s): %s", path, i+1, oneLine(err.Error()), excerpt(line))
		}
		out = append(out, e)
	}
	return out, nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// excerpt is the start of a bad line, to recognise it by.
func excerpt(line []byte) string {
	s := oneLine(string(line))
	if r := []rune(s); len(r) > 40 {
		s = string(r[:40]) + "..."
	}
	return s
}

// AppendHistory appends e to the history at path as one line, creating the file (and its
// directory) if need be. It only ever appends: a last line left without its newline (a write
// cut short) gets one first, so that e stays a line of its own.
func AppendHistory(path string, e HistoryEntry) error {
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if st, err := f.Stat(); err == nil && st.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, st.Size()-1); err != nil && err != io.EOF {
			f.Close()
			return err
		}
		if last[0] != '\n' {
			line = append([]byte("\n"), line...)
		}
	}
	// One write of the whole line.
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("append to %s: %w", path, err)
	}
	return f.Close()
}

// Commit is the volperm commit a run is recorded with: the VCS revision of the build info
// (go build in a checkout), else the module version (go install ...@v1.2.3), else what git
// says of the checkout the command runs in (git rev-parse HEAD: a test binary, a build with
// -buildvcs=false), else "(devel)". dirty: tracked files had changes.
func Commit() (commit string, dirty bool) {
	bi, _ := debug.ReadBuildInfo()
	return commitFrom(bi, gitHead)
}

// gitHead is `git rev-parse HEAD` where the command runs, and whether tracked files changed.
func gitHead() (string, bool, bool) {
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		return "", false, false
	}
	st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output()
	return strings.TrimSpace(string(out)), err == nil && len(bytes.TrimSpace(st)) > 0, true
}

func commitFrom(bi *debug.BuildInfo, git func() (string, bool, bool)) (string, bool) {
	if bi != nil {
		var rev string
		var dirty bool
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if rev != "" {
			return rev, dirty
		}
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			return v, false
		}
	}
	if git != nil {
		if rev, dirty, ok := git(); ok && rev != "" {
			return rev, dirty
		}
	}
	return "(devel)", false
}

// DefaultSlower is the share by which a median may grow against its last run before the change
// is called out (informational: bench never fails on speed).
const DefaultSlower = 0.20

// MinSlowerSeconds is how many seconds a median must grow by, besides the share, to be called
// out: a median of a few hundredths of a second (the oracle's) moves by more than a fifth from
// the scheduler alone.
const MinSlowerSeconds = 0.05

// Change is one side's median against the last run in the history with the same comparison
// and side.
type Change struct {
	Comparison string
	// Letter is "A" or "B"; Side the side's name in this run.
	Letter, Side string
	Now          HistorySide
	// Found: an earlier run has this comparison and side, Before its figures, in the run
	// BeforeRun (its date, commit and machine).
	Found     bool
	Before    HistorySide
	BeforeRun HistoryEntry
	// OtherMachine words the machine of BeforeRun when it differs from this run's ("4 CPUs,
	// Linux 6.1.0, go1.26.0"); "" when the same or unknown (an older line).
	OtherMachine string
	// Slower: the median grew by more than the threshold (and MinSlowerSeconds).
	Slower bool
}

// Delta is the median's relative change (+0.09: 9% slower).
func (c Change) Delta() float64 {
	if !c.Found || c.Before.MedianSeconds <= 0 {
		return 0
	}
	return c.Now.MedianSeconds/c.Before.MedianSeconds - 1
}

// Changes compares each side of cur with the last entry of history that has the same
// comparison and side (with a median): slower is the share (0.2) beyond which a growth is
// called out.
func Changes(history []HistoryEntry, cur HistoryEntry, slower float64) []Change {
	var out []Change
	for _, c := range cur.Comparisons {
		for _, letter := range []string{"A", "B"} {
			ch := Change{Comparison: c.Name, Letter: letter, Now: c.Side(letter)}
			ch.Side = ch.Now.Side
		search:
			for i := len(history) - 1; i >= 0; i-- {
				for _, p := range history[i].Comparisons {
					if p.Name == c.Name && p.Side(letter).MedianSeconds > 0 {
						ch.Found, ch.Before, ch.BeforeRun = true, p.Side(letter), history[i]
						break search
					}
				}
			}
			if ch.Found {
				grew := ch.Now.MedianSeconds - ch.Before.MedianSeconds
				ch.Slower = grew > slower*ch.Before.MedianSeconds && grew >= MinSlowerSeconds
				if m := ch.BeforeRun.Machine; m.CPUs != 0 && (m.CPUs != cur.Machine.CPUs || m.Kernel != cur.Machine.Kernel || m.Go != cur.Machine.Go) {
					ch.OtherMachine = fmt.Sprintf("%d CPUs, Linux %s, %s", m.CPUs, m.Kernel, m.Go)
				}
			}
			out = append(out, ch)
		}
	}
	return out
}

// String is the change's line: "oracle-vs-reference A: 1.92 s -> 2.10 s (+9%)", and what
// differs besides (the cases, the machine, the side's name).
func (c Change) String() string {
	if !c.Found {
		return fmt.Sprintf("%s %s: %s (no earlier run)", c.Comparison, c.Letter, Seconds(c.Now.MedianSeconds))
	}
	s := fmt.Sprintf("%s %s: %s -> %s (%+.0f%%)", c.Comparison, c.Letter, Seconds(c.Before.MedianSeconds), Seconds(c.Now.MedianSeconds), 100*c.Delta())
	var notes []string
	if c.Before.Cases != 0 && c.Before.Cases != c.Now.Cases {
		notes = append(notes, fmt.Sprintf("cases %d -> %d", c.Before.Cases, c.Now.Cases))
	}
	if c.Before.Side != "" && c.Before.Side != c.Now.Side {
		notes = append(notes, fmt.Sprintf("side was %q", c.Before.Side))
	}
	if c.OtherMachine != "" {
		notes = append(notes, "last run on "+c.OtherMachine)
	}
	if notes != nil {
		s += " [" + strings.Join(notes, "; ") + "]"
	}
	if c.Slower {
		s += "  SLOWER"
	}
	return s
}

// Seconds words a median: three decimals under a second, two above.
func Seconds(x float64) string {
	if x < 1 {
		return fmt.Sprintf("%.3f s", x)
	}
	return fmt.Sprintf("%.2f s", x)
}
