package cluster

import (
	"context"
	"strings"
	"sync"

	"k8s.io/client-go/rest"
)

// The apiserver's warnings on a create are part of its answer (framework.AdmissionObservation
// Warnings: docs/spec.md [releases.apiserver-unknown-field], an apiserver of a release without a
// field keeps the pod without it and warns `unknown field "<path>"`). client-go hands warning
// headers to the client's handler, not to the caller: warningHandler passes each to the
// collector of the request's context (withWarnings), and logs the others as client-go does.

type warningsKey struct{}

// warningCollector gathers the warnings of the requests made with its context.
type warningCollector struct {
	mu    sync.Mutex
	texts []string
}

// withWarnings is ctx whose requests' warnings go to the returned collector.
func withWarnings(ctx context.Context) (context.Context, *warningCollector) {
	w := &warningCollector{}
	return context.WithValue(ctx, warningsKey{}, w), w
}

// unknownFields are the collected warnings about unknown fields, the ones the spec models
// (other warnings, such as a deprecated volume type's, are not part of an Observation), and
// the field paths they name.
func (w *warningCollector) unknownFields() (texts, paths []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	seen := map[string]bool{}
	for _, t := range w.texts {
		rest, ok := strings.CutPrefix(t, `unknown field "`)
		if !ok || !strings.HasSuffix(rest, `"`) || seen[t] {
			continue
		}
		seen[t] = true
		texts = append(texts, t)
		paths = append(paths, strings.TrimSuffix(rest, `"`))
	}
	return texts, paths
}

// warningHandler is the cluster target's client warning handler.
type warningHandler struct{}

func (warningHandler) HandleWarningHeaderWithContext(ctx context.Context, code int, agent, text string) {
	if w, ok := ctx.Value(warningsKey{}).(*warningCollector); ok {
		w.mu.Lock()
		w.texts = append(w.texts, text)
		w.mu.Unlock()
		return
	}
	rest.WarningLogger{}.HandleWarningHeaderWithContext(ctx, code, agent, text)
}
