package report

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// EnvBrowser names the browser TestHTMLInABrowser loads index.html in (default: chromium on
// PATH, Debian's package, which .ci/run installs).
const EnvBrowser = "VOLPERM_BROWSER"

// browser is the headless browser of this machine, or why there is none: under CI=true its
// absence fails the test (CI installs it), elsewhere it skips it.
func browser(t *testing.T) string {
	t.Helper()
	if p := os.Getenv(EnvBrowser); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("no chromium on PATH and %s unset: CI installs Debian's chromium (hack/browser-up.sh) to check index.html in a real browser", EnvBrowser)
	}
	t.Skipf("no chromium on PATH (%s names another): index.html is checked in a real browser in CI", EnvBrowser)
	return ""
}

// TestHTMLInABrowser loads the index.html of a run with failures (htmlRun) in headless
// chromium and checks what a person sees: the verdict, one grid cell per pair of releases the
// target has, the failing case's differing lines on screen, its Observations folded until its
// summary is clicked, and no error on the console (a script, a blocked load, a bad tag).
func TestHTMLInABrowser(t *testing.T) {
	path := browser(t)
	page := filepath.Join(t.TempDir(), IndexHTML)
	if err := htmlRun().WriteHTML(page, nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.UserDataDir(t.TempDir()), chromedp.Flag("disable-dev-shm-usage", true))
	actx, stop := chromedp.NewExecAllocator(ctx, opts...)
	defer stop()
	var mu sync.Mutex
	var consoleErrors []string
	listen := func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledType("error") {
				consoleErrors = append(consoleErrors, fmt.Sprintf("console.error %v", e.Args))
			}
		case *runtime.EventExceptionThrown:
			consoleErrors = append(consoleErrors, "exception: "+e.ExceptionDetails.Text)
		case *log.EventEntryAdded:
			if e.Entry.Level == log.EntryLevelError {
				consoleErrors = append(consoleErrors, fmt.Sprintf("%s: %s %s", e.Entry.Source, e.Entry.Text, e.Entry.URL))
			}
		}
	}
	bctx, closeBrowser := chromedp.NewContext(actx, chromedp.WithListener(listen))
	defer closeBrowser()
	type seen struct {
		Verdict       string   `json:"verdict"`
		Cells         []string `json:"cells"`
		Diff          string   `json:"diff"`
		DiffVisible   bool     `json:"diffVisible"`
		ObservedShown bool     `json:"observedShown"`
		Title         string   `json:"title"`
	}
	const look = `(() => {
		const diff = document.querySelector("section.failure pre.diff");
		const observed = document.querySelector("section.failure pre.observed");
		return {
			verdict: document.getElementById("verdict").innerText,
			cells: [...document.querySelectorAll("#grid td[data-pair]")].map(td => td.dataset.pair + ": " + td.innerText.replace(/\s+/g, " ")),
			diff: diff ? diff.innerText : "",
			diffVisible: !!diff && diff.checkVisibility() && diff.getBoundingClientRect().height > 0,
			observedShown: !!observed && observed.checkVisibility(),
			title: document.title,
		};
	})()`
	var before, after seen
	err := chromedp.Do(bctx, chromedp.Navigate("file://"+page), chromedp.WaitReady(chromedp.CSS("body")))
	if err == nil {
		before, err = chromedp.Run(bctx, chromedp.Evaluate[seen](look))
	}
	if err == nil {
		err = chromedp.Do(bctx, chromedp.Click(chromedp.CSS("section.failure details summary")))
	}
	if err == nil {
		after, err = chromedp.Run(bctx, chromedp.Evaluate[seen](look))
	}
	if err != nil {
		t.Fatalf("chromium %s: %v", path, err)
	}
	t.Logf("seen: %+v", before)
	if before.Verdict != "FAILED" || !strings.HasPrefix(before.Title, "volperm: FAILED on target") {
		t.Errorf("verdict %q, title %q", before.Verdict, before.Title)
	}
	if strings.Join(before.Cells, "; ") != "v1.37 v1.37: 1 / 2 1 failed; v1.37 v1.36: 0 / 2 1 failed" {
		t.Errorf("grid cells %q, want one per pair of releases the target has", before.Cells)
	}
	for _, line := range []string{`volume "data" path ".": expected dir 0750 0:0, observed dir 1777 0:0`, `volume "data" path "f": expected file 0640 0:0, observed file 0644 0:0`} {
		if !before.DiffVisible || !strings.Contains(before.Diff, line) {
			t.Errorf("the failing case's differing line %q is not on screen (visible %v): %q", line, before.DiffVisible, before.Diff)
		}
	}
	if before.ObservedShown || !after.ObservedShown {
		t.Errorf("the Observations: shown %v before the click on their summary, %v after; want folded, then shown", before.ObservedShown, after.ObservedShown)
	}
	time.Sleep(200 * time.Millisecond) // the console's last events
	mu.Lock()
	defer mu.Unlock()
	if len(consoleErrors) > 0 {
		t.Errorf("console errors: %q", consoleErrors)
	}
}
