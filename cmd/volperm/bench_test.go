package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/volperm/volperm/framework/bench"
	"github.com/volperm/volperm/framework/caseroot/caseroottest"
)

// An earlier run of oracle-vs-reference, as an older volperm wrote it (a field this one does
// not know, no machine), with medians no run of the catalogue comes near: A far slower than
// any run (so now -100%), B far faster (so now called out as slower, by a factor of thousands:
// no claim on speed). Neither changes the exit code.
const earlierRun = `{"date":"2026-11-25T11:50:05Z","commit":"3181401a","host":"old","runs":3,"comparisons":[{"name":"oracle-vs-reference",` +
	`"a":{"side":"oracle","cases":3712,"medianSeconds":1000000},"b":{"side":"reference","cases":3712,"medianSeconds":0.000001}}]}` + "\n"

// volperm bench appends its run to the history, prints each median against the last run, and
// redraws the plot; a history with a bad line stops it before it runs anything. One run of
// the reference target on the catalogue.
func TestBenchHistoryCommand(t *testing.T) {
	for _, tc := range []struct {
		name     string
		history  string
		wantCode int
		wantOut  []string
		wantErr  []string
	}{
		{name: "after an earlier run", history: earlierRun, wantCode: exitOK, wantOut: []string{
			"| oracle-vs-reference |",
			"Change of each median against the last run in ",
			"  oracle-vs-reference A: 1000000.00 s -> ", "(-100%)",
			"  oracle-vs-reference B: 0.000 s -> ",
			"SLOWER by more than 20% (and 0.05 s) than in its last run (informational; the exit code stays 0):\n  oracle-vs-reference B (reference) 0.000 s -> ",
			"since the run of 2026-11-25 at 3181401a",
			"history.jsonl (a line appended)", "history.svg"}},
		{name: "a bad line", history: earlierRun + "{\"date\":\n", wantCode: exitFailed,
			wantErr: []string{"history.jsonl:2: not a line of the bench history", `{"date":`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			history := filepath.Join(dir, "bench", "history.jsonl")
			if err := os.MkdirAll(filepath.Dir(history), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(history, []byte(tc.history), 0o644); err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := runMain("bench", "--compare", "oracle-vs-reference", "--runs", "1", "--report-dir", dir,
				"--history", history, "--work-dir", caseroottest.TempDir(t))
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.wantCode, stdout, stderr)
			}
			for _, w := range tc.wantOut {
				if !strings.Contains(stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout)
				}
			}
			raw, err := os.ReadFile(history)
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantErr != nil {
				if stdout != "" || strings.Count(stderr, "\n") != 1 {
					t.Errorf("want one line on stderr and nothing on stdout; stdout %q, stderr %q", stdout, stderr)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(stderr, w) {
						t.Errorf("stderr %q lacks %q", stderr, w)
					}
				}
				if string(raw) != tc.history {
					t.Errorf("a bench that failed changed the history:\n%s", raw)
				}
				return
			}
			if !strings.HasPrefix(string(raw), tc.history) {
				t.Errorf("the history was rewritten:\n%s", raw)
			}
			h, err := bench.ReadHistory(history)
			if err != nil || len(h) != 2 {
				t.Fatalf("history: %d entries (%v), want 2", len(h), err)
			}
			last := h[1]
			if c := last.Comparisons; len(c) != 1 || c[0].Name != "oracle-vs-reference" || c[0].B.Cases == 0 || c[0].B.MedianSeconds <= 0 || last.Commit == "" || last.Machine.CPUs == 0 {
				t.Errorf("the run's line: %+v", last)
			}
			svg, err := os.ReadFile(filepath.Join(dir, "bench", "history.svg"))
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(string(svg), "<polyline"); n != 2 {
				t.Errorf("the plot has %d polylines, want 2 (A and B of oracle-vs-reference)", n)
			}
		})
	}
}

