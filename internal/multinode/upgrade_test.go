package multinode

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
)

// upgradeFrom is the build the rolling upgrade starts from: an earlier
// commit of this repository, moved forward from time to time so that the
// test follows what a user upgrading from the last release would run.
// ANYLIFT_UPGRADE_FROM names another revision.
const upgradeFrom = "7a55d31b36ea2ae16b2176cedc975f53cabfc089"

// buildRevision builds cmd/anylift as it was at rev, from the
// repository's history, or skips the test when the history does not hold
// it (a shallow checkout).
func buildRevision(t *testing.T, rev string) string {
	t.Helper()
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not in a git checkout: %v", err)
	}
	repo := strings.TrimSpace(string(top))
	if err := exec.Command("git", "-C", repo, "cat-file", "-e", rev+"^{commit}").Run(); err != nil {
		t.Skipf("revision %s is not in this checkout's history (shallow clone?)", rev)
	}
	src := t.TempDir()
	archive := exec.Command("git", "-C", repo, "archive", "--format=tar", rev)
	untar := exec.Command("tar", "-x", "-C", src)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	untar.Stdin = pipe
	if err := untar.Start(); err != nil {
		t.Fatal(err)
	}
	if err := archive.Run(); err != nil {
		t.Fatalf("git archive %s: %v", rev, err)
	}
	if err := untar.Wait(); err != nil {
		t.Fatalf("tar: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "anylift-old")
	build := exec.Command("go", "build", "-o", bin, "./cmd/anylift")
	build.Dir = src
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v\n%s", rev, err, out)
	}
	return bin
}

// Two nodes of an earlier build are replaced, one at a time, by nodes of
// this build, as docs/operations.md says to upgrade: SIGTERM drains a
// node (its game servers reconnect through the balancer to the other),
// the new binary starts on the same address, and the next node follows
// once it is ready. Placements and reads run through the balancer the
// whole time; none may fail, and everything acknowledged is there at the
// end, served by the new build alone.
func TestRollingUpgradeKeepsService(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an earlier anylift and starts nginx and four binaries")
	}
	c := prepareCluster(t)
	rev := upgradeFrom
	if r := os.Getenv("ANYLIFT_UPGRADE_FROM"); r != "" {
		rev = r
	}
	old := buildRevision(t, rev)
	c.start(2, old)
	const procs = 16
	g := newGame(t, c, 2, procs/2)
	c.waitFor("every process ready", 20*time.Second, func() bool {
		return c.count(`SELECT COUNT(*) FROM processes WHERE status = 'ACTIVE' AND connected = 1 AND healthy = 1`) == procs
	})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	acked, errs := g.placeMany(ctx, "before", 2)
	if len(errs) > 0 {
		t.Fatalf("placements on the earlier build: %v", errs)
	}

	// Load through the balancer while the nodes are replaced: reads in a
	// loop, and a placement every 400 ms.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var loadErrs []error
	reads, during := 0, []placed{}
	fail := func(err error) {
		mu.Lock()
		loadErrs = append(loadErrs, err)
		mu.Unlock()
	}
	wg.Add(2)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := g.gl.SearchGameSessions(ctx, &gamelift.SearchGameSessionsInput{FleetId: aws.String(g.fleet),
				FilterExpression: aws.String("hasAvailablePlayerSessions=true")}); err != nil {
				fail(fmt.Errorf("search: %w", err))
			}
			if _, err := g.gl.DescribeGameSessions(ctx, &gamelift.DescribeGameSessionsInput{FleetId: aws.String(g.fleet)}); err != nil {
				fail(fmt.Errorf("describe: %w", err))
			}
			mu.Lock()
			reads += 2
			mu.Unlock()
		}
	}()
	go func() {
		defer wg.Done()
		tick := time.NewTicker(400 * time.Millisecond)
		defer tick.Stop()
		var pw sync.WaitGroup
		defer pw.Wait()
		for i := 0; i < 10; i++ {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			pw.Add(1)
			go func() {
				defer pw.Done()
				p, err := g.place(ctx, fmt.Sprintf("during-%d", i))
				if err != nil {
					fail(err)
					return
				}
				mu.Lock()
				during = append(during, p)
				mu.Unlock()
			}()
		}
	}()

	for i, n := range c.nodes {
		if err := n.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		<-n.done
		if n.err != nil {
			t.Errorf("node %d of the earlier build exited: %v", i, n.err)
		}
		began := time.Now()
		nn := c.startNodeOf(c.bin, n.addr, "ws://"+strings.TrimPrefix(c.lbURL, "http://"))
		c.waitFor(fmt.Sprintf("node %d of this build to be ready", i), 15*time.Second, func() bool {
			resp, err := http.Get("http://" + nn.addr + "/readyz")
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		})
		t.Logf("node %d replaced: ready %v after the earlier one exited", i, time.Since(began).Round(time.Millisecond))
		c.nodes[i] = nn
	}
	c.waitFor("every process connected to a node of this build", 20*time.Second, func() bool {
		h := c.heldBy()
		return h[c.nodes[0].internal]+h[c.nodes[1].internal] == procs
	})
	close(stop)
	wg.Wait()
	mu.Lock()
	t.Logf("during the upgrade: %d reads, %d placements acknowledged, %d errors", reads, len(during), len(loadErrs))
	if len(loadErrs) > 0 {
		t.Errorf("calls failed during the upgrade: %v", loadErrs)
	}
	acked = append(acked, during...)
	mu.Unlock()

	after, errs := g.placeMany(ctx, "after", 2)
	if len(errs) > 0 {
		t.Errorf("placements on this build: %v", errs)
	}
	g.check(t, c, append(acked, after...))
}
