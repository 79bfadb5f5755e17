package report

import (
	"fmt"

	"github.com/onsi/ginkgo/v2/reporters"
	"github.com/onsi/ginkgo/v2/types"
)

// junitConfig keeps a testcase name to the spec's full text ("[emptydir] emptyDir mode 01777 on
// medium Memory, both gates on [target=reference]"), leaves out suite set-up nodes, and keeps
// timelines only for failures so that a run of 3000 cases stays small.
var junitConfig = reporters.JunitReportConfig{
	OmitTimelinesForSpecState: types.SpecStatePassed | types.SpecStateSkipped | types.SpecStatePending,
	OmitSpecLabels:            true,
	OmitLeafNodeType:          true,
	OmitSuiteSetupNodes:       true,
}

// WriteJUnit writes r as a JUnit XML file at path (Ginkgo's generator).
func WriteJUnit(r types.Report, path string) error {
	if err := reporters.GenerateJUnitReportWithConfig(r, path, junitConfig); err != nil {
		return fmt.Errorf("write JUnit report %s: %w", path, err)
	}
	return nil
}
