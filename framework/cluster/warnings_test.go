package cluster

import (
	"context"
	"reflect"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The warnings of a request reach the collector of its context; only the unknown-field ones are
// an Observation's, each once.
func TestWarningsOfARequest(t *testing.T) {
	ctx, w := withWarnings(context.Background())
	h := warningHandler{}
	h.HandleWarningHeaderWithContext(ctx, 299, "-", `unknown field "spec.volumes[0].emptyDir.mode"`)
	h.HandleWarningHeaderWithContext(ctx, 299, "-", `spec.volumes[1].flexVolume: deprecated`)
	h.HandleWarningHeaderWithContext(ctx, 299, "-", `unknown field "spec.volumes[0].emptyDir.mode"`)
	h.HandleWarningHeaderWithContext(ctx, 299, "-", `unknown field "spec.volumes[2].emptyDir.mode"`)
	texts, paths := w.unknownFields()
	if want := []string{`unknown field "spec.volumes[0].emptyDir.mode"`, `unknown field "spec.volumes[2].emptyDir.mode"`}; !reflect.DeepEqual(texts, want) {
		t.Errorf("texts %q, want %q", texts, want)
	}
	if want := []string{"spec.volumes[0].emptyDir.mode", "spec.volumes[2].emptyDir.mode"}; !reflect.DeepEqual(paths, want) {
		t.Errorf("paths %q, want %q", paths, want)
	}
	// Another request's context collects nothing of these.
	_, other := withWarnings(context.Background())
	if texts, _ := other.unknownFields(); len(texts) != 0 {
		t.Errorf("another request got %q", texts)
	}
}

// Under fieldValidation Strict an apiserver of an older release refuses the pod: a rejection,
// with the handler's text, not the target's failure.
func TestStrictDecodingRejection(t *testing.T) {
	text := `Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "spec.volumes[0].emptyDir.mode"`
	a, err := admission(apierrors.NewBadRequest(text))
	if err != nil || a.Allowed || !reflect.DeepEqual(a.Errors, []string{text}) {
		t.Errorf("err %v, admission %+v: want the rejection %q", err, a, text)
	}
	if a, err := admission(apierrors.NewBadRequest("the server rejected our request for an unknown reason")); err == nil {
		t.Errorf("another BadRequest taken for a rejection: %+v", a)
	}
	if _, err := admission(apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "x")); err == nil {
		t.Error("NotFound taken for a rejection")
	}
}
