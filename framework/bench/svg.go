package bench

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
)

// The plot of the history (docs/bench.md): a panel per comparison, in the order of the last
// run that has it; in each, side A (blue, solid) and side B (red, dashed) as their median
// seconds over the runs of the history. x is the run's line in the history (its date under
// it), y the median on a log scale, so that the same share of change is the same height
// whatever the median, and A and B fit one panel when B takes 60 times as long.

const (
	plotPanelW  = 480
	plotPanelH  = 300
	plotHeaderH = 66
	plotLeft    = 64 // y tick labels
	plotRight   = 24
	plotTop     = 62 // the panel's title and legend
	plotBottom  = 56 // x tick labels and title
	plotColumns = 2
	colourA     = "#1f77b4"
	colourB     = "#d62728"
)

// series is one comparison side over the runs: x the run's index in the history (from 0).
type series struct {
	letter, name string
	xs           []int
	ys           []float64
}

type panel struct {
	name  string
	ratio float64 // in the last run that has it
	a, b  series
}

// panels gathers, per comparison, its two series; the panels of the last run first, in its
// order, then those only older runs have.
func panels(h []HistoryEntry) []*panel {
	byName := map[string]*panel{}
	var order []string
	for i := len(h) - 1; i >= 0; i-- {
		for _, c := range h[i].Comparisons {
			if _, ok := byName[c.Name]; !ok && c.Name != "" {
				byName[c.Name] = &panel{name: c.Name, ratio: c.Ratio, a: series{letter: "A", name: c.A.Side}, b: series{letter: "B", name: c.B.Side}}
				order = append(order, c.Name)
			}
		}
	}
	for i, e := range h {
		for _, c := range e.Comparisons {
			p := byName[c.Name]
			if p == nil {
				continue
			}
			for _, s := range []struct {
				s *series
				v HistorySide
			}{{&p.a, c.A}, {&p.b, c.B}} {
				if s.v.MedianSeconds > 0 {
					s.s.xs, s.s.ys = append(s.s.xs, i), append(s.s.ys, s.v.MedianSeconds)
				}
			}
		}
	}
	var out []*panel
	for _, n := range order {
		out = append(out, byName[n])
	}
	return out
}

