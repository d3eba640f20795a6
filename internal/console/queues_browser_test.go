package console_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"
	"github.com/chromedp/chromedp"

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
	recordMinutes(t, e, 3, func(i int) {
		id := "warmup-" + string(rune('1'+i))
		e.Start("arena", id, nil)
		if i == 0 {
			e.Fulfil(p, id)
		}
	})
	dialogs, dir := openConsole(t, ctx)
	err := chromedp.Do(ctx,
		signIn(e.API.URL+"/console/queues"),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-queue="arena"]`)),
		screenshot(t, dir, "console-queues.png"),
		chromedp.Click(chromedp.CSS(`tr[data-queue="arena"] a`)),
		chromedp.WaitVisible(chromedp.CSS(`#chart[data-drawn]`)),
		chromedp.WaitVisible(chromedp.CSS(`#chart polyline.series`)),
		chromedp.WaitVisible(chromedp.CSS(`#destinations li`)),
		markPage,
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
	live := readLiveRow(t, ctx, row, "#placements")
	if err := chromedp.Do(ctx,
		screenshot(t, dir, "console-queue.png"),
		chromedp.Click(chromedp.CSS(row+` a`)),
		chromedp.WaitVisible(chromedp.CSS(`#placement-status`)),
		chromedp.WaitVisible(chromedp.CSS(`#stop`)),
		screenshot(t, dir, "console-placement.png"),
	); err != nil {
		t.Fatal(err)
	}
	live.check(t, dialogs, "placement")
}
