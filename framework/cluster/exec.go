package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	// client-go v0.37's executors return k8s.io/streaming's UpgradeFailureError (v1.37 moved
	// httpstream there): apimachinery's IsUpgradeFailure never matches it, and an exec through a
	// kubelet that refuses WebSockets (v1.34, v1.35 under a v1.37 apiserver: 403) then never fell
	// back to SPDY as kubectl does.
	"k8s.io/streaming/pkg/httpstream"
)

// exec runs cmd in the pod's probe container, stdin from in, and returns stdout (execIn).
func (t *Target) exec(ctx context.Context, ns, pod string, cmd []string, in []byte) ([]byte, error) {
	return t.execIn(ctx, ns, pod, probeContainer, cmd, in)
}

// execIn runs cmd in container of the pod, stdin from in, and returns stdout. It is retried
// only when the command did not start (the probes must not run twice): the apiserver refused
// the connection, or the runtime failed before it started the process (runtimeNotStarted);
// each attempt bounded by execTimeout.
func (t *Target) execIn(ctx context.Context, ns, pod, container string, cmd []string, in []byte) ([]byte, error) {
	// The apiserver answers (or an outage is waited out) before the exec, not in the middle.
	if _, err := t.getPod(ctx, ns, pod); err != nil {
		return nil, fmt.Errorf("exec %s in %s/%s: %w", cmd[0], ns, pod, err)
	}
	for attempt := 1; ; attempt++ {
		out, err := t.execCall(ctx, ns, pod, container, cmd, in)
		if err == nil || !runtimeNotStarted(err) || attempt == runtimeAttempts || ctx.Err() != nil {
			return out, err
		}
		t.logf("exec %s in %s/%s: the runtime did not start it (%v); again in %s", cmd[0], ns, pod, err, runtimeRetryDelay)
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(runtimeRetryDelay):
		}
	}
}

// The runtime's refusals to start an exec are tried again, runtimeAttempts times in all,
// runtimeRetryDelay apart.
const (
	runtimeAttempts   = 3
	runtimeRetryDelay = 2 * time.Second
)

// runtimeNotStarted reports whether the container runtime failed an exec before it started the
// process: containerd's CRI ExecSync/Exec loads the container's task first ("failed to load
// task", wrapped by the kubelet as "failed to exec in container"), and nothing of the command
// ran. Seen once in CI (issue 34), right after a kubelet restart on a node loaded by other
// clusters: "failed to exec in container: failed to load task: context deadline exceeded".
func runtimeNotStarted(err error) bool {
	return strings.Contains(err.Error(), "failed to exec in container: failed to load task")
}

// execCall is one exec of execIn, through the apiserver's outages (callWith).
func (t *Target) execCall(ctx context.Context, ns, pod, container string, cmd []string, in []byte) ([]byte, error) {
	var out []byte
	err := t.callWith(ctx, execTimeout, func(actx context.Context) error {
		var err error
		out, err = t.execOnce(actx, ns, pod, container, cmd, in)
		switch {
		case err == nil:
		case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
			return permanentError{fmt.Errorf("%w (not finished within %s)", err, execTimeout)}
		case execNotStarted(err):
		case isTransient(err):
			return permanentError{&execCutError{err}}
		default:
			return permanentError{err}
		}
		return err
	})
	return out, err
}

// execCutError is an exec whose connection was cut while the command ran: it is not run again
// in the same container, so that no probe runs twice on the same volumes (runPodOnceMore runs
// the pod's cases once more in a new pod, on new volumes).
type execCutError struct{ err error }

func (e *execCutError) Error() string {
	return e.err.Error() + " (the connection was cut while the command ran: it is not run again in that pod, so that no probe runs twice on its volumes)"
}
func (e *execCutError) Unwrap() error { return e.err }

// execNotStarted reports whether an exec failed before it reached the apiserver.
func execNotStarted(err error) bool {
	return utilnet.IsConnectionRefused(err) || strings.Contains(err.Error(), "connection refused") ||
		strings.Contains(err.Error(), "no route to host")
}

func (t *Target) execOnce(ctx context.Context, ns, pod, container string, cmd []string, in []byte) ([]byte, error) {
	return Exec(ctx, t.config, t.client, ns, pod, container, cmd, in)
}

// Exec runs cmd once in container of pod ns/pod, stdin from in (nil: none), and returns its
// stdout: over WebSockets, or SPDY where the kubelet refuses them (as kubectl). A command that
// exits non-zero is an error with its stderr.
func Exec(ctx context.Context, config *rest.Config, client kubernetes.Interface, ns, pod, container string, cmd []string, in []byte) ([]byte, error) {
	req := client.CoreV1().RESTClient().Post().Resource("pods").Namespace(ns).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: container, Command: cmd, Stdin: in != nil, Stdout: true, Stderr: true},
			scheme.ParameterCodec)
	ws, err := remotecommand.NewWebSocketExecutor(config, "GET", req.URL().String())
	if err != nil {
		return nil, err
	}
	spdy, err := remotecommand.NewSPDYExecutor(config, "POST", req.URL())
	if err != nil {
		return nil, err
	}
	ex, err := remotecommand.NewFallbackExecutor(ws, spdy, httpstream.IsUpgradeFailure)
	if err != nil {
		return nil, err
	}
	var stdout, stderr bytes.Buffer
	opts := remotecommand.StreamOptions{Stdout: &stdout, Stderr: &stderr}
	if in != nil {
		opts.Stdin = bytes.NewReader(in)
	}
	if err := ex.StreamWithContext(ctx, opts); err != nil {
		return nil, fmt.Errorf("exec %s in %s/%s: %w: %s", cmd[0], ns, pod, err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}
