package report

import (
	"context"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/internal/verify"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

var updateDocs = flag.Bool("update-docs", false, "write the example page's screenshot to docs/report.png")

// examplePage builds the page of the embedded example with the default scenarios.
func examplePage(t testing.TB) (*Page, []byte) {
	t.Helper()
	c, _, err := v1alpha1.ParseExample()
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.New(c)
	if err != nil {
		t.Fatal(err)
	}
	in := verify.Input{Plan: p, Spec: c}
	runs, err := VerifyRuns(in, ScenarioSet(in))
	if err != nil {
		t.Fatal(err)
	}
	pg, err := Build(Input{Plan: p, Runs: runs, Inputs: []string{"the embedded example"}})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteHTML(&b, pg); err != nil {
		t.Fatal(err)
	}
	return pg, []byte(b.String())
}

// browser starts Debian's chromium headless with a fresh profile and the flags that keep it off
// the network (this machine has none; background services would only produce refused requests).
func browser(t *testing.T) context.Context { return browserB(t) }

func browserB(t testing.TB) context.Context {
	t.Helper()
	exe, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("chromium not found (hack/install-deps.sh installs Debian's chromium): %v", err)
	}
	// A fresh profile per browser. Removed after the browser has gone (cleanups run last-in
	// first-out); its helper processes may still be closing files, hence the retries.
	profile, err := os.MkdirTemp("", "kubewin-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for i := 0; i < 50; i++ {
			if err := os.RemoveAll(profile); err == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Errorf("could not remove the browser profile %s", profile)
	})
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(profile),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.WindowSize(1400, 1000),
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel2 := chromedp.NewContext(actx)
	t.Cleanup(cancel2)
	ctx, cancel3 := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(cancel3)
	return ctx
}

// TestReportInChromium opens the example's page in a real browser: it loads with no console
// error and no request but the page itself, draws the gateway group, its VIP holder and node009,
// and under gateway-down=master1,master2,master3 a click on a failing flow to node009 shows its
// trace and marks where it breaks. A screenshot is kept (KUBEWIN_TEST_ARTIFACTS, else
// $TMPDIR/kubewin-test-artifacts).
func TestReportInChromium(t *testing.T) {
	pg, html := examplePage(t)
	var mu sync.Mutex
	var served []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		served = append(served, r.URL.Path)
		mu.Unlock()
		if r.URL.Path != "/report.html" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(html)
	}))
	defer srv.Close()
	page := srv.URL + "/report.html"

	ctx := browser(t)
	var problems, requests []string
	chromedp.ListenTarget(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.APITypeError || e.Type == runtime.APITypeWarning {
				problems = append(problems, "console "+string(e.Type))
			}
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+e.ExceptionDetails.Text+" "+exceptionText(e))
		case *network.EventRequestWillBeSent:
			requests = append(requests, e.Request.URL)
		}
	})
	var group, holder, win string
	if err := chromedp.Run(ctx,
		network.Enable(), runtime.Enable(),
		chromedp.Navigate(page),
		chromedp.WaitVisible(`body[data-ready="1"]`),
		chromedp.TextContent(`[data-group="`+pg.Groups[0].Name+`"]`, &group),
		chromedp.AttributeValue(`[data-holder]`, "data-holder", &holder, nil),
		chromedp.TextContent(`[data-node="node009"]`, &win),
	); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(group, pg.Groups[0].Members[0].Node) {
		t.Errorf("gateway group box %q does not name its member", group)
	}
	if holder != pg.Groups[0].Instances[0].Planned {
		t.Errorf("VIP holder drawn = %q, want the planned holder %q", holder, pg.Groups[0].Instances[0].Planned)
	}
	if !strings.Contains(win, "node009") || !strings.Contains(win, "l2bridge") || !strings.Contains(win, ".1 10.160.11.1") {
		t.Errorf("node009 box = %q, want its name, HNS network and .1 gateway", win)
	}

	// The outage: every member down; nobody holds node009's gateway; a failing flow to node009
	// shows its trace and the hop where it breaks.
	const outage = "gateway-down=master1,master2,master3"
	var unheld, trace, breaks string
	var clicked bool
	if err := chromedp.Run(ctx,
		chromedp.Click(`button[data-scenario="`+outage+`"]`),
		chromedp.WaitVisible(`[data-unheld]`),
		chromedp.TextContent(`[data-unheld]`, &unheld),
		chromedp.Evaluate(`(() => { const r = [...document.querySelectorAll("#failures tr.fail")].find(r => r.textContent.includes("node009/pod") && !r.textContent.includes("not traced")); if (!r) return false; r.click(); return true; })()`, &clicked),
	); err != nil {
		t.Fatal(err)
	}
	if !clicked {
		t.Fatalf("no traced failing flow to node009 listed under %s", outage)
	}
	if err := chromedp.Run(ctx,
		chromedp.TextContent(`#trace`, &trace),
		chromedp.AttributeValue(`[data-break]`, "data-break", &breaks, nil),
	); err != nil {
		t.Fatal(err)
	}
	var status string
	if err := chromedp.Run(ctx, chromedp.TextContent(`[data-health="node009"]`, &status)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(status, "gateway not held") {
		t.Errorf("node009's health row under %s = %q, want its gateway reported unheld", outage, status)
	}
	if !strings.Contains(unheld, "10.160.11.1") {
		t.Errorf("unheld gateway marker = %q", unheld)
	}
	if !strings.Contains(trace, "forward") || !strings.Contains(trace, "node009") && !strings.Contains(trace, "10.160.11") {
		t.Errorf("trace panel after the click = %q", trace)
	}
	if breaks == "" {
		t.Errorf("no break marker drawn for the clicked flow")
	}
	var png []byte
	if err := chromedp.Run(ctx, chromedp.FullScreenshot(&png, 100)); err != nil {
		t.Fatal(err)
	}
	// Kept after the test (not a t.TempDir) so that a person or CI can look at it.
	dir := os.Getenv("KUBEWIN_TEST_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "kubewin-test-artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "report-outage.png")
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes); page %d KiB", shot, len(png), len(html)/1024)
	if *updateDocs {
		if err := os.WriteFile(filepath.Join("..", "..", "docs", "report.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	mu.Lock()
	defer mu.Unlock()
	if len(problems) > 0 {
		t.Errorf("console errors or exceptions: %q", problems)
	}
	for _, r := range requests {
		if r != page && !strings.HasPrefix(r, "data:") {
			t.Errorf("the page made a request: %s", r)
		}
	}
	if len(served) != 1 {
		t.Errorf("server saw %q, want only /report.html", served)
	}
}

func exceptionText(e *runtime.EventExceptionThrown) string {
	if e.ExceptionDetails != nil && e.ExceptionDetails.Exception != nil {
		return e.ExceptionDetails.Exception.Description
	}
	return ""
}
