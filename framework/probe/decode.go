package probe

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/volperm/volperm/framework"
)

// maxRequest bounds what a probe child reads: a request of a whole batch is a few hundred KiB.
const maxRequest = 64 << 20

// DecodeSteps reads a probe child's request: exactly one JSON array of steps, no unknown
// fields, each step with a volume root and a probe op (FuzzDecodeSteps).
func DecodeSteps(r io.Reader) ([]Step, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxRequest+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxRequest {
		return nil, fmt.Errorf("request larger than %d bytes", maxRequest)
	}
	var steps []Step
	if err := DecodeOne(b, &steps); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	for i, s := range steps {
		if s.Root == "" || s.Probe.Op == "" {
			return nil, fmt.Errorf("step %d: needs a root and a probe op", i)
		}
	}
	return steps, nil
}

// DecodeResults reads a probe child's answer to n steps: exactly one JSON array holding one
// result per step (FuzzDecodeResults).
func DecodeResults(b []byte, n int) ([]framework.ProbeResult, error) {
	var results []framework.ProbeResult
	if err := DecodeOne(b, &results); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	if len(results) != n {
		return nil, fmt.Errorf("%d answers for %d probes", len(results), n)
	}
	return results, nil
}

// strictOne decodes exactly one JSON value of b into v, refusing unknown fields.
func DecodeOne(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("more than one value")
	}
	return nil
}
