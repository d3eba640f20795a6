package access

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// CheckInterval is how often, at most, a Keyring looks at its files.
const CheckInterval = 5 * time.Second

// Keyring is the keys the API accepts: fixed keys (--access-key) and the
// keys of a credentials file, taken up again when the file or a policy
// file it names changes, without a restart (keys added, rotated,
// revoked).
//
// A lookup looks at the files at most every CheckInterval, and only at
// their metadata (which file, modification time, size: one stat each); it
// reads them only when those changed. A file that cannot be used (a line
// malformed, a policy that does not parse, a file missing) is logged as an
// error, once, and the keys in use are kept until the files change again.
type Keyring struct {
	fixed []*Key
	file  string
	known []string
	every time.Duration
	now   func() time.Time
	log   *slog.Logger

	set       atomic.Pointer[Set]
	nextCheck atomic.Int64 // unix nanoseconds

	mu      sync.Mutex // one look at the files at a time
	seen    []os.FileInfo
	files   []string
	lastErr string
}

// KeyringConfig configures a Keyring.
type KeyringConfig struct {
	// Fixed maps access key ids to secrets with every right.
	Fixed map[string]string
	// File is the credentials file (ReadCredentials), "" for none.
	File string
	// Known is the action names a policy may grant (see ParsePolicy).
	Known []string
	Log   *slog.Logger
	Now   func() time.Time // time.Now when nil
}

// NewKeyring reads the credentials file, which must be usable now: its
// error names the file, the line and the problem.
func NewKeyring(cfg KeyringConfig) (*Keyring, error) {
	r := &Keyring{file: cfg.File, known: cfg.Known, every: CheckInterval, now: cfg.Now, log: cfg.Log}
	if r.now == nil {
		r.now = time.Now
	}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	ids := make([]string, 0, len(cfg.Fixed))
	for id := range cfg.Fixed {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		r.fixed = append(r.fixed, &Key{ID: id, Secret: cfg.Fixed[id]})
	}
	if r.file == "" {
		s, err := NewSet(r.fixed...)
		if err != nil {
			return nil, err
		}
		r.set.Store(s)
		return r, nil
	}
	files, seen, set, err := r.read()
	if err != nil {
		return nil, err
	}
	r.files, r.seen = files, seen
	r.set.Store(set)
	r.nextCheck.Store(r.now().Add(r.every).UnixNano())
	return r, nil
}

// Key returns the key of that id, looking at the files first when
// CheckInterval has passed since the last look.
func (r *Keyring) Key(id string) (*Key, bool) {
	if r.file != "" && r.now().UnixNano() >= r.nextCheck.Load() {
		r.check()
	}
	return r.set.Load().Key(id)
}

// Keys is the current set of keys.
func (r *Keyring) Keys() *Set { return r.set.Load() }

func (r *Keyring) check() {
	if !r.mu.TryLock() {
		return // another request is looking; this one uses what is there
	}
	defer r.mu.Unlock()
	now := r.now()
	if now.UnixNano() < r.nextCheck.Load() {
		return
	}
	r.nextCheck.Store(now.Add(r.every).UnixNano())
	r.reload()
}

// reload reads the files again when one of them changed since last read.
func (r *Keyring) reload() {
	if unchanged(r.files, r.seen) {
		return
	}
	files, seen, set, err := r.read()
	r.files, r.seen = files, seen // a refused content is not tried again until a file changes
	if err != nil {
		if msg := err.Error(); msg != r.lastErr {
			r.lastErr = msg
			r.log.Error("the credentials file changed but cannot be used; keeping the keys in use", "file", r.file, "err", err)
		}
		return
	}
	r.lastErr = ""
	old := r.set.Load()
	r.set.Store(set)
	added, removed, changed := diff(old, set)
	r.log.Info("credentials file reloaded", "file", r.file, "keys", set.Len(),
		"added", added, "removed", removed, "changed", changed)
}

// read reads the credentials file and its policies. files and seen are
// the files read, with their metadata taken before reading, even when the
// content is refused.
func (r *Keyring) read() (files []string, seen []os.FileInfo, set *Set, err error) {
	cf, err := ReadCredentials(r.file, r.known)
	if err != nil {
		return cf.Files, cf.Stats, nil, err
	}
	for _, k := range cf.Keys {
		for _, f := range r.fixed {
			if f.ID == k.ID {
				return cf.Files, cf.Stats, nil, fmt.Errorf("credentials file %s: access key %s is also given by --access-key", r.file, k.ID)
			}
		}
	}
	set, err = NewSet(append(append([]*Key(nil), r.fixed...), cf.Keys...)...)
	return cf.Files, cf.Stats, set, err
}

func stats(files []string) []os.FileInfo {
	out := make([]os.FileInfo, len(files))
	for i, f := range files {
		out[i], _ = os.Stat(f) // nil when missing: a change when it comes back
	}
	return out
}

// unchanged reports whether every file is the one seen, unchanged.
func unchanged(files []string, seen []os.FileInfo) bool {
	if len(files) != len(seen) {
		return false
	}
	for i, f := range files {
		fi, err := os.Stat(f)
		if errors.Is(err, os.ErrNotExist) && seen[i] == nil {
			continue
		}
		if err != nil || !sameFile(seen[i], fi) {
			return false
		}
	}
	return true
}

// sameFile reports whether b is a's file unchanged: the same file (a
// rename over it makes another), modification time and size.
func sameFile(a, b os.FileInfo) bool {
	return a != nil && b != nil && os.SameFile(a, b) && a.ModTime().Equal(b.ModTime()) && a.Size() == b.Size()
}

// diff names the key ids added, removed and changed (secret, policy or
// rate) from old to cur.
func diff(old, cur *Set) (added, removed, changed []string) {
	for id, k := range cur.keys {
		o, ok := old.keys[id]
		switch {
		case !ok:
			added = append(added, id)
		case o.Secret != k.Secret || o.PolicyFile != k.PolicyFile || !samePolicy(o, k) || !sameRate(o.Rate, k.Rate):
			changed = append(changed, id)
		}
	}
	for id := range old.keys {
		if _, ok := cur.keys[id]; !ok {
			removed = append(removed, id)
		}
	}
	sort.Strings(added)
	sort.Strings(removed)
	sort.Strings(changed)
	return added, removed, changed
}

// samePolicy reports whether both keys have no policy or policies read
// from the same bytes.
func samePolicy(a, b *Key) bool {
	if a.Policy == nil || b.Policy == nil {
		return a.Policy == b.Policy
	}
	return a.Policy.digest == b.Policy.digest
}

func sameRate(a, b *Rate) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
