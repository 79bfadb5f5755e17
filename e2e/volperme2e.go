// Package volperme2e adds volperm's suites to a test binary of the Kubernetes e2e framework
// (k8s.io/kubernetes/test/e2e/framework), the way distributions keep their own e2e.test: one
// import, RegisterFlags beside the framework's flags and `var _ = volperme2e.Describe()`. The
// cases run on the cluster of the framework's TestContext (--kubeconfig, --context) through
// volperm's cluster target, in namespaces labelled as the framework labels its own (e2e-run,
// e2e-framework); a failed case dumps its node as the framework dumps on failure
// (--dump-logs-on-failure), the framework writes junit_01.xml into --report-dir, and volperm
// writes its own reports beside it (<report-dir>/volperm). volperm-e2e/ is such a binary,
// built as volperm-e2e.test (docs/e2e-framework.md).
//
// This is its own Go module, so that volperm's core module stays free of k8s.io/kubernetes.
package volperme2e

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	"k8s.io/kubernetes/test/e2e/framework"
	e2edebug "k8s.io/kubernetes/test/e2e/framework/debug"

	vpframework "github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/catalogue"
	"github.com/volperm/volperm/framework/certify"
	"github.com/volperm/volperm/framework/cluster"
	"github.com/volperm/volperm/framework/report"
	_ "github.com/volperm/volperm/framework/targets/cluster" // registers the cluster target
	"github.com/volperm/volperm/suites"
)

// ContainerText is the text of the container holding volperm's specs, as the framework's
// SIGDescribe("storage") makes it: every spec's full name starts with it ("[sig-storage]
// volperm [emptydir] <case> [target=cluster]"), and -ginkgo.focus='\[sig-storage\] volperm'
// selects them all. Its specs are labelled sig-storage, as the framework labels a SIG's.
const ContainerText = "[sig-" + sig + "] " + name

const (
	sig  = "storage"
	name = "volperm"
)

// ReportSubdir is where, inside the framework's --report-dir, volperm writes its own reports
// (junit.xml, summary.md, summary.json of volperm's specs only).
const ReportSubdir = "volperm"

// flags are volperm's own flags (RegisterFlags); the cluster comes from the framework's.
var flags struct {
	probeImage, profiles, nodes string
	implementation, claims      string
	everyNode                   bool
}

// RegisterFlags registers volperm's flags on fs (flag.CommandLine in a test binary), beside the
// framework's (framework.RegisterCommonFlags, RegisterClusterFlags). Call it before flag.Parse.
func RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&flags.probeImage, "volperm-probe-image", "", "volperm's probe image, already on every node (volperm image save, then load it); required")
	fs.StringVar(&flags.profiles, "volperm-profile", string(vpframework.ProfileConformance), "volperm profiles to run, comma-separated ("+vpframework.ProfileList()+")")
	fs.StringVar(&flags.nodes, "volperm-nodes", "", "label selector of the nodes volperm's cases run on (default every Ready, schedulable Linux node)")
	fs.BoolVar(&flags.everyNode, "volperm-every-node", false, "run each volperm case on every node, not on one node of every pool")
	fs.StringVar(&flags.implementation, "volperm-implementation", "", "a YAML file naming the implementation certified (vendor, product, version, contact): writes volperm's conformance-report.yaml into <report-dir>/volperm (docs/certify.md)")
	fs.StringVar(&flags.claims, "volperm-claim", "", "optional features the implementation claims, comma-separated: their cases are required (docs/certify.md)")
}

// run is what the suites run, built once per process at the first tree construction (the
// framework's AfterReadingAllFlags previews the specs, then RunSpecs builds the tree again).
var run = sync.OnceValues(newConfig)

