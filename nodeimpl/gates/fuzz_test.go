package gates

import "testing"

// FuzzParse: a --feature-gates string never panics the parser, and what it accepts renders
// (String) to a string that parses to the same set.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "EmptyDirVolumeMode=true", "EmptyDirVolumeMode=true,AllAlpha=false", " EmptyDirVolumeMode = false ,", "EmptyDirVolumeMode", "Nope=true", "EmptyDirVolumeMode=maybe"} {
		f.Add(s)
	}
	for _, n := range Known() {
		f.Add(n + "=true")
	}
	f.Fuzz(func(t *testing.T, spec string) {
		s, err := Parse(spec)
		if err != nil {
			return
		}
		again, err := Parse(s.String())
		if err != nil {
			t.Fatalf("Parse(%q).String() = %q does not parse: %v", spec, s.String(), err)
		}
		if again.String() != s.String() {
			t.Fatalf("round trip %q -> %q -> %q", spec, s.String(), again.String())
		}
	})
}
