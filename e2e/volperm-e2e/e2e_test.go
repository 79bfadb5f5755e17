// volperm-e2e.test is a test binary of the Kubernetes e2e framework holding volperm's suites
// (and nothing else), built and run as upstream's e2e.test is:
//
//	cd e2e && go test -c -o volperm-e2e.test ./volperm-e2e
//	./volperm-e2e.test --kubeconfig K --provider skeleton --report-dir DIR \
//	    --volperm-probe-image volperm/probe:TAG -ginkgo.focus '\[hostpath\]'
//
// A distribution's own e2e binary adds the same two lines to its TestMain and a package of its
// suite (docs/e2e-framework.md).
package volperme2e_test

import (
	"flag"
	"os"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/volperm/volperm/e2e"
)

var _ = volperme2e.Describe()

// TestMain reads the flags as upstream's e2e.test does (test/e2e/e2e_test.go): the framework's
// common and cluster flags and volperm's, then AfterReadingAllFlags, which previews the spec
// tree (building volperm's target), checks it and creates --report-dir.
func TestMain(m *testing.M) {
	framework.RegisterCommonFlags(flag.CommandLine)
	framework.RegisterClusterFlags(flag.CommandLine)
	volperme2e.RegisterFlags(flag.CommandLine)
	flag.Parse()
	framework.AfterReadingAllFlags(&framework.TestContext)
	os.Exit(m.Run())
}

// TestE2E runs the suite as upstream's RunE2ETests does: the framework's fail handler and Ginkgo
// configuration (its junit_01.xml is written into --report-dir by AfterReadingAllFlags's hook).
func TestE2E(t *testing.T) {
	gomega.RegisterFailHandler(framework.Fail)
	suiteConfig, reporterConfig := framework.CreateGinkgoConfig()
	ginkgo.RunSpecs(t, "volperm e2e suite", suiteConfig, reporterConfig)
}