// Describe registers volperm's suites under "[sig-storage] volperm" and, at the top level of the
// suite, closes volperm's target after the suite and writes volperm's reports. Call it once, at
// package level of the test binary: var _ = volperme2e.Describe(). When Ginkgo's focus, skip
// and label filter select none of volperm's cases, volperm registers no spec and needs neither
// its flags nor the cluster (a distribution's binary running its own tests); when they select
// some and the cluster target cannot be built, the binary exits 1 saying why, as the framework
// does for its own flags.
func Describe() bool {
	ginkgo.AfterSuite(func() {
		if cfg, err := run(); err == nil && cfg != nil {
			framework.ExpectNoError(cfg.Target.Close(), "volperm: close the cluster target")
		}
	})
	ginkgo.ReportAfterSuite("volperm reports", writeReports)
	return framework.SIGDescribe(sig)(name, func() {
		cfg, err := run()
		if err != nil {
			fmt.Fprintf(os.Stderr, "ERROR: %v\n", err)
			framework.Exit(1)
			return
		}
		if cfg == nil {
			return // none of volperm's cases is selected
		}
		ginkgo.JustAfterEach(dumpOnFailure)
		suites.Describe(cfg)
	})
}

// newConfig builds the cluster target on the framework's cluster and picks the cases: the
// --volperm-profile ones that Ginkgo's focus, skip and label filter select, so that an area's
// batch prepares only what will run. It is nil when they select none.
func newConfig() (*suites.Config, error) {
	profiles, err := parseProfiles(flags.profiles)
	if err != nil {
		return nil, err
	}
	certifyCfg, err := certifyConfig()
	if err != nil {
		return nil, err
	}
	all := catalogue.All()
	cases := slices.DeleteFunc(slices.Clone(all), func(c *vpframework.Case) bool { return !slices.Contains(profiles, c.Profile) })
	sc, _ := ginkgo.GinkgoConfiguration()
	if wanted, err := selectCases(cases, cluster.Name, sc); err != nil || len(wanted) == 0 {
		return nil, err
	}
	if flags.probeImage == "" {
		return nil, errors.New("volperm: no probe image: pass --volperm-probe-image IMAGE (volperm image save writes one; load it on every node), or leave volperm's specs out (-ginkgo.skip 'volperm')")
	}
	nsLabels := fmt.Sprintf("e2e-framework=%s,e2e-run=%s", name, framework.RunID)
	target, err := vpframework.NewTarget(cluster.Name, vpframework.TargetOptions{Flags: map[string]string{
		cluster.FlagKubeconfig: framework.TestContext.KubeConfig, cluster.FlagContext: framework.TestContext.KubeContext,
		cluster.FlagProbeImage: flags.probeImage, cluster.FlagNodes: flags.nodes, cluster.FlagEveryNode: fmt.Sprint(flags.everyNode),
		cluster.FlagNamespaceLabels: nsLabels,
	}})
	if err != nil {
		return nil, fmt.Errorf("volperm: %w", err)
	}
	// A matrix target (node pools of several kubelet releases) makes each case a cell per
	// release, each a spec with its releases in its name: selected again as such.
	if cases, err = selectCases(vpframework.RunAsReleases(target, cases), target.Info().Name, sc); err != nil {
		target.Close()
		return nil, err
	}
	require := suites.RequireFromEnv()
	sel := &report.Selection{Source: "catalogue", Available: len(all), Selected: len(cases), Profiles: strings.Split(flags.profiles, ","),
		LabelFilter: sc.LabelFilter, Focus: strings.Join(sc.FocusStrings, "|"), Skip: strings.Join(sc.SkipStrings, "|"), Require: require}
	return &suites.Config{Target: target, Cases: cases, Require: require, Selection: sel, Certify: certifyCfg}, nil
}

// certifyConfig reads --volperm-implementation and --volperm-claim: nil when neither is given.
func certifyConfig() (*suites.CertifyConfig, error) {
	claims, err := vpframework.ParseClaims(flags.claims)
	if err != nil {
		return nil, fmt.Errorf("volperm: --volperm-claim: %v", err)
	}
	if flags.implementation == "" && len(claims) == 0 {
		return nil, nil
	}
	c := &suites.CertifyConfig{Claims: claims, CatalogueDigest: catalogue.Digest()}
	if flags.implementation != "" {
		if c.Implementation, err = certify.LoadImplementation(flags.implementation); err != nil {
			return nil, fmt.Errorf("volperm: --volperm-implementation: %v", err)
		}
	}
	return c, nil
}

// parseProfiles reads --volperm-profile.
func parseProfiles(spec string) ([]vpframework.Profile, error) {
	ps, err := vpframework.ParseProfiles(spec)
	if err != nil {
		return nil, fmt.Errorf("volperm: --volperm-profile: %v", err)
	}
	return ps, nil
}

