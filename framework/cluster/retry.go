package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// Timeouts bound what the target waits for. A zero field keeps its default.
type Timeouts struct {
	// PodStart bounds how long a probe pod (or a fixture or driver pod) may take from its
	// creation until it runs (or its volumes fail to mount): default 120 s,
	// VOLPERM_POD_START_TIMEOUT. A pod that does not start in time fails its cases with a
	// verdict naming the timeout and what the pod, its events and its node looked like; a probe
	// pod on a live node with no warning event is tried once more first (runPodOnceMore).
	PodStart time.Duration
	// APIServer bounds how long the apiserver may not answer (connection refused, reset, EOF,
	// a request with no answer within callTimeout, 503/429/504) before a call gives up: default
	// 120 s, VOLPERM_APISERVER_TIMEOUT. Until then every call is retried with a backoff (200 ms
	// doubling to 5 s); afterwards the cases waiting for it fail with "the apiserver did not
	// answer for Ns: LAST ERROR".
	APIServer time.Duration
}

const (
	defaultPodStart  = 120 * time.Second
	defaultAPIServer = 120 * time.Second
	// callTimeout bounds one request: a paused or wedged apiserver accepts the connection and
	// never answers, which without a bound would hang the run.
	callTimeout = 20 * time.Second
	// execTimeout bounds one exec in a probe container (the probes of a whole pod).
	execTimeout = 3 * time.Minute
	// Environment knobs of Timeouts (Go durations: "20s", "2m").
	EnvPodStartTimeout  = "VOLPERM_POD_START_TIMEOUT"
	EnvAPIServerTimeout = "VOLPERM_APISERVER_TIMEOUT"
)

// withDefaults fills the zero fields of t.
func (t Timeouts) withDefaults() Timeouts {
	if t.PodStart <= 0 {
		t.PodStart = defaultPodStart
	}
	if t.APIServer <= 0 {
		t.APIServer = defaultAPIServer
	}
	return t
}

// TimeoutsFromEnv reads VOLPERM_POD_START_TIMEOUT and VOLPERM_APISERVER_TIMEOUT (unset: zero,
// the default).
func TimeoutsFromEnv() (Timeouts, error) {
	var t Timeouts
	for _, k := range []struct {
		env string
		d   *time.Duration
	}{{EnvPodStartTimeout, &t.PodStart}, {EnvAPIServerTimeout, &t.APIServer}} {
		v := os.Getenv(k.env)
		if v == "" {
			continue
		}
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return t, fmt.Errorf("%s=%q: want a positive Go duration such as 30s or 2m", k.env, v)
		}
		*k.d = d
	}
	return t, nil
}

// SetTimeouts changes the bounds for the calls and pods that start afterwards (zero fields:
// unchanged). For tests that inject faults; a run sets them once through Options.
func (t *Target) SetTimeouts(to Timeouts) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if to.PodStart > 0 {
		t.opts.Timeouts.PodStart = to.PodStart
	}
	if to.APIServer > 0 {
		t.opts.Timeouts.APIServer = to.APIServer
	}
}

func (t *Target) timeouts() Timeouts {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.opts.Timeouts.withDefaults()
}

// APIServerDownError is the verdict of a call that gave up because the apiserver did not
// answer for Timeouts.APIServer.
type APIServerDownError struct {
	For time.Duration
	Err error // the last attempt's error
}

func (e *APIServerDownError) Error() string {
	return fmt.Sprintf("the apiserver did not answer for %s: %v", e.For.Round(time.Second), e.Err)
}

func (e *APIServerDownError) Unwrap() error { return e.Err }

// notWithinError is waitFor's time-out.
type notWithinError struct {
	what    string
	timeout time.Duration
}

func (e *notWithinError) Error() string { return fmt.Sprintf("%s: not within %s", e.what, e.timeout) }

// permanentError stops call's retries for an error that would otherwise look transient (an exec
// cut off after its command started must not run the probes twice).
type permanentError struct{ err error }

func (e permanentError) Error() string { return e.err.Error() }
func (e permanentError) Unwrap() error { return e.err }

// call runs fn, each attempt bounded by callTimeout, and retries it while the apiserver does
// not answer (transient), with a backoff, for up to Timeouts.APIServer from the first failed
// attempt; then it returns an *APIServerDownError. Other errors are returned at once.
func (t *Target) call(ctx context.Context, fn func(ctx context.Context) error) error {
	return t.callWith(ctx, callTimeout, fn)
}

func (t *Target) callWith(ctx context.Context, attempt time.Duration, fn func(ctx context.Context) error) error {
	var first, denied time.Time
	delay := 200 * time.Millisecond
	for n := 1; ; n++ {
		begin := time.Now()
		actx, cancel := context.WithTimeout(ctx, attempt)
		err := fn(actx)
		cancel()
		var perm permanentError
		switch {
		case err == nil:
			t.answered()
			return nil
		case errors.As(err, &perm):
			return perm.err
		case ctx.Err() != nil:
			return err
		case !isTransient(err) && !t.starting(ctx, err, &denied):
			if n > 1 && (apierrors.IsAlreadyExists(err) || apierrors.IsNotFound(err)) {
				// A create or delete of an earlier attempt that reached the apiserver before
				// its answer was lost: AlreadyExists or NotFound is what the caller wanted.
				// (Callers that mean NotFound as an answer check it themselves.)
				t.answered()
			}
			return err
		}
		if first.IsZero() {
			first = begin
		}
		t.unanswered(err)
		down := time.Since(first)
		limit := t.timeouts().APIServer
		if down >= limit {
			return &APIServerDownError{For: down, Err: err}
		}
		wait := min(delay, limit-down)
		delay = min(2*delay, 5*time.Second)
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
	}
}

