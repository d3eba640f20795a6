//go:build !unix && !windows

package sqlite

import "os"

// tryLock: this platform has no file lock Anylift uses; the data
// directory is not guarded.
func tryLock(*os.File) (bool, error) { return true, nil }