// selectCases keeps the cases whose spec Ginkgo would run: its full text (with the enclosing
// "[sig-storage] volperm") matched by a focus and no skip, its labels (with sig-storage) by
// the label filter, as Ginkgo matches them (types.SuiteConfig: several focuses or skips are
// alternatives).
func selectCases(cases []*vpframework.Case, target string, sc types.SuiteConfig) ([]*vpframework.Case, error) {
	w := suites.Within{Text: ContainerText, Labels: []string{"sig-" + sig}, FlagPrefix: "-ginkgo."}
	cases, err := w.Select(cases, target, sc.LabelFilter, strings.Join(sc.FocusStrings, "|"), strings.Join(sc.SkipStrings, "|"))
	if err != nil {
		return nil, fmt.Errorf("volperm: %w", err)
	}
	return cases, nil
}

// dumped are the nodes already dumped: a node's state is dumped at its first failed case only.
var dumped sync.Map

// dumpOnFailure dumps the node of a failed case (its events, the pods its kubelet runs, as the
// framework's DumpNodeDebugInfo does for its own failures) when --dump-logs-on-failure is set;
// a known difference of the target is a fact of the release, not a broken node: not dumped.
func dumpOnFailure(ctx context.Context) {
	sr := ginkgo.CurrentSpecReport()
	if !sr.Failed() || !framework.TestContext.DumpLogsOnFailure || report.EntryString(sr, report.KnownDifferenceEntry) != "" {
		return
	}
	cs, err := framework.LoadClientset()
	if err != nil {
		framework.Logf("volperm: no clientset to dump the node: %v", err)
		return
	}
	var nodes []string
	if n := report.EntryString(sr, report.NodeEntry); n != "" {
		nodes = []string{n}
	} else if infos, err := cluster.ListNodes(ctx, cs, flags.nodes); err == nil {
		for _, i := range infos {
			nodes = append(nodes, i.Name)
		}
	}
	nodes = slices.DeleteFunc(nodes, func(n string) bool { _, seen := dumped.LoadOrStore(n, true); return seen })
	if len(nodes) > 0 {
		e2edebug.DumpNodeDebugInfo(ctx, cs, nodes, framework.Logf)
	}
}

// writeReports writes volperm's reports of volperm's specs (those under ContainerText) into
// <report-dir>/volperm, when the framework has a --report-dir: junit.xml, summary.md,
// summary.json, run.log, and with --volperm-implementation or --volperm-claim
// conformance-report.yaml: the hand-in `volperm report verify` checks.
func writeReports(r types.Report) {
	dir := framework.TestContext.ReportDir
	cfg, err := run()
	if dir == "" || err != nil || cfg == nil {
		return
	}
	dir = filepath.Join(dir, ReportSubdir)
	r.SpecReports = slices.DeleteFunc(slices.Clone(r.SpecReports), func(sr types.SpecReport) bool {
		return sr.LeafNodeType == types.NodeTypeIt && !slices.Contains(sr.ContainerHierarchyTexts, ContainerText)
	})
	s := report.Build(r, report.Options{Target: cfg.Target.Info(), Selection: cfg.Selection})
	log := []string{report.LogHead(cfg.Target.Info().Name, len(cfg.Cases))}
	for _, sr := range r.SpecReports {
		if line := report.LogLine(sr); line != "" {
			log = append(log, line)
		}
	}
	log = append(log, s.LogTail()...)
	framework.ExpectNoError(errors.Join(
		os.MkdirAll(dir, 0o755),
		report.WriteJUnit(r, filepath.Join(dir, suites.JUnitFile)),
		s.WriteJSON(filepath.Join(dir, suites.SummaryJSON)),
		s.WriteMarkdown(filepath.Join(dir, suites.SummaryMarkdown)),
		os.WriteFile(filepath.Join(dir, suites.RunLog), []byte(strings.Join(log, "\n")+"\n"), 0o644),
	), "volperm: write the reports")
	c := *cfg
	c.ReportDir = dir
	framework.ExpectNoError(suites.WriteCertifiedReports(&c, s), "volperm: write the ConformanceReport and index.html")
}