// PlotSVG draws the history as an SVG document; source names the history in its title.
func PlotSVG(h []HistoryEntry, source string) []byte {
	ps := panels(h)
	cols := plotColumns
	if len(ps) < cols {
		cols = max(len(ps), 1)
	}
	rows := max((len(ps)+cols-1)/cols, 1)
	w, ht := cols*plotPanelW, plotHeaderH+rows*plotPanelH
	var b strings.Builder
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">
<rect width="100%%" height="100%%" fill="white"/>
`, w, ht, w, ht)
	runs := fmt.Sprintf("the %d runs", len(h))
	if len(h) == 1 {
		runs = "the one run"
	}
	title := fmt.Sprintf("volperm bench: median seconds per comparison side over %s of %s", runs, source)
	fmt.Fprintf(&b, "<text x=\"12\" y=\"20\" font-size=\"14\" font-weight=\"bold\">%s</text>\n", esc(title))
	sub := "no runs yet"
	if n := len(h); n > 0 {
		last := h[n-1]
		sub = fmt.Sprintf("last run %s, commit %s%s, %d CPUs (load %.1f), Linux %s, %s, runs per side: %d.",
			last.Date.Format("2006-01-02 15:04 MST"), short(last.Commit), dirtyMark(last.Dirty), last.Machine.CPUs, last.Machine.Load, last.Machine.Kernel, last.Machine.Go, last.Runs)
	}
	fmt.Fprintf(&b, "<text x=\"12\" y=\"38\" fill=\"#444\">%s</text>\n", esc(sub))
	b.WriteString("<text x=\"12\" y=\"53\" fill=\"#444\">A solid blue, B dashed red; the y axis is logarithmic: the same height is the same share of change, the gap between the lines the ratio B/A.</text>\n")
	for i, p := range ps {
		drawPanel(&b, p, h, (i%cols)*plotPanelW, plotHeaderH+(i/cols)*plotPanelH)
	}
	b.WriteString("</svg>\n")
	return []byte(b.String())
}

func drawPanel(b *strings.Builder, p *panel, h []HistoryEntry, x0, y0 int) {
	left, right := float64(x0+plotLeft), float64(x0+plotPanelW-plotRight)
	top, bottom := float64(y0+plotTop), float64(y0+plotPanelH-plotBottom)
	fmt.Fprintf(b, "<g class=\"panel\" id=\"panel-%s\">\n", esc(p.name))
	title := p.name
	if p.ratio > 0 {
		title += fmt.Sprintf("  (B/A %.2fx in its last run)", p.ratio)
	}
	fmt.Fprintf(b, "<text x=\"%d\" y=\"%d\" font-size=\"13\" font-weight=\"bold\">%s</text>\n", x0+12, y0+16, esc(title))
	// The legend, a line per side.
	for k, s := range []series{p.a, p.b} {
		y := y0 + 32 + 14*k
		fmt.Fprintf(b, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" %s/>\n", x0+14, y-4, x0+40, y-4, stroke(s.letter))
		fmt.Fprintf(b, "<text x=\"%d\" y=\"%d\">%s: %s</text>\n", x0+46, y, s.letter, esc(s.name))
	}
	// y: log10 of the medians, from the 1-2-5 mark below the least to the one above the most.
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range []series{p.a, p.b} {
		for _, v := range s.ys {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if math.IsInf(lo, 1) {
		lo, hi = 1, 1
	}
	marks := yMarks(lo, hi)
	llo, lhi := math.Log10(marks[0]), math.Log10(marks[len(marks)-1])
	// A little room above and below: a point on the frame is hard to see.
	pad := (lhi - llo) / 25
	llo, lhi = llo-pad, lhi+pad
	ypos := func(v float64) float64 {
		return bottom - (math.Log10(v)-llo)/(lhi-llo)*(bottom-top)
	}
	// x: the runs of the history, the first at the left edge, the last at the right.
	n := len(h)
	xpos := func(i int) float64 {
		if n <= 1 {
			return (left + right) / 2
		}
		return left + float64(i)/float64(n-1)*(right-left)
	}
	fmt.Fprintf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#888\"/>\n", left, top, right-left, bottom-top)
	decadesOnly := lhi-llo > 3.8
	for _, v := range marks {
		decade := isDecade(v)
		if decadesOnly && !decade && v != marks[0] && v != marks[len(marks)-1] {
			continue
		}
		y := ypos(v)
		colour := "#e4e4e4"
		if decade {
			colour = "#bbb"
		}
		fmt.Fprintf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n", left, y, right, y, colour)
		fmt.Fprintf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s s</text>\n", left-5, y+4, strconv.FormatFloat(v, 'g', 3, 64))
	}
	ymid := (top + bottom) / 2
	fmt.Fprintf(b, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"middle\" transform=\"rotate(-90 %d %.1f)\">median seconds (log)</text>\n", x0+14, ymid, x0+14, ymid)
	step := max((n+5)/6, 1)
	for i := 0; i < n; i += step {
		x := xpos(i)
		fmt.Fprintf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888\"/>\n", x, bottom, x, bottom+4)
		fmt.Fprintf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%d</text>\n", x, bottom+15, i+1)
		fmt.Fprintf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#666\" font-size=\"9\">%s</text>\n", x, bottom+26, h[i].Date.Format("01-02"))
	}
	fmt.Fprintf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">run (line of the history), its date below</text>\n", (left+right)/2, bottom+42)
	for _, s := range []series{p.a, p.b} {
		if len(s.xs) == 0 {
			continue
		}
		var pts []string
		for k := range s.xs {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", xpos(s.xs[k]), ypos(s.ys[k])))
		}
		fmt.Fprintf(b, "<polyline class=\"series\" data-series=\"%s %s\" fill=\"none\" %s points=\"%s\"/>\n", esc(p.name), s.letter, stroke(s.letter), strings.Join(pts, " "))
		for k := range s.xs {
			e := h[s.xs[k]]
			fmt.Fprintf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"><title>%s</title></circle>\n", xpos(s.xs[k]), ypos(s.ys[k]), colour(s.letter),
				esc(fmt.Sprintf("%s %s, run %d (%s, %s, load %.1f): %s", p.name, s.letter, s.xs[k]+1, e.Date.Format("2006-01-02 15:04"), short(e.Commit), e.Machine.Load, Seconds(s.ys[k]))))
		}
	}
	b.WriteString("</g>\n")
}

// yMarks are the 1-2-5 marks (0.1, 0.2, 0.5, 1, 2, ...) from the one at or below lo to the one
// at or above hi: at least two.
func yMarks(lo, hi float64) []float64 {
	mark := func(k int) float64 { // k: 3 marks per decade, k=0 is 1
		d := k / 3
		if k < 0 && k%3 != 0 {
			d-- // floor, not toward zero
		}
		return []float64{1, 2, 5}[k-3*d] * math.Pow(10, float64(d))
	}
	k := 3 * int(math.Floor(math.Log10(lo)))
	for mark(k+1) <= lo*(1+1e-9) {
		k++
	}
	var out []float64
	for ; len(out) < 2 || out[len(out)-1] < hi*(1-1e-9); k++ {
		out = append(out, mark(k))
	}
	return out
}

// isDecade: v is a power of ten.
func isDecade(v float64) bool {
	l := math.Log10(v)
	return math.Abs(l-math.Round(l)) < 1e-9
}

func colour(letter string) string {
	if letter == "B" {
		return colourB
	}
	return colourA
}

func stroke(letter string) string {
	if letter == "B" {
		return fmt.Sprintf(`stroke="%s" stroke-width="2" stroke-dasharray="6 3"`, colourB)
	}
	return fmt.Sprintf(`stroke="%s" stroke-width="2"`, colourA)
}

func short(commit string) string {
	if len(commit) == 40 {
		return commit[:12]
	}
	return commit
}

func dirtyMark(d bool) string {
	if d {
		return "+dirty"
	}
	return ""
}

func esc(s string) string { return html.EscapeString(s) }
