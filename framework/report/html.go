package report

import (
	"bytes"
	"fmt"
	"html/template"
	"os"
	"slices"
	"sort"
	"strings"
)

// IndexHTML is the report a person reads (issue 54): one self-contained static page, no script,
// no request for anything (inline CSS and SVG), written beside summary.md.
const IndexHTML = "index.html"

// Certification is what index.html says of a certification run: the implementation, its claims
// and whether the hand-in verifies (framework/certify Verify), with the problems when not.
type Certification struct {
	Implementation string
	Claims         []string
	Verified       bool
	Problems       []string
}

// page is what index.html's template reads.
type page struct {
	S         *Summary
	Cert      *Certification
	Areas     []areaBar
	Grid      *releaseGrid
	Known     []reasonGroup
	Failures  []CaseResult
	NotRun    []reasonGroup
	NotApp    []reasonGroup
	NotRunN   int
	NotAppN   int
	Unknown   int
	KnownN    int
	Verdict   string
	VerdictOK bool
}

// areaBar is an area's counts as one bar: passed, known differences, failed, could not run and
// not applicable, each a share of the bar's width.
type areaBar struct {
	Group
	Known    int
	Segments []segment
}

type segment struct {
	Class, Title string
	X, W         float64
}

// releaseGrid is the release matrix as a grid: a row per kube-apiserver release, a column per
// kubelet release (newest first); a cell per pair the target has (a case of it was the
// target's to run), coloured by its verdict.
type releaseGrid struct {
	APIServers, Kubelets []string
	Cells                map[string]*gridCell
}

type gridCell struct {
	Counts
	Known int
	Class string
}

// Cell is the cell of apiserver a and kubelet k, nil when the target has none.
func (g *releaseGrid) Cell(a, k string) *gridCell { return g.Cells[a+" "+k] }

// reasonGroup is the cases of one reason (a known difference, why not run).
type reasonGroup struct {
	Reason string
	Names  []string
}

// HTML renders the summary as index.html; cert is nil for a run that certifies nothing.
func (s *Summary) HTML(cert *Certification) ([]byte, error) {
	p := &page{S: s, Cert: cert}
	p.Verdict, p.VerdictOK = strings.ToUpper(s.Result), s.Result == ResultPassed
	known := map[string]int{}
	for _, f := range s.Failures {
		if f.KnownDifference != "" {
			known[f.Area]++
			p.KnownN++
		} else {
			p.Failures = append(p.Failures, f)
		}
	}
	p.Unknown = len(p.Failures)
	if !p.VerdictOK && p.Unknown == 0 && len(s.SuiteFailures) == 0 && p.KnownN > 0 {
		p.Verdict = "FAILED: KNOWN DIFFERENCES ONLY"
	}
	for _, a := range s.Areas {
		p.Areas = append(p.Areas, bar(a, known[a.Name]))
	}
	p.Grid = grid(s.Releases)
	p.Known = groupBy(s.Failures, func(c CaseResult) (string, bool) { return c.KnownDifference, c.KnownDifference != "" })
	p.NotRun = groupBy(s.NotRun, func(c CaseResult) (string, bool) { return c.Message, !c.NotApplicable })
	p.NotApp = groupBy(s.NotRun, func(c CaseResult) (string, bool) { return c.Message, c.NotApplicable })
	for _, g := range p.NotRun {
		p.NotRunN += len(g.Names)
	}
	for _, g := range p.NotApp {
		p.NotAppN += len(g.Names)
	}
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, p); err != nil {
		return nil, fmt.Errorf("render %s: %w", IndexHTML, err)
	}
	return b.Bytes(), nil
}

// WriteHTML writes index.html to path.
func (s *Summary) WriteHTML(path string, cert *Certification) error {
	b, err := s.HTML(cert)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", IndexHTML, err)
	}
	return nil
}

