package execproto

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// recorder answers every call and keeps the admit request it got.
type recorder struct {
	lenient bool
	got     *AdmitRequest
}

func (r *recorder) Admit(req *AdmitRequest, version string) (*AdmitResponse, error) {
	r.got = req
	return &AdmitResponse{ProtocolVersion: version, Allowed: true}, nil
}

func (r *recorder) Answer(op string, req *Request, version string) (any, error) {
	return TearDownResponse{ProtocolVersion: version, OK: true}, nil
}

type lenientRecorder struct{ recorder }

func (l *lenientRecorder) Lenient() bool { return true }

// A field the agent's API types lack (a pod of a newer release) is refused by a strict agent,
// and decoded without it by a lenient one, which finds it in RawPod: per call and served.
func TestLenientHandlerGetsThePodAsSent(t *testing.T) {
	pod := `{"metadata":{"name":"p"},"spec":{"volumes":[{"name":"v","emptyDir":{"fieldOfTheFuture":1}}]}}`
	admit := `{"protocolVersion":"volperm.dev/exec/v2","pod":` + pod + `,"apiserverGates":{},"fieldValidation":"Strict"}`
	served := `{"protocolVersion":"volperm.dev/exec/v2","op":"hello"}` + "\n" + `{"protocolVersion":"volperm.dev/exec/v2","op":"admit","admit":` + admit + "}\n"

	var out, errOut bytes.Buffer
	if rc := Main(&recorder{}, "strict", OpAdmit, strings.NewReader(admit), &out, &errOut); rc != 2 || !strings.Contains(errOut.String(), "fieldOfTheFuture") {
		t.Errorf("a strict agent got an unknown field: exit %d, stderr %q; want 2 naming it", rc, errOut.String())
	}
	for _, mode := range []string{"per call", "served"} {
		l := &lenientRecorder{}
		out.Reset()
		errOut.Reset()
		var rc int
		if mode == "served" {
			rc = Serve(l, "lenient", strings.NewReader(served), &out, &errOut)
		} else {
			rc = Main(l, "lenient", OpAdmit, strings.NewReader(admit), &out, &errOut)
		}
		if rc != 0 || l.got == nil {
			t.Fatalf("%s: exit %d, stderr %q", mode, rc, errOut.String())
		}
		if l.got.FieldValidation != FieldValidationStrict || l.got.Pod.Name != "p" {
			t.Errorf("%s: request = %+v", mode, l.got)
		}
		var raw map[string]any
		if err := json.Unmarshal(l.got.RawPod, &raw); err != nil || !strings.Contains(string(l.got.RawPod), "fieldOfTheFuture") {
			t.Errorf("%s: RawPod = %s (%v), want the pod as sent", mode, l.got.RawPod, err)
		}
	}
}

type featured struct{ recorder }

func (featured) Features() []string { return []string{FeatureUserNamespaces} }

// An agent's hello lists its features, per call (`AGENT hello`, v1) and served (v2); a handler
// without Features lists none.
func TestHelloListsFeatures(t *testing.T) {
	hello := `{"protocolVersion":"volperm.dev/exec/v2","op":"hello"}` + "\n"
	for _, h := range []Handler{&recorder{}, &featured{}} {
		_, want := h.(Featured)
		for _, mode := range []string{"per call", "served"} {
			var out, errOut bytes.Buffer
			var rc int
			version := Version
			if mode == "served" {
				rc, version = Serve(h, "agent", strings.NewReader(hello), &out, &errOut), VersionServe
			} else {
				rc = Main(h, "agent", OpHello, strings.NewReader(`{"protocolVersion":"volperm.dev/exec/v1","op":"hello"}`), &out, &errOut)
			}
			var got Hello
			if err := json.Unmarshal(out.Bytes(), &got); rc != 0 || err != nil {
				t.Fatalf("%s: exit %d, stdout %q, stderr %q", mode, rc, out.String(), errOut.String())
			}
			if got.ProtocolVersion != version || got.Op != OpHello || (len(got.Features) == 1 && got.Features[0] == FeatureUserNamespaces) != want {
				t.Errorf("%s, features %v: hello = %+v", mode, want, got)
			}
		}
	}
}
