package bench

import (
	"context"
	"strings"
	"testing"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/catalogue"
)

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := median(tc.in); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// The oracle against itself: both sides run every case, answer alike, and the report says so
// with a ratio near 1 and a row per side.
func TestRunOracleAgainstItself(t *testing.T) {
	cases := catalogue.All()[:50]
	comp := Comparison{Name: "oracle-vs-oracle", What: "the oracle twice", Sample: "50 cases",
		Select: func(cs []*framework.Case) []*framework.Case { return cs },
		A:      Side{Name: "oracle"}, B: Side{Name: "oracle again"}}
	r, err := Run(context.Background(), cases, []Comparison{comp}, Options{Runs: 3})
	if err != nil {
		t.Fatal(err)
	}
	res := r.Results[0]
	if !res.Same || res.A.Cases != 50 || res.B.Cases != 50 || len(res.A.Seconds) != 3 || res.Ratio <= 0 {
		t.Errorf("result %+v: want both sides 50 cases, 3 runs, the same answers and a ratio", res)
	}
	md := string(r.Markdown())
	for _, want := range []string{"| oracle-vs-oracle | 50 cases | oracle | 50 |", "| oracle again | 50 |", "the same Observations on both sides"} {
		if !strings.Contains(md, want) {
			t.Errorf("bench.md lacks %q:\n%s", want, md)
		}
	}
	if _, err := Run(context.Background(), cases, []Comparison{{Name: "none", Select: func([]*framework.Case) []*framework.Case { return nil }}}, Options{Runs: 1}); err == nil {
		t.Error("an empty sample: no error")
	}
}
