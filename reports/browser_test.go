package reports_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/reports"
)

// chromium is the headless browser the report test drives: $IDEMCHECK_CHROMIUM,
// else Debian's chromium on PATH (.ci/run installs it when it is missing).
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("IDEMCHECK_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no Chromium for the report.html test: install it with apt-get install -y chromium (or set IDEMCHECK_CHROMIUM to a Chrome binary)")
	return ""
}

// browser starts a headless Chromium of its own (a new empty profile, no
// network of its own: no sync, updates or QUIC) and returns a tab; the
// browser is gone when the test ends.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900))
	// Bounded: a browser that hangs fails the test instead of the package's timeout.
	ctx, cancelTime := context.WithTimeout(context.Background(), 3*time.Minute)
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	tab, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelTab(); cancelAlloc(); cancelTime() })
	return tab
}

// reportDir is where the test writes its runs: IDEMCHECK_REPORT_DIR when
// set (make test's .cache/test-reports, so the screenshots stay to look
// at), else a temporary folder.
func reportDir(t *testing.T) string {
	if d := os.Getenv("IDEMCHECK_REPORT_DIR"); d != "" {
		d = filepath.Join(d, "report-html-"+time.Now().UTC().Format("20060102T150405.000Z"))
		require.NoError(t, os.MkdirAll(d, 0o755))
		return d
	}
	return t.TempDir()
}

// inBrowser is what the test reads off a report in the browser.
type inBrowser struct {
	State   string `json:"state"` // body[data-mermaid]: "done" once Mermaid drew
	Verdict string `json:"verdict"`
	H1      string `json:"h1"`
	Text    string `json:"text"`
	Stories int    `json:"stories"`
	SVGs    int    `json:"svgs"`
	Drawn   int    `json:"drawn"`
	Frames  int    `json:"frames"`
}

// report.html opens in a real headless Chromium: the verdict, the counts
// and each failure are on it, Mermaid drew every sequence diagram (an
// <svg>), porcupine's page is framed, and a screenshot of the whole page lands
// in the run folder as report.png.
func TestReportHTMLInChromium(t *testing.T) {
	dir := reportDir(t)
	property, certification := htmlRuns(t, dir)
	tab := browser(t)
	c := certFixture()
	counts := c.Counts()

	for _, tc := range []struct {
		folder, h1, counts string
		stories, frames    int
		failures           []string
	}{
		{certification, "idemcheck certification: FAIL", strings.ToUpper(counts[:1]) + counts[1:], 2, 1,
			[]string{"replay-returns-first-response", "one-key-per-intent violated", "replay-consistent violated"}},
		{property, "idemcheck: idemcheck/property-url-1 FAIL — 2 deviations", "", 2, 0,
			[]string{"one-key-per-intent violated", "replay-consistent violated"}},
	} {
		t.Run(filepath.Base(tc.folder), func(t *testing.T) {
			require.NoError(t, chromedp.Do(tab,
				chromedp.Navigate("file://"+filepath.Join(tc.folder, reports.ReportFile)),
				chromedp.Poll[chromedp.Void](`document.body.dataset.mermaid !== "pending"`, chromedp.WithPollingInterval(100*time.Millisecond)),
			))
			got, err := chromedp.Run(tab, chromedp.Evaluate[inBrowser](`({
				state: document.body.dataset.mermaid,
				verdict: document.getElementById("verdict").innerText,
				h1: document.querySelector("section.page h1").innerText,
				text: document.body.innerText,
				stories: document.querySelectorAll("section.story").length,
				svgs: document.querySelectorAll("div.mermaid > svg").length,
				drawn: [...document.querySelectorAll("div.mermaid > svg")].filter(s => s.getBBox().width > 100 && s.querySelectorAll("text").length > 5).length,
				frames: document.querySelectorAll("iframe.porcupine").length,
			})`))
			require.NoError(t, err)
			// porcupine's page is folded: open each. A frame laid out
			// while out of view measures its boxes narrow, and a capture
			// beyond the viewport leaves an out-of-process frame blank;
			// so the viewport is made as tall as the page, the frames
			// loaded again in view, then the viewport captured.
			height, err := chromedp.Run(tab, chromedp.Evaluate[int64](`document.querySelectorAll("details.visualisation").forEach(d => d.open = true), document.documentElement.scrollHeight`))
			require.NoError(t, err)
			require.NoError(t, chromedp.Do(tab, chromedp.EmulateViewport(1280, height),
				chromedp.Evaluate[chromedp.Void](`document.querySelectorAll("iframe.porcupine").forEach(f => { delete f.dataset.loaded; f.src = f.src; })`),
				chromedp.Poll[chromedp.Void](`[...document.querySelectorAll("iframe.porcupine")].every(f => f.dataset.loaded)`, chromedp.WithPollingInterval(100*time.Millisecond))))
			shot, err := chromedp.Run(tab, chromedp.CaptureScreenshot())
			require.NoError(t, err)
			png := filepath.Join(tc.folder, "report.png")
			require.NoError(t, os.WriteFile(png, shot, 0o644))
			t.Logf("screenshot: %s", png)

			assert.Equal(t, "done", got.State, "Mermaid ran without error")
			assert.Equal(t, "FAIL", got.Verdict)
			assert.Equal(t, tc.h1, got.H1)
			assert.Contains(t, got.Text, tc.counts)
			for _, f := range tc.failures {
				assert.Contains(t, got.Text, f)
			}
			assert.Equal(t, tc.stories, got.Stories)
			assert.Equal(t, tc.stories, got.SVGs, "one sequence diagram per story, drawn as SVG")
			assert.Equal(t, tc.stories, got.Drawn, "each SVG has the diagram's participants and messages in it")
			assert.Equal(t, tc.frames, got.Frames)
			assert.Greater(t, len(shot), 10_000)
		})
	}
}
