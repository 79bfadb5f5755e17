package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"
)

var (
	day1 = time.Date(2026, 11, 25, 11, 50, 5, 0, time.UTC)
	day2 = day1.Add(24 * time.Hour)
	day3 = day2.Add(24 * time.Hour)
	here = Machine{CPUs: 2, MemoryGB: 24, Kernel: "6.18.44", Go: "go1.26.8"}
)

// run is a history entry of comparisons given as name, A's median, B's median.
func run(date time.Time, comps ...any) HistoryEntry {
	e := HistoryEntry{Date: date, Commit: strings.Repeat("a", 40), Machine: here, Runs: 1}
	for i := 0; i+2 < len(comps); i += 3 {
		a, b := comps[i+1].(float64), comps[i+2].(float64)
		c := HistoryComparison{Name: comps[i].(string), Same: true,
			A: HistorySide{Side: "side a", Cases: 10, MedianSeconds: a}, B: HistorySide{Side: "side b", Cases: 10, MedianSeconds: b}}
		if a > 0 {
			c.Ratio = b / a
		}
		e.Comparisons = append(e.Comparisons, c)
	}
	return e
}

const currentLine = `{"date":"2026-11-25T11:50:05Z","commit":"3181401a","machine":{"cpus":2,"memoryGiB":24,"kernel":"6.18.44","go":"go1.26.8"},"runs":3,` +
	`"comparisons":[{"name":"oracle-vs-reference","a":{"side":"oracle","cases":3712,"medianSeconds":0.0379,"casesPerSecond":98027.6},` +
	`"b":{"side":"reference","cases":3712,"medianSeconds":2.2533,"casesPerSecond":1647.3},"ratio":59.5,"same":true}]}`

// An older volperm's line: no commit, machine nor cases/s, and fields this one does not know.
const olderLine = `{"date":"2026-10-01T08:00:00Z","host":"ci-1","runs":1,"comparisons":[{"name":"oracle-vs-reference","sample":"all",` +
	`"a":{"side":"oracle","cases":3000,"medianSeconds":0.03,"p90":0.05},"b":{"side":"reference","cases":3000,"medianSeconds":2.5}}]}`

