package console_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"
	"github.com/chromedp/chromedp"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/fleettest"
)

// TestQueuePageInBrowser opens a queue's page with its graph, watches a
// placement started through the API appear without a reload (its
// hostile game session name as text), and opens the placement.
func TestQueuePageInBrowser(t *testing.T) {
	ctx := browser(t)
	e := fleettest.New(t)
	p := e.Process("host-a", "proc-1")
	e.Queue("arena", "")
	// A few minutes of history: one more placement each minute.
	for i := 0; i < 3; i++ {
		id := "warmup-" + string(rune('1'+i))
		e.Start("arena", id, nil)
		if i == 0 {
			e.Fulfil(p, id)
		}
		e.Clock.Set(e.Clock.Now().Add(time.Minute))
		if err := e.API.Server.History().Record(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.API.Server.Snapshots().Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatal(err)
	}
	dialogs := countDialogs(t, ctx)
	dir := screenshotDir(t)
	err := chromedp.Do(ctx,
		chromedp.Navigate(e.API.URL+"/console/queues"),
		chromedp.WaitVisible(chromedp.CSS(`#signin`)),
		chromedp.SendKeys(chromedp.CSS(`#access_key_id`), apitest.AccessKey),
		chromedp.SendKeys(chromedp.CSS(`#secret_access_key`), apitest.SecretKey),
		chromedp.Click(chromedp.CSS(`#signin-submit`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-queue="arena"]`)),
		screenshot(t, dir, "console-queues.png"),
		chromedp.Click(chromedp.CSS(`tr[data-queue="arena"] a`)),
		chromedp.WaitVisible(chromedp.CSS(`#chart[data-drawn]`)),
		chromedp.WaitVisible(chromedp.CSS(`#chart polyline.series`)),
		chromedp.WaitVisible(chromedp.CSS(`#destinations li`)),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := chromedp.Evaluate[bool](`window.__notReloaded = true`)(ctx, tg)
			return err
		}),
	)
	if err != nil {
		t.Fatal(err)
	}
	e.Start("arena", "live-1", &gamelift.StartGameSessionPlacementInput{GameSessionName: aws.String(hostileName),
		GameProperties: []types.GameProperty{{Key: aws.String("mode"), Value: aws.String(hostileValue)}}})
	row := `tr[data-placement="live-1"]`
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(row))); err != nil {
		t.Fatal(err)
	}
	name := run(t, ctx, chromedp.Text(chromedp.CSS(row+` td.name`)))
	injected := run(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll('#placements img, #placements script').length`))
	stayed := run(t, ctx, chromedp.Evaluate[int](`window.__notReloaded ? 1 : 0`))
	if err := chromedp.Do(ctx,
		screenshot(t, dir, "console-queue.png"),
		chromedp.Click(chromedp.CSS(row+` a`)),
		chromedp.WaitVisible(chromedp.CSS(`#placement-status`)),
		chromedp.WaitVisible(chromedp.CSS(`#stop`)),
		screenshot(t, dir, "console-placement.png"),
	); err != nil {
		t.Fatal(err)
	}
	if name != hostileName {
		t.Errorf("name cell = %q, want the hostile name as text", name)
	}
	if injected != 0 || dialogs.Load() != 0 {
		t.Errorf("markup ran: %d injected elements, %d dialogs", injected, dialogs.Load())
	}
	if stayed != 1 {
		t.Error("the page reloaded to show the new placement")
	}
}