// bar is an area's bar: its failures split into known differences and the others, its cases
// not run into could not run and not applicable.
func bar(g Group, known int) areaBar {
	b := areaBar{Group: g, Known: known}
	if g.Total == 0 {
		return b
	}
	x := 0.0
	for _, part := range []struct {
		class, what string
		n           int
	}{
		{"pass", "passed", g.Passed},
		{"known", "known differences", known},
		{"fail", "failed", g.Failed - known},
		{"notrun", "could not run", g.CouldNotRun()},
		{"na", "not applicable", g.NotApplicable},
	} {
		if part.n == 0 {
			continue
		}
		w := 100 * float64(part.n) / float64(g.Total)
		b.Segments = append(b.Segments, segment{Class: part.class, Title: fmt.Sprintf("%d %s", part.n, part.what), X: x, W: w})
		x += w
	}
	return b
}

// grid is the release matrix's pairs the target has, over their gates.
func grid(cells []ReleaseCell) *releaseGrid {
	g := &releaseGrid{Cells: map[string]*gridCell{}}
	for _, c := range cells {
		if c.Total == c.NotApplicable {
			continue // not a pair of the target's
		}
		key := c.APIServer + " " + c.Kubelet
		gc := g.Cells[key]
		if gc == nil {
			gc = &gridCell{}
			g.Cells[key] = gc
			if !slices.Contains(g.APIServers, c.APIServer) {
				g.APIServers = append(g.APIServers, c.APIServer)
			}
			if !slices.Contains(g.Kubelets, c.Kubelet) {
				g.Kubelets = append(g.Kubelets, c.Kubelet)
			}
		}
		gc.Total += c.Total
		gc.Passed += c.Passed
		gc.Failed += c.Failed
		gc.Skipped += c.Skipped
		gc.NotApplicable += c.NotApplicable
		gc.Known += c.KnownDifferences
	}
	if len(g.Cells) < 2 {
		return nil // one pair of releases: the counts above say it all
	}
	for _, gc := range g.Cells {
		switch {
		case gc.Failed > gc.Known:
			gc.Class = "fail"
		case gc.Known > 0:
			gc.Class = "known"
		case gc.CouldNotRun() > 0:
			gc.Class = "notrun"
		default:
			gc.Class = "pass"
		}
	}
	sort.Slice(g.APIServers, func(i, j int) bool { return releaseAfter(g.APIServers[i], g.APIServers[j]) })
	sort.Slice(g.Kubelets, func(i, j int) bool { return releaseAfter(g.Kubelets[i], g.Kubelets[j]) })
	return g
}

// groupBy groups the cases of cs that keep says to by reason, the largest group first.
func groupBy(cs []CaseResult, keep func(CaseResult) (string, bool)) []reasonGroup {
	by := map[string][]string{}
	for _, c := range cs {
		if reason, ok := keep(c); ok {
			by[reason] = append(by[reason], c.Name)
		}
	}
	var out []reasonGroup
	for r, names := range by {
		out = append(out, reasonGroup{Reason: r, Names: names})
	}
	sort.Slice(out, func(i, j int) bool {
		if len(out[i].Names) != len(out[j].Names) {
			return len(out[i].Names) > len(out[j].Names)
		}
		return out[i].Reason < out[j].Reason
	})
	return out
}

// differingLines are the lines of a failure's message that name a difference: those between its
// first line and the rules line, indented ("  volume ... : expected ..., observed ...").
func differingLines(detail string) []string {
	var out []string
	for _, l := range strings.Split(detail, "\n") {
		if strings.HasPrefix(l, "  ") && strings.TrimSpace(l) != "" {
			out = append(out, strings.TrimSpace(l))
		}
	}
	if len(out) == 0 && detail != "" {
		out = []string{firstLine(detail)}
	}
	return out
}

// rulesLine is the "rules (docs/spec.md): [...]" line of a failure's message, "" if none.
func rulesLine(detail string) string {
	for _, l := range strings.Split(detail, "\n") {
		if strings.HasPrefix(l, "rules (docs/spec.md): ") {
			return strings.TrimPrefix(l, "rules (docs/spec.md): ")
		}
	}
	return ""
}

