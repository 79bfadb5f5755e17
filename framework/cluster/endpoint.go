package cluster

import (
	"context"
	"net/http"
	"sync/atomic"

	"k8s.io/client-go/rest"
)

// An apiserver per gate setting (NodeControl.SetAPIServerGates): a node control may answer a
// change of the apiserver's gates with another apiserver of the same cluster (same etcd, same
// certificates) that runs them, instead of restarting the one the kubeconfig names. The
// target's clients then send every request there: one transport wrapper rewrites the host of
// each request to the endpoint in force, so the clientset, the metadata and discovery clients,
// the watches and the exec streams all follow it without being built again. The kubelet keeps
// the kubeconfig's apiserver: gates act on the apiserver that writes a pod, not on the one a
// kubelet reads it from, as in an HA control plane being upgraded one apiserver at a time.

// The admission half (apiserver.go) admits each case on the apiserver of the case's own gates
// while the node half's pods are created on the one in force: a request whose context names an
// endpoint (withEndpoint) goes there, whatever is in force.

// endpointKey is the context key of a request's own endpoint.
type endpointKey struct{}

// withEndpoint sends the requests made with ctx to host ("" = the kubeconfig's server).
func withEndpoint(ctx context.Context, host string) context.Context {
	return context.WithValue(ctx, endpointKey{}, host)
}

// endpoint is where the target's requests go: "" is the kubeconfig's server, else host:port.
type endpoint struct{ host atomic.Pointer[string] }

// set makes host ("" = the kubeconfig's) the endpoint of every request from now on.
func (e *endpoint) set(host string) { e.host.Store(&host) }

// get is the endpoint in force.
func (e *endpoint) get() string {
	if h := e.host.Load(); h != nil {
		return *h
	}
	return ""
}

// wrap adds the rewriter to cfg's transport chain.
func (e *endpoint) wrap(cfg *rest.Config) {
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return hostRewriter{e: e, next: rt} })
}

type hostRewriter struct {
	e    *endpoint
	next http.RoundTripper
}

func (h hostRewriter) RoundTrip(req *http.Request) (*http.Response, error) {
	host, own := req.Context().Value(endpointKey{}).(string)
	if !own {
		host = h.e.get()
	}
	if host == "" || req.URL.Host == host {
		return h.next.RoundTrip(req)
	}
	r := req.Clone(req.Context())
	r.URL.Host, r.Host = host, ""
	return h.next.RoundTrip(r)
}