// --replot redraws the plot from the history and runs nothing; a bad line fails it the same way.
func TestBenchReplot(t *testing.T) {
	for _, tc := range []struct {
		name     string
		history  string
		args     []string
		wantCode int
		wantOut  string
		wantErr  string
	}{
		{"two runs", earlierRun + earlierRun, nil, exitOK, "history.svg: drawn from ", ""},
		{"two runs counted", earlierRun + earlierRun, nil, exitOK, "(runs: 2)", ""},
		{"no history yet", "", nil, exitOK, "(runs: 0)", ""},
		{"a bad line", earlierRun + "<<<<<<< HEAD\n", nil, exitFailed, "", "history.jsonl:2: not a line of the bench history"},
		{"no history file", earlierRun, []string{"--history", ""}, exitUsage, "", "--replot needs --history"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			history := filepath.Join(t.TempDir(), "history.jsonl")
			if tc.history != "" {
				if err := os.WriteFile(history, []byte(tc.history), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			code, stdout, stderr := runMain(append([]string{"bench", "--replot", "--history", history}, tc.args...)...)
			if code != tc.wantCode || !strings.Contains(stdout, tc.wantOut) || !strings.Contains(stderr, tc.wantErr) {
				t.Fatalf("exit %d, stdout %q, stderr %q: want %d, %q, %q", code, stdout, stderr, tc.wantCode, tc.wantOut, tc.wantErr)
			}
			svg, err := os.ReadFile(strings.TrimSuffix(history, ".jsonl") + ".svg")
			if tc.wantCode != exitOK {
				if err == nil {
					t.Error("a failed --replot wrote a plot")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := 0 // one comparison, a polyline per side, whatever the runs
			if tc.history != "" {
				want = 2
			}
			if n := strings.Count(string(svg), "<polyline"); n != want {
				t.Errorf("%d polylines, want %d", n, want)
			}
		})
	}
}

// What bench prints after its table: a line per median, then the ones called out, or a line
// that says none was.
func TestBenchPrintChanges(t *testing.T) {
	day1 := time.Date(2026, 11, 25, 11, 50, 5, 0, time.UTC)
	entry := func(load float64, a, b float64) bench.HistoryEntry {
		return bench.HistoryEntry{Date: day1, Commit: "3181401a", Machine: bench.Machine{CPUs: 2, Kernel: "6.18", Go: "go1.26.8", Load: load},
			Comparisons: []bench.HistoryComparison{{Name: "served-vs-per-call",
				A: bench.HistorySide{Side: "exec, served", Cases: 271, MedianSeconds: a}, B: bench.HistorySide{Side: "exec, per call", Cases: 271, MedianSeconds: b}}}}
	}
	for _, tc := range []struct {
		name    string
		history []bench.HistoryEntry
		now     bench.HistoryEntry
		want    string
	}{
		{"no history", nil, entry(0.5, 3.03, 18.97), `
Change of each median against the last run in h.jsonl with the same comparison and side:
  served-vs-per-call A: 3.03 s (no earlier run)
  served-vs-per-call B: 18.97 s (no earlier run)
No median grew by more than 20% (and 0.05 s) since its last run.
`},
		{"one slower", []bench.HistoryEntry{entry(0.5, 3.03, 18.97)}, entry(8.7, 3.10, 25.00), `
Change of each median against the last run in h.jsonl with the same comparison and side:
  served-vs-per-call A: 3.03 s -> 3.10 s (+2%)
  served-vs-per-call B: 18.97 s -> 25.00 s (+32%)  SLOWER
SLOWER by more than 20% (and 0.05 s) than in its last run (informational; the exit code stays 0):
  served-vs-per-call B (exec, per call) 18.97 s -> 25.00 s, +32% since the run of 2026-11-25 at 3181401a (load average 0.5 then, 8.7 now)
`},
		{"no load known then", []bench.HistoryEntry{entry(0, 3.03, 18.97)}, entry(8.7, 4.0, 18.0), `
Change of each median against the last run in h.jsonl with the same comparison and side:
  served-vs-per-call A: 3.03 s -> 4.00 s (+32%)  SLOWER
  served-vs-per-call B: 18.97 s -> 18.00 s (-5%)
SLOWER by more than 20% (and 0.05 s) than in its last run (informational; the exit code stays 0):
  served-vs-per-call A (exec, served) 3.03 s -> 4.00 s, +32% since the run of 2026-11-25 at 3181401a
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			printChanges(streams{out: &out, err: &errb}, "h.jsonl", tc.now, bench.Changes(tc.history, tc.now, bench.DefaultSlower), 100*bench.DefaultSlower)
			if out.String() != tc.want || errb.Len() != 0 {
				t.Errorf("printed\n%s\nwant\n%s\n(stderr %q)", out.String(), tc.want, errb.String())
			}
		})
	}
}