var pageTemplate = template.Must(template.New(IndexHTML).Funcs(template.FuncMap{
	"differing": differingLines,
	"rules":     rulesLine,
	"pct":       func(f float64) string { return fmt.Sprintf("%.3f", f) },
	"join":      strings.Join,
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>volperm: {{.Verdict}} on target {{.S.Target.Name}}</title>
<style>
body{font:15px/1.45 system-ui,sans-serif;margin:0 auto;max-width:72rem;padding:1rem 1.5rem;color:#1b1b1b}
h1{font-size:1.5rem;margin:.2rem 0}h2{font-size:1.15rem;margin:1.6rem 0 .5rem;border-bottom:1px solid #ddd}
.verdict{display:inline-block;padding:.15rem .6rem;border-radius:.3rem;color:#fff;font-weight:600}
.ok{background:#1a7f37}.bad{background:#cf222e}
table{border-collapse:collapse}td,th{padding:.2rem .6rem;text-align:left;vertical-align:top}
th{font-weight:600}tr.area td{border-top:1px solid #eee}
td.n{text-align:right;font-variant-numeric:tabular-nums}
svg.bar{width:22rem;height:1rem;display:block}
.pass{fill:#2da44e;background:#d5f5dc}.known{fill:#d4a72c;background:#fdf0c8}.fail{fill:#cf222e;background:#ffd7d5}
.notrun{fill:#8c959f;background:#eaeef2}.na{fill:#d0d7de;background:#f6f8fa}
.legend span{display:inline-block;margin-right:1rem}.legend i{display:inline-block;width:.8rem;height:.8rem;margin-right:.3rem;vertical-align:-.1rem}
.legend .pass{background:#2da44e}.legend .known{background:#d4a72c}.legend .fail{background:#cf222e}.legend .notrun{background:#8c959f}.legend .na{background:#d0d7de}
table.grid td.cell{min-width:6rem;text-align:center;border:2px solid #fff}
.failure{border-left:4px solid #cf222e;padding:.2rem .8rem;margin:.8rem 0;background:#fff8f8}
.failure h3{font-size:1rem;margin:.2rem 0}
pre{white-space:pre-wrap;word-break:break-word;background:#f6f8fa;padding:.5rem;margin:.3rem 0;font-size:13px}
pre.diff{background:#ffebe9}
details{margin:.3rem 0}summary{cursor:pointer}
.muted{color:#57606a}
</style>
</head>
<body>
<h1>volperm report <span class="verdict {{if .VerdictOK}}ok{{else}}bad{{end}}" id="verdict">{{.Verdict}}</span></h1>
<p id="counts">Target <b>{{.S.Target.Name}}</b>{{with .S.Target.Version}} {{.}}{{end}}: {{.S.Totals}}.
{{if .KnownN}}{{.KnownN}} of the failures are known differences of the target.{{end}}</p>
<table class="facts">
<tr><th>volperm</th><td>{{.S.Versions.Volperm}}</td><th>Go</th><td>{{.S.Versions.Go}}</td></tr>
<tr><th>kernel</th><td>{{.S.Versions.Kernel}}</td><th>k8s.io/api</th><td>{{.S.Versions.KubernetesAPI}}</td></tr>
<tr><th>started</th><td>{{.S.StartTime.UTC.Format "2006-01-02 15:04:05 UTC"}}</td><th>duration</th><td>{{printf "%.1f" .S.DurationSeconds}} s</td></tr>
{{with .S.Selection}}<tr><th>cases</th><td colspan="3">{{.Selected}} selected of {{.Available}} from {{.Source}}{{with .LabelFilter}}, label filter <code>{{.}}</code>{{end}}{{with .Focus}}, focus <code>{{.}}</code>{{end}}{{with .Rerun}}, the failures of <code>{{.}}</code> run again{{end}}</td></tr>{{end}}
</table>

<h2>Certification</h2>
{{with .Cert}}<p id="certification">{{if .Verified}}This hand-in <b>verifies</b>{{else}}This hand-in <b>does not verify</b>{{end}}:
{{.Implementation}}, claims {{if .Claims}}{{join .Claims ", "}}{{else}}none{{end}} (<code>volperm report verify</code> checks it again).</p>
{{if .Problems}}<ul>{{range .Problems}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{else}}<p id="certification" class="muted">Not a certification run: no <code>--implementation</code>, so nothing here is a certificate.</p>{{end}}

<h2>By area</h2>
<p class="legend"><span><i class="pass"></i>passed</span><span><i class="known"></i>known difference</span><span><i class="fail"></i>failed</span><span><i class="notrun"></i>could not run</span><span><i class="na"></i>not applicable</span></p>
<table id="areas">
<tr><th>area</th><th></th><th>passed</th><th>failed</th><th>could not run</th><th>not applicable</th><th>total</th></tr>
{{range .Areas}}<tr class="area"><td><b>{{.Name}}</b></td>
<td><svg class="bar" viewBox="0 0 100 4" preserveAspectRatio="none" role="img" aria-label="{{.Name}}">{{range .Segments}}<rect class="{{.Class}}" x="{{pct .X}}" width="{{pct .W}}" height="4"><title>{{.Title}}</title></rect>{{end}}</svg></td>
<td class="n">{{.Passed}}</td><td class="n">{{.Failed}}{{if .Known}} ({{.Known}} known){{end}}</td><td class="n">{{.CouldNotRun}}</td><td class="n">{{.NotApplicable}}</td><td class="n">{{.Total}}</td></tr>
{{end}}</table>

{{with .Grid}}<h2>Release matrix</h2>
<p class="muted">kube-apiserver release by row, kubelet release by column, over every gate setting: passed of the cases run. Only the pairs of releases the target has.</p>
<table class="grid" id="grid">
<tr><th></th>{{range .Kubelets}}<th>kubelet {{.}}</th>{{end}}</tr>
{{$g := .}}{{range $a := .APIServers}}<tr><th>apiserver {{$a}}</th>{{range $k := $g.Kubelets}}{{with $g.Cell $a $k}}<td class="cell {{.Class}}" data-pair="{{$a}} {{$k}}" title="{{.Passed}} passed, {{.Failed}} failed ({{.Known}} known), {{.CouldNotRun}} could not run">{{.Passed}} / {{.Total}}{{if .Failed}}<br>{{.Failed}} failed{{end}}</td>{{else}}<td></td>{{end}}{{end}}</tr>
{{end}}</table>{{end}}

{{if .S.SuiteFailures}}<h2>Suite failures</h2><ul>{{range .S.SuiteFailures}}<li><code>{{.}}</code></li>{{end}}</ul>{{end}}

<h2 id="failures-heading">Failures ({{.Unknown}})</h2>
{{range .Failures}}<section class="failure">
<h3>{{.Name}}</h3>
{{with rules .Detail}}<p>Rules (docs/spec.md): {{.}}</p>{{end}}
<pre class="diff">{{range differing .Detail}}{{.}}
{{end}}</pre>
{{if or .Expected .Observed}}<details><summary>Both Observations</summary>
<p>Expected (the spec):</p><pre class="expected">{{.Expected}}</pre>
<p>Observed (the target):</p><pre class="observed">{{.Observed}}</pre>
</details>{{end}}
</section>
{{else}}<p>None{{if .KnownN}} but the known differences below{{end}}.</p>
{{end}}

{{if .Known}}<h2>Known differences ({{.KnownN}})</h2>
{{range .Known}}<details class="known-group"><summary>{{.Reason}}: {{len .Names}} case(s)</summary><ul>{{range .Names}}<li>{{.}}</li>{{end}}</ul></details>
{{end}}{{end}}

<h2>Could not run ({{.NotRunN}})</h2>
<p class="muted">Cases of the target's that did not run here: a gap, never a pass.</p>
{{range .NotRun}}<details class="notrun-group"><summary>{{.Reason}}: {{len .Names}} case(s)</summary><ul>{{range .Names}}<li>{{.}}</li>{{end}}</ul></details>
{{else}}<p>None.</p>{{end}}

<h2>Not applicable ({{.NotAppN}})</h2>
<p class="muted">Cases never the target's to run: releases or kinds of node it is not, features it does not claim.</p>
{{range .NotApp}}<details class="na-group"><summary>{{.Reason}}: {{len .Names}} case(s)</summary><ul>{{range .Names}}<li>{{.}}</li>{{end}}</ul></details>
{{else}}<p>None.</p>{{end}}
</body>
</html>
`))
