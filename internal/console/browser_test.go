package console_test

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/fleettest"
	"github.com/anylift/anylift/internal/server"
	sdk "github.com/anylift/anylift/sdk/server"
)

// browser starts Debian's chromium headless for the test. Without it the
// test is skipped, except under CI=true, where it fails.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := os.Getenv("ANYLIFT_CHROMIUM")
	if path == "" {
		for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
			if p, err := exec.LookPath(name); err == nil {
				path = p
				break
			}
		}
	}
	if path == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium is not installed (apt-get install -y chromium)")
		}
		t.Skip("chromium is not installed; apt-get install -y chromium to run the browser tests")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1400, 1000),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true), chromedp.Flag("disable-dev-shm-usage", true),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	// A bound on the whole run, so a broken page fails instead of hanging.
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() {
		cancelTimeout()
		cancelCtx()
		cancelAlloc()
	})
	return ctx
}

// screenshotDir is where the browser test saves its screenshots:
// $ANYLIFT_SCREENSHOT_DIR, or the test's temporary directory.
func screenshotDir(t *testing.T) string {
	if d := os.Getenv("ANYLIFT_SCREENSHOT_DIR"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

func screenshot(t *testing.T, dir, name string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		buf, err := chromedp.FullScreenshot(100)(ctx, tg)
		if err != nil {
			return err
		}
		p := filepath.Join(dir, name)
		t.Logf("screenshot: %s", p)
		return os.WriteFile(p, buf, 0o644)
	})
}

// countDialogs dismisses and counts JavaScript dialogs (an injected
// alert would open one) until the test ends.
func countDialogs(t *testing.T, ctx context.Context) *atomic.Int32 {
	var n atomic.Int32
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		defer close(done)
		for _, err := range dialogs {
			if err != nil {
				return
			}
			n.Add(1)
			chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return &n
}

// recordMinutes moves e's clock on by a minute n times, with before(i)
// run first each time, and records the history of each minute; then the
// current snapshot is refreshed.
func recordMinutes(t *testing.T, e *fleettest.Env, n int, before func(i int)) {
	t.Helper()
	for i := 0; i < n; i++ {
		before(i)
		e.Clock.Set(e.Clock.Now().Add(time.Minute))
		if err := e.API.Server.History().Record(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.API.Server.Snapshots().Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// openConsole starts a blank page, counting its dialogs, and returns the
// count and the screenshot directory.
func openConsole(t *testing.T, ctx context.Context) (*atomic.Int32, string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatal(err)
	}
	return countDialogs(t, ctx), screenshotDir(t)
}

// signIn opens page and signs in with the test's key pair.
func signIn(page string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.Navigate(page),
		chromedp.WaitVisible(chromedp.CSS(`#signin`)),
		chromedp.SendKeys(chromedp.CSS(`#access_key_id`), apitest.AccessKey),
		chromedp.SendKeys(chromedp.CSS(`#secret_access_key`), apitest.SecretKey),
		chromedp.Click(chromedp.CSS(`#signin-submit`)),
	)
}

// markPage marks the open page, so that liveRow can tell whether it was
// reloaded since.
var markPage = chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
	_, err := chromedp.Evaluate[bool](`window.__notReloaded = true`)(ctx, tg)
	return err
})

// liveRow is what a row added to a list without a reload shows.
type liveRow struct {
	name     string // the row's name cell, as text
	injected int    // img and script elements in the list
	stayed   bool   // the page marked by markPage was not reloaded
}

