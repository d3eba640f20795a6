package sdkserver

import (
	"crypto/tls"
	"errors"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// CertCheckInterval is how often, at most, a ReloadingCertificate looks at
// its files.
const CertCheckInterval = 5 * time.Second

// ReloadingCertificate serves the certificate pair in two files
// (--tls-cert, --tls-key) and takes up a new pair when the files change,
// without a restart: what a renewal by an ACME client or a secret mounted
// by an orchestrator needs.
//
// A handshake looks at the files at most every CertCheckInterval, and only
// by their metadata (which file, modification time, size: two stats); it
// reads them only when those changed. An idle server does not look at all.
// A pair that cannot be used (half written, key not matching, a file
// missing) is logged once and the previous certificate kept; the next
// change of the files is tried again.
//
// Watching the files was chosen over a reload on SIGHUP: it needs no step
// from whoever renews the certificate, and works the same where signals
// are awkward (containers whose secrets are updated in place, Windows).
type ReloadingCertificate struct {
	certFile, keyFile string
	every             time.Duration
	now               func() time.Time
	log               *slog.Logger

	cert      atomic.Pointer[tls.Certificate]
	nextCheck atomic.Int64 // unix nanoseconds

	mu         sync.Mutex // one look at the files at a time
	seen       [2]os.FileInfo
	missingErr string // the last missing-file error logged
}

// NewReloadingCertificate loads the pair in certFile and keyFile, which
// must be valid now. now is the clock (time.Now when nil); log gets the
// reloads and the refusals.
func NewReloadingCertificate(certFile, keyFile string, log *slog.Logger, now func() time.Time) (*ReloadingCertificate, error) {
	if certFile == "" || keyFile == "" {
		return nil, errors.New("tls: both a certificate and a key file are needed")
	}
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &ReloadingCertificate{certFile: certFile, keyFile: keyFile, every: CertCheckInterval, now: now, log: log}
	seen, err := r.stat()
	if err != nil {
		return nil, err
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	r.seen = seen
	r.cert.Store(&cert)
	r.nextCheck.Store(now().Add(r.every).UnixNano())
	return r, nil
}

// GetCertificate is tls.Config's GetCertificate.
func (r *ReloadingCertificate) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	r.maybeReload()
	return r.cert.Load(), nil
}

// Certificate is the certificate being served.
func (r *ReloadingCertificate) Certificate() *tls.Certificate { return r.cert.Load() }

func (r *ReloadingCertificate) maybeReload() {
	if r.now().UnixNano() < r.nextCheck.Load() {
		return
	}
	if !r.mu.TryLock() {
		return // another handshake is looking; this one serves what is there
	}
	defer r.mu.Unlock()
	now := r.now()
	if now.UnixNano() < r.nextCheck.Load() {
		return
	}
	r.nextCheck.Store(now.Add(r.every).UnixNano())
	r.reload()
}

// reload reads the pair again when its files changed since last read.
func (r *ReloadingCertificate) reload() {
	seen, err := r.stat()
	if err != nil {
		if err.Error() != r.missingErr {
			r.missingErr = err.Error()
			r.log.Warn("TLS certificate files unreadable; keeping the certificate in use", "cert", r.certFile, "key", r.keyFile, "err", err)
		}
		return
	}
	r.missingErr = ""
	if sameFile(r.seen[0], seen[0]) && sameFile(r.seen[1], seen[1]) {
		return
	}
	r.seen = seen // a pair refused is not tried again until it changes
	cert, err := tls.LoadX509KeyPair(r.certFile, r.keyFile)
	if err != nil {
		r.log.Warn("TLS certificate files changed but the new pair cannot be used; keeping the certificate in use", "cert", r.certFile, "key", r.keyFile, "err", err)
		return
	}
	r.cert.Store(&cert)
	attrs := []any{"cert", r.certFile}
	if leaf := cert.Leaf; leaf != nil {
		attrs = append(attrs, "subject", leaf.Subject.String(), "not_after", leaf.NotAfter.UTC().Format(time.RFC3339))
		if now := r.now(); now.After(leaf.NotAfter) {
			r.log.Warn("the reloaded TLS certificate has expired", append(attrs, "expired", leaf.NotAfter.UTC().Format(time.RFC3339))...)
		}
	}
	r.log.Info("TLS certificate reloaded", attrs...)
}

func (r *ReloadingCertificate) stat() ([2]os.FileInfo, error) {
	c, err := os.Stat(r.certFile)
	if err != nil {
		return [2]os.FileInfo{}, err
	}
	k, err := os.Stat(r.keyFile)
	if err != nil {
		return [2]os.FileInfo{}, err
	}
	return [2]os.FileInfo{c, k}, nil
}

// sameFile reports whether b is a's file unchanged: the same file (a
// rename over it makes another), modification time and size.
func sameFile(a, b os.FileInfo) bool {
	return a != nil && b != nil && os.SameFile(a, b) && a.ModTime().Equal(b.ModTime()) && a.Size() == b.Size()
}
