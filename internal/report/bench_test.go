package report

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/internal/testgen"
	"github.com/kubewin/kubewin/internal/verify"
)

// largePage builds the page of a generated cluster (testgen: Calico, upstream-tor/keepalived)
// with the normal state and the outage of the first gateway group.
func largePage(tb testing.TB, linux, windows int) (*Page, []byte) {
	tb.Helper()
	c := testgen.Cluster(linux, windows, max(1, windows/250))
	p, err := plan.New(c)
	if err != nil {
		tb.Fatal(err)
	}
	in := verify.Input{Plan: p, Spec: c}
	var members []string
	for _, m := range p.GatewayGroups[0].Members {
		members = append(members, m.Node)
	}
	runs, err := VerifyRuns(in, []string{"gateway-down=" + strings.Join(members, ",")})
	if err != nil {
		tb.Fatal(err)
	}
	pg, err := Build(Input{Plan: p, Runs: runs})
	if err != nil {
		tb.Fatal(err)
	}
	var b strings.Builder
	if err := WriteHTML(&b, pg); err != nil {
		tb.Fatal(err)
	}
	return pg, []byte(b.String())
}

// BenchmarkReport5000 builds the page of a 5,000-node cluster (4,000 Linux, 1,000 Windows):
// verify for two scenarios, Build and WriteHTML; page-bytes is the page's size (target < 5 MB).
func BenchmarkReport5000(b *testing.B) {
	var size int
	for i := 0; i < b.N; i++ {
		_, html := largePage(b, 4000, 1000)
		size = len(html)
	}
	b.ReportMetric(float64(size), "page-bytes")
}

// BenchmarkReport5000InChromium loads the 5,000-node page in headless Chromium and measures
// navigation → page ready (drawn, tables filled), then a scenario switch → redrawn (target: both
// under 2 s).
func BenchmarkReport5000InChromium(b *testing.B) {
	_, html := largePage(b, 4000, 1000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(html)
	}))
	defer srv.Close()
	var load, sw time.Duration
	for i := 0; i < b.N; i++ {
		ctx := browserB(b)
		start := time.Now()
		if err := chromedp.Run(ctx, chromedp.Navigate(srv.URL+"/r.html"), chromedp.WaitVisible(`body[data-ready="1"]`)); err != nil {
			b.Fatal(err)
		}
		load += time.Since(start)
		start = time.Now()
		var ok bool
		if err := chromedp.Run(ctx, chromedp.Evaluate(`(() => { const b = document.querySelectorAll("#scenarios button")[1]; b.click(); return b.classList.contains("on"); })()`, &ok)); err != nil || !ok {
			b.Fatalf("scenario switch: %v %v", err, ok)
		}
		sw += time.Since(start)
	}
	b.ReportMetric(float64(load.Milliseconds())/float64(b.N), "ms-to-ready")
	b.ReportMetric(float64(sw.Milliseconds())/float64(b.N), "ms-scenario-switch")
	b.ReportMetric(float64(len(html)), "page-bytes")
}