// readLiveRow reads row, a row of the list element list.
func readLiveRow(t *testing.T, ctx context.Context, row, list string) liveRow {
	return liveRow{
		name:     run(t, ctx, chromedp.Text(chromedp.CSS(row+` td.name`))),
		injected: run(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll('`+list+` img, `+list+` script').length`)),
		stayed:   run(t, ctx, chromedp.Evaluate[int](`window.__notReloaded ? 1 : 0`)) == 1,
	}
}

// check fails the test unless the row shows the hostile name as text,
// no markup ran (no element injected, no dialog opened) and the page
// showed the new what without a reload.
func (l liveRow) check(t *testing.T, dialogs *atomic.Int32, what string) {
	t.Helper()
	if l.name != hostileName {
		t.Errorf("name cell = %q, want the hostile name as text", l.name)
	}
	if l.injected != 0 || dialogs.Load() != 0 {
		t.Errorf("markup ran: %d injected elements, %d dialogs", l.injected, dialogs.Load())
	}
	if !l.stayed {
		t.Error("the page reloaded to show the new " + what)
	}
}

// TestConsoleInBrowser signs in, finds the fleet and its graph, watches a
// game session created through the API appear without a reload, and
// checks that hostile names stay inert text.
func TestConsoleInBrowser(t *testing.T) {
	ctx := browser(t)
	e := fleettest.New(t, func(c *server.Config) { c.HealthCheckInterval, c.ReservationTimeout = time.Hour, time.Hour })
	procs := []string{"proc-1", "proc-2", "proc-3", "proc-4"}
	var ps []*sdk.Process
	for i, pid := range procs {
		ps = append(ps, e.Process("host-"+string(rune('a'+i)), pid))
	}
	// A few minutes of history: one more game session each minute.
	recordMinutes(t, e, 3, func(i int) {
		id := e.Session(ps[i], "match-"+string(rune('1'+i)))
		for j := 0; j <= i; j++ {
			e.GL.CreatePlayerSession(context.Background(), &gamelift.CreatePlayerSessionInput{GameSessionId: aws.String(id),
				PlayerId: aws.String("player-" + string(rune('a'+j)))})
		}
	})
	dialogs, dir := openConsole(t, ctx)
	fleetRow := `tr[data-fleet="` + e.Fleet + `"]`
	err := chromedp.Do(ctx,
		signIn(e.API.URL+"/console/"),
		chromedp.WaitVisible(chromedp.CSS(fleetRow)),
		screenshot(t, dir, "console-fleets.png"),
		chromedp.Click(chromedp.CSS(fleetRow+` a`)),
		chromedp.WaitVisible(chromedp.CSS(`#chart[data-drawn]`)),
		chromedp.WaitVisible(chromedp.CSS(`#chart polyline.series`)),
		chromedp.WaitVisible(chromedp.CSS(`#events tbody tr`)),
		screenshot(t, dir, "console-fleet.png"),
		chromedp.Navigate(e.API.URL+"/console/fleets/"+e.Fleet+"/computes"),
		chromedp.WaitVisible(chromedp.CSS(`section.compute`)),
		screenshot(t, dir, "console-computes.png"),
		chromedp.Navigate(e.API.URL+"/console/fleets/"+e.Fleet+"/sessions"),
		chromedp.WaitVisible(chromedp.CSS(`#sessions`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	// Created through the API while the page is open: it appears without
	// a reload, its hostile name and property as plain text.
	id := e.SessionWith(ps[3], &gamelift.CreateGameSessionInput{Name: aws.String(hostileName),
		GameProperties: []types.GameProperty{{Key: aws.String("mode"), Value: aws.String(hostileValue)}}})
	idString := id[strings.LastIndex(id, "/")+1:]
	row := `tr[data-session="` + idString + `"]`
	if err := chromedp.Do(ctx, markPage, chromedp.WaitVisible(chromedp.CSS(row))); err != nil {
		t.Fatal(err)
	}
	live := readLiveRow(t, ctx, row, "#sessions")
	if err := chromedp.Do(ctx,
		screenshot(t, dir, "console-sessions.png"),
		chromedp.Navigate(e.API.URL+"/console/session?id="+url.QueryEscape(id)),
		chromedp.WaitVisible(chromedp.CSS(`#session-name`)),
		screenshot(t, dir, "console-session.png"),
	); err != nil {
		t.Fatal(err)
	}
	live.check(t, dialogs, "session")
}

// run runs one action that returns a value, failing the test on error.
func run[T any](t *testing.T, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