func TestBenchReadHistory(t *testing.T) {
	for _, tc := range []struct {
		name    string
		content *string // nil: no file
		want    []string
		wantErr []string // substrings of the one-line error
	}{
		{name: "no file yet"},
		{name: "empty file", content: ptr("")},
		{name: "one line", content: ptr(currentLine + "\n"), want: []string{"2026-11-25 3181401a 2 oracle-vs-reference 0.0379 2.2533 98027.6"}},
		{name: "older line, unknown fields ignored", content: ptr(olderLine + "\n" + currentLine + "\n"),
			want: []string{"2026-10-01  0 oracle-vs-reference 0.03 2.5 0", "2026-11-25 3181401a 2 oracle-vs-reference 0.0379 2.2533 98027.6"}},
		{name: "blank lines, CRLF, no last newline", content: ptr("\n" + olderLine + "\r\n\n  \n" + currentLine),
			want: []string{"2026-10-01  0 oracle-vs-reference 0.03 2.5 0", "2026-11-25 3181401a 2 oracle-vs-reference 0.0379 2.2533 98027.6"}},
		{name: "a line with no comparison", content: ptr(`{"date":"2026-11-25T11:50:05Z"}` + "\n"), want: []string{"2026-11-25  0"}},
		{name: "corrupt third line", content: ptr(olderLine + "\n" + currentLine + "\n" + `{"date":"2026-11-26T10:00:00Z","comparisons":[{"name":"x"` + "\n" + currentLine + "\n"),
			wantErr: []string{"history.jsonl:3: not a line of the bench history", "unexpected end of JSON input", `: {"date":"2026-11-26T10:00:00Z","comparis...`}},
		{name: "merge conflict marker", content: ptr(currentLine + "\n<<<<<<< HEAD\n" + currentLine + "\n"),
			wantErr: []string{"history.jsonl:2: not a line of the bench history", ": <<<<<<< HEAD"}},
		{name: "not an object", content: ptr("[1, 2]\n"), wantErr: []string{"history.jsonl:1:", "cannot unmarshal array"}},
		{name: "a field of another type", content: ptr(`{"date":"2026-11-25T11:50:05Z","runs":"three"}` + "\n"), wantErr: []string{"history.jsonl:1:", "runs"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "history.jsonl")
			if tc.content != nil {
				if err := os.WriteFile(path, []byte(*tc.content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			h, err := ReadHistory(path)
			if tc.wantErr != nil {
				if err == nil {
					t.Fatalf("no error, read %+v", h)
				}
				msg := err.Error()
				if strings.Contains(msg, "\n") || !strings.HasPrefix(msg, path+":") {
					t.Errorf("error %q: want one line that starts with the file and line", msg)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(msg, w) {
						t.Errorf("error %q lacks %q", msg, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range h {
				got = append(got, summary(e))
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("read\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func ptr(s string) *string { return &s }

// summary is what the read test compares: date, commit, CPUs, and the first comparison.
func summary(e HistoryEntry) string {
	s := e.Date.Format("2006-01-02") + " " + e.Commit + " " + itoa(e.Machine.CPUs)
	if len(e.Comparisons) > 0 {
		c := e.Comparisons[0]
		s += " " + c.Name + " " + ftoa(c.A.MedianSeconds) + " " + ftoa(c.B.MedianSeconds) + " " + ftoa(c.A.CasesPerSec)
	}
	return s
}

// The history only grows: what was there stays byte for byte, the new run is one line after it.
func TestBenchAppendHistory(t *testing.T) {
	for _, tc := range []struct {
		name    string
		before  *string
		wantSep string // what is written between the old content and the new line
	}{
		{name: "no file: created with its directory"},
		{name: "after a line", before: ptr(currentLine + "\n")},
		{name: "after an older line", before: ptr(olderLine + "\n")},
		{name: "after a line without its newline", before: ptr(currentLine), wantSep: "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "reports", "bench", "history.jsonl")
			old := ""
			if tc.before != nil {
				old = *tc.before
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for i, e := range []HistoryEntry{run(day2, "oracle-vs-reference", 0.04, 2.1), run(day3, "oracle-vs-reference", 0.05, 2.2)} {
				if err := AppendHistory(path, e); err != nil {
					t.Fatal(err)
				}
				raw, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.HasPrefix(string(raw), old+tc.wantSep) || !strings.HasSuffix(string(raw), "\n") {
					t.Fatalf("append %d rewrote the history or left no newline:\n%s", i+1, raw)
				}
				added := strings.TrimPrefix(string(raw), old+tc.wantSep)
				if strings.Count(added, "\n") != i+1 {
					t.Errorf("append %d: %d new lines, want %d:\n%s", i+1, strings.Count(added, "\n"), i+1, added)
				}
				h, err := ReadHistory(path)
				if err != nil {
					t.Fatal(err)
				}
				if got := h[len(h)-1]; !got.Date.Equal(e.Date) || got.Comparisons[0].B.MedianSeconds != e.Comparisons[0].B.MedianSeconds || got.Commit != e.Commit {
					t.Errorf("append %d: read back %+v, want %+v", i+1, got, e)
				}
			}
		})
	}
}

func TestBenchChanges(t *testing.T) {
	other := run(day1, "oracle-vs-reference", 0.04, 2.0)
	other.Machine = Machine{CPUs: 8, Kernel: "6.1.0", Go: "go1.26.0"}
	older := run(day1, "oracle-vs-reference", 0.04, 2.0)
	older.Machine = Machine{} // a line of an older volperm: no machine
	fewer := run(day1, "helpers-vs-one-shot", 0.05, 2.0)
	fewer.Comparisons[0].A.Cases = 40
	fewer.Comparisons[0].B.Cases = 0 // an older line without cases
	renamed := run(day1, "helpers-vs-one-shot", 0.05, 2.0)
	renamed.Comparisons[0].B.Side = "reference, one-shot"
	for _, tc := range []struct {
		name    string
		history []HistoryEntry
		cur     HistoryEntry
		want    []string
	}{
		{"no history", nil, run(day2, "oracle-vs-reference", 0.04, 2.1),
			[]string{"oracle-vs-reference A: 0.040 s (no earlier run)", "oracle-vs-reference B: 2.10 s (no earlier run)"}},
		{"the last run, not an older one", []HistoryEntry{run(day1, "oracle-vs-reference", 0.05, 1.0), run(day2, "oracle-vs-reference", 0.04, 1.92)}, run(day3, "oracle-vs-reference", 0.04, 2.1),
			[]string{"oracle-vs-reference A: 0.040 s -> 0.040 s (+0%)", "oracle-vs-reference B: 1.92 s -> 2.10 s (+9%)"}},
		{"the last run with this comparison", []HistoryEntry{run(day1, "served-vs-per-call", 3.0, 19.0), run(day2, "oracle-vs-reference", 0.04, 2.0)}, run(day3, "served-vs-per-call", 3.0, 25.0),
			[]string{"served-vs-per-call A: 3.00 s -> 3.00 s (+0%)", "served-vs-per-call B: 19.00 s -> 25.00 s (+32%)  SLOWER"}},
		{"a side without a median is skipped", []HistoryEntry{run(day1, "served-vs-per-call", 3.0, 19.0), run(day2, "served-vs-per-call", 0.0, 20.0)}, run(day3, "served-vs-per-call", 3.3, 20.0),
			[]string{"served-vs-per-call A: 3.00 s -> 3.30 s (+10%)", "served-vs-per-call B: 20.00 s -> 20.00 s (+0%)"}},
		{"faster", []HistoryEntry{run(day1, "tmpfs-vs-disk-roots", 2.0, 13.0)}, run(day2, "tmpfs-vs-disk-roots", 1.0, 12.9),
			[]string{"tmpfs-vs-disk-roots A: 2.00 s -> 1.00 s (-50%)", "tmpfs-vs-disk-roots B: 13.00 s -> 12.90 s (-1%)"}},
		{"exactly the threshold is not slower", []HistoryEntry{run(day1, "tmpfs-vs-disk-roots", 2.0, 10.0)}, run(day2, "tmpfs-vs-disk-roots", 2.4, 12.01),
			[]string{"tmpfs-vs-disk-roots A: 2.00 s -> 2.40 s (+20%)", "tmpfs-vs-disk-roots B: 10.00 s -> 12.01 s (+20%)  SLOWER"}},
		{"a tiny median's jitter is not slower", []HistoryEntry{run(day1, "oracle-vs-reference", 0.030, 2.0)}, run(day2, "oracle-vs-reference", 0.045, 2.0),
			[]string{"oracle-vs-reference A: 0.030 s -> 0.045 s (+50%)", "oracle-vs-reference B: 2.00 s -> 2.00 s (+0%)"}},
		{"another machine", []HistoryEntry{other}, run(day2, "oracle-vs-reference", 0.04, 3.0),
			[]string{"oracle-vs-reference A: 0.040 s -> 0.040 s (+0%) [last run on 8 CPUs, Linux 6.1.0, go1.26.0]",
				"oracle-vs-reference B: 2.00 s -> 3.00 s (+50%) [last run on 8 CPUs, Linux 6.1.0, go1.26.0]  SLOWER"}},
		{"an older line without a machine", []HistoryEntry{older}, run(day2, "oracle-vs-reference", 0.04, 2.0),
			[]string{"oracle-vs-reference A: 0.040 s -> 0.040 s (+0%)", "oracle-vs-reference B: 2.00 s -> 2.00 s (+0%)"}},
		{"other cases", []HistoryEntry{fewer}, run(day2, "helpers-vs-one-shot", 0.05, 2.0),
			[]string{"helpers-vs-one-shot A: 0.050 s -> 0.050 s (+0%) [cases 40 -> 10]", "helpers-vs-one-shot B: 2.00 s -> 2.00 s (+0%)"}},
		{"a side renamed", []HistoryEntry{renamed}, run(day2, "helpers-vs-one-shot", 0.05, 2.0),
			[]string{"helpers-vs-one-shot A: 0.050 s -> 0.050 s (+0%)", `helpers-vs-one-shot B: 2.00 s -> 2.00 s (+0%) [side was "reference, one-shot"]`}},
		{"two comparisons", []HistoryEntry{run(day1, "oracle-vs-reference", 0.04, 2.0, "batched-vs-per-case", 2.0, 14.0)},
			run(day2, "batched-vs-per-case", 1.9, 13.9, "oracle-vs-reference", 0.04, 2.0),
			[]string{"batched-vs-per-case A: 2.00 s -> 1.90 s (-5%)", "batched-vs-per-case B: 14.00 s -> 13.90 s (-1%)",
				"oracle-vs-reference A: 0.040 s -> 0.040 s (+0%)", "oracle-vs-reference B: 2.00 s -> 2.00 s (+0%)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, c := range Changes(tc.history, tc.cur, DefaultSlower) {
				got = append(got, c.String())
				if c.Slower != strings.HasSuffix(c.String(), "SLOWER") {
					t.Errorf("%s: Slower %v", c, c.Slower)
				}
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("changes\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestBenchCommit(t *testing.T) {
	git := func(rev string, dirty bool) func() (string, bool, bool) {
		return func() (string, bool, bool) { return rev, dirty, rev != "" }
	}
	rev := strings.Repeat("3181401a", 5)
	for _, tc := range []struct {
		name      string
		bi        *debug.BuildInfo
		git       func() (string, bool, bool)
		want      string
		wantDirty bool
	}{
		{"go build in a checkout", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "false"}}},
			git("ffff", true), rev, false},
		{"a modified checkout", &debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "true"}}}, nil, rev, true},
		{"go install of a version", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, git(rev, false), "v1.2.3", false},
		{"a test binary in a checkout", &debug.BuildInfo{}, git(rev, true), rev, true},
		{"no build info, in a checkout", nil, git(rev, false), rev, false},
		{"no revision anywhere", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, git("", false), "(devel)", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, dirty := commitFrom(tc.bi, tc.git)
			if got != tc.want || dirty != tc.wantDirty {
				t.Errorf("commit %q dirty %v, want %q %v", got, dirty, tc.want, tc.wantDirty)
			}
		})
	}
}

func TestBenchReportEntry(t *testing.T) {
	r := &Report{Date: day1, Machine: here, Runs: 3, Results: []Result{{Name: "oracle-vs-reference", Ratio: 59.51234, Same: true,
		A: Measure{Side: Side{Name: "oracle"}, Cases: 3712, MedianSeconds: 0.037866868, CasesPerSec: 98027.6478107458},
		B: Measure{Side: Side{Name: "reference", Target: "reference"}, Cases: 3712, MedianSeconds: 2.253311075, CasesPerSec: 1647.34}}}}
	e := r.Entry("abc", true)
	want := HistoryEntry{Date: day1, Commit: "abc", Dirty: true, Machine: here, Runs: 3, Comparisons: []HistoryComparison{{Name: "oracle-vs-reference", Ratio: 59.512, Same: true,
		A: HistorySide{Side: "oracle", Cases: 3712, MedianSeconds: 0.037867, CasesPerSec: 98027.6},
		B: HistorySide{Side: "reference", Cases: 3712, MedianSeconds: 2.253311, CasesPerSec: 1647.3}}}}
	if summary(e) != summary(want) || e.Comparisons[0] != want.Comparisons[0] || e.Dirty != want.Dirty || e.Runs != want.Runs {
		t.Errorf("entry %+v\nwant %+v", e, want)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func itoas(xs []int) string { return fmt.Sprint(xs) }
