package report

import (
	"fmt"
	"strings"

	"github.com/onsi/ginkgo/v2/types"
)

// LogLine is the run log's line for one spec: verdict, duration, full text and, for a failure
// or a case not run, the first line of the message. It returns "" for specs the run's filters
// left out and for suite nodes.
func LogLine(sr types.SpecReport) string {
	if sr.LeafNodeType != types.NodeTypeIt {
		return ""
	}
	o, msg := classify(sr, false)
	verdict := map[outcome]string{passed: "PASS", failed: "FAIL", skipped: "SKIP"}[o]
	if verdict == "" {
		return ""
	}
	if o == failed && sr.State != types.SpecStateFailed {
		verdict = fmt.Sprintf("FAIL(%s)", sr.State)
	}
	line := fmt.Sprintf("%-8s %7.3fs %s", verdict, sr.RunTime.Seconds(), sr.FullText())
	if msg != "" {
		line += ": " + msg
	}
	return line
}

// LogHead is the run log's first line: the target and how many cases the run has.
func LogHead(target string, cases int) string {
	return fmt.Sprintf("volperm run on target %s: %d cases", target, cases)
}

// LogTail are the run log's last lines: the verdict with the counts, then the timed cases.
func (s *Summary) LogTail() []string {
	out := []string{fmt.Sprintf("%s: %s", strings.ToUpper(s.Result), s.Totals)}
	for _, t := range s.Timings {
		out = append(out, t.TimingLine())
	}
	return out
}
