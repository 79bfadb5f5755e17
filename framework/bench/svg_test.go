package bench

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"testing"
)

// The plot is well-formed XML with one polyline per comparison side that has a median, a
// legend naming the sides and labelled axes.
func TestBenchPlotSVG(t *testing.T) {
	odd := run(day2, "oracle-vs-reference", 0.04, 2.0)
	odd.Comparisons[0].B.Side = `reference <"roots" & co>`
	noA := run(day2, "served-vs-per-call", 0.0, 19.0)
	for _, tc := range []struct {
		name      string
		history   []HistoryEntry
		polylines []string // data-series of each, in order
		points    []int    // points of each polyline
		texts     []string // in the document's text
	}{
		{"no runs", nil, nil, nil, []string{"over the 0 runs of history.jsonl", "no runs yet"}},
		{"one run", []HistoryEntry{run(day1, "oracle-vs-reference", 0.0379, 2.2533)},
			[]string{"oracle-vs-reference A", "oracle-vs-reference B"}, []int{1, 1},
			[]string{"oracle-vs-reference", "A: side a", "B: side b", "over the one run of history.jsonl", "median seconds (log)", "run (line of the history), its date below", "0.02 s", "5 s", "11-25", "commit aaaaaaaaaaaa"}},
		{"three runs, a comparison in two of them", []HistoryEntry{
			run(day1, "oracle-vs-reference", 0.04, 2.0, "served-vs-per-call", 3.0, 19.0),
			run(day2, "oracle-vs-reference", 0.04, 2.1),
			run(day3, "oracle-vs-reference", 0.05, 2.2, "served-vs-per-call", 3.1, 18.0)},
			[]string{"oracle-vs-reference A", "oracle-vs-reference B", "served-vs-per-call A", "served-vs-per-call B"}, []int{3, 3, 2, 2},
			[]string{"over the 3 runs", "11-27", "B/A 5.81x in its last run"}},
		{"a side with no median has no line", []HistoryEntry{noA}, []string{"served-vs-per-call B"}, []int{1}, []string{"served-vs-per-call"}},
		{"names are escaped", []HistoryEntry{odd}, []string{"oracle-vs-reference A", "oracle-vs-reference B"}, []int{1, 1},
			[]string{`B: reference <"roots" & co>`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := PlotSVG(tc.history, "history.jsonl")
			var series []string
			var points []int
			var text strings.Builder
			d := xml.NewDecoder(bytes.NewReader(doc))
			root := ""
			for {
				tok, err := d.Token()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("not well-formed XML: %v\n%s", err, doc)
				}
				switch tok := tok.(type) {
				case xml.StartElement:
					if root == "" {
						root = tok.Name.Local
					}
					if tok.Name.Local == "polyline" {
						for _, a := range tok.Attr {
							switch a.Name.Local {
							case "data-series":
								series = append(series, a.Value)
							case "points":
								points = append(points, len(strings.Fields(a.Value)))
							}
						}
					}
				case xml.CharData:
					text.Write(tok)
					text.WriteString("\n")
				}
			}
			if root != "svg" {
				t.Errorf("root element %q, want svg", root)
			}
			if strings.Join(series, ",") != strings.Join(tc.polylines, ",") || itoas(points) != itoas(tc.points) {
				t.Errorf("polylines %q with %v points, want %q with %v", series, points, tc.polylines, tc.points)
			}
			for _, w := range tc.texts {
				if !strings.Contains(text.String(), w) {
					t.Errorf("the plot's text lacks %q:\n%s", w, text.String())
				}
			}
		})
	}
}

func TestBenchPlotMarks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		want   string
	}{
		{0.0379, 2.2533, "[0.02 0.05 0.1 0.2 0.5 1 2 5]"},
		{2, 15.5, "[2 5 10 20]"},
		{1, 1, "[1 2]"},
		{5, 5, "[5 10]"},
		{0.0004, 0.0009, "[0.0002 0.0005 0.001]"},
		{142, 1326.9, "[100 200 500 1000 2000]"},
	} {
		if got := fmt.Sprint(yMarks(tc.lo, tc.hi)); got != tc.want {
			t.Errorf("yMarks(%v, %v) = %s, want %s", tc.lo, tc.hi, got, tc.want)
		}
	}
}
