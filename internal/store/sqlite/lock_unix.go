//go:build unix

package sqlite

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lockDir takes the data directory for this process alone: an exclusive
// advisory lock on its lock file, held until the returned release (or
// the process's end, kill -9 included). The server keeps the live game
// sessions in memory, fed by its own commits, so a second server writing
// the same store would make both answer from stale memory.
func lockDir(dir string) (release func() error, err error) {
	f, err := os.OpenFile(filepath.Join(dir, LockName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("data directory lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("data directory %s is in use by another anylift server: one server per embedded store", dir)
		}
		return nil, fmt.Errorf("data directory lock: %w", err)
	}
	return f.Close, nil // closing the file releases the lock
}
