package api

import (
	"crypto/hmac"
	"crypto/sha256"
	"hash"
	"strings"
	"sync"
)

// maxSigningKeys bounds the signing keys kept: when full, all are dropped
// and derived again as requests come (four HMACs each).
const maxSigningKeys = 1024

// signingKeys keeps the SigV4 signing key of each secret, date, region
// and service it has seen, so that a request is signed with one HMAC
// rather than five. The secret is part of what a key is kept by: a key
// rotated (same id, another secret) is signed with its new secret from
// its first request on, and no request signed with the old one verifies
// once the keyring no longer holds it; a key removed is refused before
// its signature is computed. The zero value is ready to use.
type signingKeys struct {
	mu   sync.Mutex
	keys map[signingScope]*signingKey
}

type signingScope struct {
	secret, date, region, service string
}

// signingKey is one derived signing key, with HMACs keyed with it ready
// to reuse.
type signingKey struct {
	key  []byte
	macs sync.Pool // of hash.Hash, keyed with key
}

// get returns the signing key of secret for the credential scope's date
// (YYYYMMDD), region and service, deriving it when it is not kept.
func (c *signingKeys) get(secret, date, region, service string) *signingKey {
	scope := signingScope{secret, date, region, service}
	c.mu.Lock()
	k := c.keys[scope]
	c.mu.Unlock()
	if k != nil {
		return k
	}
	k = &signingKey{key: deriveSigningKey(secret, date, region, service)}
	// The scope's strings are parts of a request's header: copied, so
	// that the header is not kept with them.
	scope = signingScope{secret, strings.Clone(date), strings.Clone(region), strings.Clone(service)}
	c.mu.Lock()
	if c.keys == nil || len(c.keys) >= maxSigningKeys {
		c.keys = make(map[signingScope]*signingKey)
	}
	c.keys[scope] = k
	c.mu.Unlock()
	return k
}

// len is how many keys are kept.
func (c *signingKeys) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.keys)
}

// deriveSigningKey is SigV4's signing key: HMAC-SHA256 chained from
// "AWS4" and the secret over the date, the region, the service and
// "aws4_request".
func deriveSigningKey(secret, date, region, service string) []byte {
	k := []byte("AWS4" + secret)
	for _, part := range [...]string{date, region, service, "aws4_request"} {
		m := hmac.New(sha256.New, k)
		m.Write([]byte(part))
		k = m.Sum(nil)
	}
	return k
}

// mac appends to dst the HMAC-SHA256 of msg under k.
func (k *signingKey) mac(msg, dst []byte) []byte {
	m, _ := k.macs.Get().(hash.Hash)
	if m == nil {
		m = hmac.New(sha256.New, k.key)
	}
	m.Write(msg)
	dst = m.Sum(dst)
	m.Reset()
	k.macs.Put(m)
	return dst
}
