package flexmatch

import (
	"time"

	"github.com/anylift/anylift/internal/store"
)

// Estimated wait: the mean time from StartTime
// to completion of a configuration's last waitSamples COMPLETED tickets,
// in whole seconds; unknown until minWaitSamples exist.
const (
	waitSamples    = 100
	minWaitSamples = 5
)

// estimatedWait answers the configuration's estimated wait in seconds,
// ok false when there are too few samples.
func estimatedWait(tx store.Tx, config string) (secs int, ok bool, err error) {
	waits, err := tx.RecentWaits(config, waitSamples)
	if err != nil || len(waits) < minWaitSamples {
		return 0, false, err
	}
	var sum time.Duration
	for _, w := range waits {
		sum += w
	}
	return int((sum / time.Duration(len(waits))).Round(time.Second) / time.Second), true, nil
}
