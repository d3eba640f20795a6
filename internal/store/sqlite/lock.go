package sqlite

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// LockFile is the file in the data directory that the server holding the
// store keeps locked, and in which it writes its process id.
const LockFile = "anylift.lock"

// InUseError says another process holds the data directory.
type InUseError struct {
	Dir    string
	Holder string // "pid N" as the holder wrote it; empty when unreadable
}

func (e *InUseError) Error() string {
	who := "another anylift"
	if e.Holder != "" {
		who += " (" + e.Holder + ")"
	}
	return fmt.Sprintf("data directory %s is in use by %s: stop it first, or give another --data-dir", e.Dir, who)
}

// lockDir takes the data directory for this process: one server per
// store, because two would both accept game servers and each push only
// to its own. The lock is the operating system's, on an open file, so it
// goes with the process however it ends (kill -9 included) and a stale
// lock file never blocks a start. release gives it up.
func lockDir(dir string) (release func() error, err error) {
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("data directory lock: %w", err)
	}
	held, err := tryLock(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("locking data directory %s: %w", dir, err)
	}
	if !held {
		b, _ := os.ReadFile(path)
		f.Close()
		return nil, &InUseError{Dir: dir, Holder: strings.TrimSpace(string(b))}
	}
	// The holder's id is for the message a second server prints; failing
	// to write it changes nothing else.
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(fmt.Sprintf("pid %d\n", os.Getpid())), 0)
	}
	return f.Close, nil
}
