package report

import (
	"fmt"

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
