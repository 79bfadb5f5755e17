package execproto

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// Handler is an agent's side of the protocol: what it answers to an admit request and to a
// setup or teardown request. Main and Serve do the rest (reading requests, framing answers),
// so every Go agent speaks both modes the same way: the reference agent
// (framework/targets/exec/agent) and the upstream agent (agents/upstream).
type Handler interface {
	// Admit answers an admit request of protocol version (v2 only: v1 has no admit).
	Admit(req *AdmitRequest, version string) (*AdmitResponse, error)
	// Answer answers a setup or teardown request of protocol version with a SetUpResponse or a
	// TearDownResponse; an error means the request cannot be answered at all.
	Answer(op string, req *Request, version string) (any, error)
}

// LenientHandler is a Handler built against API types that may lack fields the harness's have
// (an agent of an older Kubernetes release): its requests are decoded as that release's clients
// decode, dropping unknown fields, where other agents' requests are refused for them. A kubelet
// of such a release never sees the field; an apiserver finds it in AdmitRequest.RawPod.
type LenientHandler interface {
	Handler
	Lenient() bool
}

// lenient reports whether h decodes unknown fields away (LenientHandler).
func lenient(h Handler) bool {
	l, ok := h.(LenientHandler)
	return ok && l.Lenient()
}

// decoder decodes one request or message for h: strictly unless h is lenient.
func decoder(h Handler, r io.Reader) *json.Decoder {
	dec := json.NewDecoder(r)
	if !lenient(h) {
		dec.DisallowUnknownFields()
	}
	return dec
}

// rawPod is the pod of an admit request as sent (AdmitRequest.RawPod), for a lenient handler
// (a strict one refused any field its types lack: it has nothing more to find there).
func rawPod(h Handler, b []byte, served bool) []byte {
	if !lenient(h) {
		return nil
	}
	var m struct {
		Pod   json.RawMessage `json:"pod"`
		Admit *struct {
			Pod json.RawMessage `json:"pod"`
		} `json:"admit"`
	}
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	if served {
		if m.Admit == nil {
			return nil
		}
		return m.Admit.Pod
	}
	return m.Pod
}

// Main answers one call of an agent named name: op is "setup", "teardown", "admit" or "hello"
// (the agent's features), the request is read from stdin and the answer written to stdout; op "serve" is the long-lived
// mode (Serve). It returns the process's exit status: 0 whenever it answered (a failed volume
// is an answer), 2 for a request it cannot read.
func Main(h Handler, name, op string, stdin io.Reader, stdout, stderr io.Writer) int {
	if op == OpServe {
		return Serve(h, name, stdin, stdout, stderr)
	}
	in, err := io.ReadAll(stdin)
	if err != nil {
		fmt.Fprintf(stderr, "%s: read request: %v\n", name, err)
		return 2
	}
	dec := decoder(h, bytes.NewReader(in))
	var answer any
	if op == OpHello {
		// What the agent implements of the protocol's optional parts; stdin (the harness's hello
		// message) says nothing more.
		answer = Hello{ProtocolVersion: Version, Op: OpHello, Features: features(h)}
	} else if op == OpAdmit {
		var req AdmitRequest
		if err := dec.Decode(&req); err != nil {
			fmt.Fprintf(stderr, "%s: read request: %v\n", name, err)
			return 2
		}
		req.RawPod = rawPod(h, in, false)
		answer, err = h.Admit(&req, VersionServe)
	} else {
		var req Request
		if err := dec.Decode(&req); err != nil {
			fmt.Fprintf(stderr, "%s: read request: %v\n", name, err)
			return 2
		}
		answer, err = h.Answer(op, &req, Version)
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 2
	}
	if err := json.NewEncoder(stdout).Encode(answer); err != nil {
		fmt.Fprintf(stderr, "%s: write answer: %v\n", name, err)
		return 2
	}
	return 0
}

// Serve is the long-lived mode (`AGENT serve`, docs/exec-protocol.md "Long-lived mode"): it
// answers hello, admit, setup and teardown messages, one JSON line each, until stdin closes.
func Serve(h Handler, name string, stdin io.Reader, stdout, stderr io.Writer) int {
	in := bufio.NewReader(stdin)
	enc := json.NewEncoder(stdout)
	for {
		line, err := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) == 0 {
			if err != nil {
				return 0 // stdin closed: the run is over
			}
			continue
		}
		var m Message
		if err := decoder(h, bytes.NewReader(line)).Decode(&m); err != nil {
			fmt.Fprintf(stderr, "%s: read message: %v\n", name, err)
			return 2
		}
		var answer any
		switch {
		case m.ProtocolVersion != VersionServe:
			fmt.Fprintf(stderr, "%s: message in protocol %q; serving speaks %q\n", name, m.ProtocolVersion, VersionServe)
			return 2
		case m.Op == OpHello:
			answer = Hello{ProtocolVersion: VersionServe, Op: OpHello, Features: features(h)}
		case m.Op == OpAdmit && m.Admit != nil:
			m.Admit.RawPod = rawPod(h, line, true)
			if answer, err = h.Admit(m.Admit, VersionServe); err != nil {
				fmt.Fprintf(stderr, "%s: %v\n", name, err)
				return 2
			}
		case m.Request == nil:
			fmt.Fprintf(stderr, "%s: %s message without a request\n", name, m.Op)
			return 2
		default:
			if answer, err = h.Answer(m.Op, m.Request, VersionServe); err != nil {
				fmt.Fprintf(stderr, "%s: %v\n", name, err)
				return 2
			}
		}
		if err := enc.Encode(answer); err != nil {
			fmt.Fprintf(stderr, "%s: write answer: %v\n", name, err)
			return 2
		}
	}
}
