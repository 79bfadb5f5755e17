package container

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/pkg/stdcopy"
	dcontainer "github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/lifecycle"
	probeimage "github.com/volperm/volperm/framework/probe/image"
)

// Labels on every container the target starts; `docker ps -a --filter label=volperm.dev/target=container`
// lists what a run left (nothing, when it ends).
const (
	LabelTarget = "volperm.dev/target"
	LabelRun    = "volperm.dev/run"
)

// engine is one Docker engine the target talks to: its client, the probe image, and the
// containers started and not yet removed.
type engine struct {
	cli   *client.Client
	host  string
	image string
	run   string

	version, apiVersion string

	// removing makes removals one at a time: Debian's dockerd 20.10 deadlocked here (its
	// containers listed Up, every later stop or remove hanging) when a batch's five containers
	// were removed at once, and before that in libnetwork (sweep.go).
	removing sync.Mutex

	mu   sync.Mutex
	live map[string]bool
	// interrupted: a start was cancelled, so the engine may create a container of this run
	// after removeAll's first look.
	interrupted bool
}

// engineHost is the engine testcontainers-go and the Docker client talk to.
func engineHost() string {
	if h := os.Getenv("DOCKER_HOST"); h != "" {
		return h
	}
	return client.DefaultDockerHost
}

// connect reaches the engine (bounded), or says which socket does not answer and how to start one.
func connect(ctx context.Context, run string) (*engine, error) {
	disableReaper()
	host := engineHost()
	noEngine := func(err error) error {
		return fmt.Errorf("no container engine answers at %s (set DOCKER_HOST for another): start one with hack/docker-up.sh: %w", host, err)
	}
	cli, err := client.New(client.FromEnv)
	if err != nil {
		return nil, noEngine(err)
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := cli.Ping(pctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		cli.Close()
		return nil, noEngine(err)
	}
	v, err := cli.ServerVersion(pctx, client.ServerVersionOptions{})
	if err != nil {
		cli.Close()
		return nil, noEngine(err)
	}
	return &engine{cli: cli, host: host, run: run, version: v.Version, apiVersion: v.APIVersion, live: map[string]bool{}}, nil
}

// ensureImage builds the probe image (framework/probe/image) and imports it unless the engine
// has it, removing the engine's older tags of its repository (probeimage.Ensure, the one
// importer; the engine through its API: imageAPI).
func (e *engine) ensureImage(ctx context.Context) error {
	img, err := probeimage.Build(ctx, "")
	if err != nil {
		return err
	}
	if _, _, err := probeimage.Ensure(ctx, imageAPI{e.cli}, img); err != nil {
		return err
	}
	e.image = img.Tag
	return nil
}

// imageAPI is the engine's API client as a probeimage.Engine.
type imageAPI struct{ cli *client.Client }

func (a imageAPI) Has(ctx context.Context, tag string) (bool, error) {
	_, err := a.cli.ImageInspect(ctx, tag)
	switch {
	case err == nil:
		return true, nil
	case cerrdefs.IsNotFound(err):
		return false, nil
	}
	return false, err
}

func (a imageAPI) Import(ctx context.Context, tag string, changes []string, layer []byte) error {
	rc, err := a.cli.ImageImport(ctx, client.ImageImportSource{Source: bytes.NewReader(layer), SourceName: "-"}, tag, client.ImageImportOptions{
		Message: "volperm " + tag,
		Changes: changes,
	})
	if err != nil {
		return err
	}
	defer rc.Close()
	// The answer is a JSON stream; an error arrives as {"errorDetail": ...} in it.
	dec := json.NewDecoder(rc)
	for {
		var msg struct {
			Error string `json:"error"`
		}
		if err := dec.Decode(&msg); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("read answer: %w", err)
		}
		if msg.Error != "" {
			return errors.New(msg.Error)
		}
	}
}

func (a imageAPI) Tags(ctx context.Context, repo string) ([]string, error) {
	list, err := a.cli.ImageList(ctx, client.ImageListOptions{Filters: make(client.Filters).Add("reference", repo)})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, im := range list.Items {
		out = append(out, im.RepoTags...)
	}
	return out, nil
}

func (a imageAPI) Remove(ctx context.Context, tag string) error {
	_, err := a.cli.ImageRemove(ctx, tag, client.ImageRemoveOptions{})
	return err
}

// bind is one bind mount of a container.
type bind struct {
	Source, Target string
	ReadOnly       bool
}

// userKey identifies a user set: one container per key.
func userKey(u framework.User) string {
	g := make([]string, 0, len(u.Groups))
	for _, x := range u.Groups {
		g = append(g, strconv.FormatInt(x, 10))
	}
	sort.Strings(g)
	return fmt.Sprintf("%d:%d:%s", u.UID, u.GID, strings.Join(g, ","))
}