// rbacGrace is how long a call retries an RBAC denial while the apiserver says it is ready. A
// restarted apiserver serves requests before its authorizer has synced and meanwhile forbids
// a user that a ClusterRoleBinding authorizes (kind's kubernetes-admin): seen here right
// after a kill, with client-go's own retries of GETs hiding the outage itself. /readyz can turn
// ready between the denial and its check, hence the grace.
var rbacGrace = 10 * time.Second

// starting reports whether err is an RBAC denial of an apiserver that is starting: not ready
// (/readyz), or within rbacGrace of the call's first denial (denied).
func (t *Target) starting(ctx context.Context, err error, denied *time.Time) bool {
	if !isRBACDenial(err) {
		return false
	}
	if denied.IsZero() {
		*denied = time.Now()
	}
	if time.Since(*denied) < rbacGrace {
		return true
	}
	return t.ready != nil && !t.ready(ctx)
}

// isRBACDenial reports whether err is the authorizer's "User X cannot VERB resource R" (not an
// admission plugin's or a policy's denial).
func isRBACDenial(err error) bool {
	if !apierrors.IsForbidden(err) {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, `User "`) && strings.Contains(msg, " cannot ") && !strings.Contains(msg, deniedPrefix)
}

// readyz says whether the apiserver's /readyz answers ok (one attempt, 3 s).
func (t *Target) readyz(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	_, err := t.client.CoreV1().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	return err == nil
}

// isTransient reports whether err means the apiserver did not answer (or is overloaded), so
// that the same request may well succeed later.
func isTransient(err error) bool {
	var down *APIServerDownError
	if errors.As(err, &down) {
		return false // an inner call already waited its bound
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return true // the attempt's callTimeout (the caller's own context is checked first)
	case apierrors.IsServiceUnavailable(err), apierrors.IsTooManyRequests(err), apierrors.IsServerTimeout(err), apierrors.IsTimeout(err):
		return true
	case utilnet.IsConnectionRefused(err), utilnet.IsConnectionReset(err), utilnet.IsProbableEOF(err),
		utilnet.IsHTTP2ConnectionLost(err), utilnet.IsTimeout(err):
		return true
	}
	msg := err.Error()
	for _, s := range []string{
		"connection refused", "connection reset by peer", "no route to host", "TLS handshake timeout",
		"http2: client connection lost", "use of closed network connection", "unexpected EOF", ": EOF",
		"etcdserver: leader changed", "etcdserver: request timed out", "the server is currently unable to handle the request",
	} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return msg == "EOF"
}

// unanswered notes that a call saw the apiserver not answer; the first one of an outage is
// logged.
func (t *Target) unanswered(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.downSince.IsZero() {
		t.downSince = time.Now()
		t.logf("the apiserver does not answer, or is not ready (%v): retrying for up to %s", err, t.opts.Timeouts.withDefaults().APIServer)
	}
}

// answered notes that a call got an answer: an outage, if one was going on, is over.
func (t *Target) answered() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.downSince.IsZero() {
		return
	}
	d := time.Since(t.downSince)
	t.downSince = time.Time{}
	t.outages = append(t.outages, d)
	t.logf("the apiserver answers again, after %s", d.Round(100*time.Millisecond))
}

// APIServerOutages are the times the apiserver did not answer and then answered again, as
// the target's calls saw them (for tests that inject faults).
func (t *Target) APIServerOutages() []time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]time.Duration(nil), t.outages...)
}

// kubeletAuthzGrace is how long a kubelet's "Authorization error" is retried (retryKubeletAuthz).
const kubeletAuthzGrace = 60 * time.Second

// retryKubeletAuthz calls fn until it returns anything but a kubelet's authorization error, for
// grace at most. A kubelet that has just joined answers a request through the node proxy with
// "Authorization error (user=kube-apiserver-kubelet-client, ...)" (HTTP 500) until it can reach
// the apiserver's SubjectAccessReview: seen on a kind worker a moment after its cluster was made.
func retryKubeletAuthz(ctx context.Context, grace time.Duration, fn func() error) error {
	deadline := time.Now().Add(grace)
	for {
		err := fn()
		if err == nil || !isKubeletAuthzError(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Second):
		}
	}
}

// isKubeletAuthzError says whether err is a kubelet's failure to authorize a request (its
// authorizer could not ask the apiserver), as the node proxy passes it on.
func isKubeletAuthzError(err error) bool {
	return strings.Contains(err.Error(), "Authorization error (user=")
}