// start starts one container of the probe image running as user with binds, and returns its id.
// A container that was created is tracked (and removed by remove/removeAll) even when starting
// it failed.
func (e *engine) start(ctx context.Context, user framework.User, binds []bind) (string, error) {
	mounts := make([]mount.Mount, 0, len(binds))
	for _, b := range binds {
		mounts = append(mounts, mount.Mount{
			Type: mount.TypeBind, Source: b.Source, Target: b.Target, ReadOnly: b.ReadOnly,
			// Kubernetes' default MountPropagationNone is a private bind.
			BindOptions: &mount.BindOptions{Propagation: mount.PropagationRPrivate},
		})
	}
	groups := make([]string, 0, len(user.Groups))
	for _, g := range user.Groups {
		groups = append(groups, strconv.FormatInt(g, 10))
	}
	req := testcontainers.GenericContainerRequest{
		ContainerRequest: testcontainers.ContainerRequest{
			Image:  e.image,
			Labels: containerLabels(e.run),
			ConfigModifier: func(c *dcontainer.Config) {
				c.User = fmt.Sprintf("%d:%d", user.UID, user.GID)
			},
			HostConfigModifier: func(hc *dcontainer.HostConfig) {
				hc.NetworkMode = "none"
				hc.GroupAdd = groups
				hc.Mounts = mounts
			},
		},
		Started: true,
		Logger:  tclog.NewNoopLogger(),
	}
	c, err := testcontainers.GenericContainer(ctx, req)
	if err != nil && ctx.Err() != nil {
		// The engine may still create the container after the client gave up (removeAll).
		e.mu.Lock()
		e.interrupted = true
		e.mu.Unlock()
	}
	if c != nil && c.GetContainerID() != "" {
		e.mu.Lock()
		e.live[c.GetContainerID()] = true
		e.mu.Unlock()
	}
	if err != nil {
		if c != nil && c.GetContainerID() != "" {
			err = errors.Join(err, e.remove(ctx, c.GetContainerID()))
		}
		return "", fmt.Errorf("start a probe container as uid %d gid %d groups %v: %w", user.UID, user.GID, user.Groups, err)
	}
	return c.GetContainerID(), nil
}

// inside is container id as a lifecycle.Inside: the probe binary run by docker exec, the
// Request as its argument.
func (e *engine) inside(id string) lifecycle.Inside {
	return lifecycle.ExecInside(fmt.Sprintf("container %.12s", id), func(ctx context.Context, req []byte) ([]byte, error) {
		stdout, stderr, code, err := e.exec(ctx, id, []string{probeimage.Path, "-request", string(req)})
		if err != nil {
			return nil, err
		}
		if code != 0 {
			return nil, fmt.Errorf("probe in container %.12s exited %d: %s", id, code, strings.TrimSpace(stderr))
		}
		return []byte(stdout), nil
	})
}

// exec runs cmd in container id as the container's user and waits for it. It talks to the
// engine directly rather than through testcontainers-go's Exec, which polls for the exit code
// every 100 ms (a third of an exec here) and mixes stdout with stderr.
func (e *engine) exec(ctx context.Context, id string, cmd []string) (stdout, stderr string, code int, err error) {
	created, err := e.cli.ExecCreate(ctx, id, client.ExecCreateOptions{Cmd: cmd, AttachStdout: true, AttachStderr: true})
	if err != nil {
		return "", "", 0, fmt.Errorf("exec in container %.12s: %w", id, err)
	}
	att, err := e.cli.ExecAttach(ctx, created.ID, client.ExecAttachOptions{})
	if err != nil {
		return "", "", 0, fmt.Errorf("exec in container %.12s: attach: %w", id, err)
	}
	defer att.Close()
	var out, errOut bytes.Buffer
	done := make(chan error, 1)
	go func() {
		_, err := stdcopy.StdCopy(&out, &errOut, att.Reader)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			return "", "", 0, fmt.Errorf("exec in container %.12s: read output: %w", id, err)
		}
	case <-ctx.Done():
		return "", "", 0, ctx.Err()
	}
	// The engine marks the exec stopped shortly after closing its output.
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		st, err := e.cli.ExecInspect(ctx, created.ID, client.ExecInspectOptions{})
		if err != nil {
			return "", "", 0, fmt.Errorf("exec in container %.12s: inspect: %w", id, err)
		}
		if !st.Running {
			return out.String(), errOut.String(), st.ExitCode, nil
		}
		select {
		case <-ctx.Done():
			return "", "", 0, ctx.Err()
		case <-time.After(wait):
		}
	}
}

// remove removes container id (force: it is killed), also when ctx is already cancelled; one
// removal at a time (removing).
func (e *engine) remove(ctx context.Context, id string) error {
	e.removing.Lock()
	defer e.removing.Unlock()
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := removeContainer(rctx, e.cli, id); err != nil {
		return fmt.Errorf("remove probe container %.12s: %w", id, err)
	}
	e.mu.Lock()
	delete(e.live, id)
	e.mu.Unlock()
	return nil
}

// removeAll removes every container this run started: those tracked, then any other carrying
// this run's label (one created while its start was cancelled).
func (e *engine) removeAll(ctx context.Context) error {
	e.mu.Lock()
	ids := make([]string, 0, len(e.live))
	for id := range e.live {
		ids = append(ids, id)
	}
	e.mu.Unlock()
	var errs []error
	for _, id := range ids {
		errs = append(errs, e.remove(ctx, id))
	}
	e.mu.Lock()
	looks := 1
	if e.interrupted {
		// A create the engine finishes after a cancelled start shows up a moment later: look
		// again until two looks a second apart find nothing (TestCancelLeavesNothing found three
		// such containers after Close on a busy engine).
		looks = 6
	}
	e.mu.Unlock()
	quiet := 0
	for i := 0; i < looks && quiet < 2; i++ {
		if i > 0 {
			time.Sleep(time.Second)
		}
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		list, err := e.cli.ContainerList(lctx, client.ContainerListOptions{All: true, Filters: make(client.Filters).Add("label", LabelRun+"="+e.run)})
		cancel()
		if err != nil {
			return errors.Join(append(errs, fmt.Errorf("list this run's probe containers: %w", err))...)
		}
		if len(list.Items) == 0 {
			quiet++
		}
		for _, c := range list.Items {
			errs = append(errs, e.remove(ctx, c.ID))
		}
	}
	return errors.Join(errs...)
}
