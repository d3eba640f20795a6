package server_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/exectest"
	"github.com/anylift/anylift/internal/sdkserver"
	"github.com/anylift/anylift/internal/server"
	"github.com/anylift/anylift/internal/testclock"
)

// pair is a self-signed certificate for 127.0.0.1 and its key, as PEM.
type pair struct {
	name          string
	cert, key     []byte
	x509          *x509.Certificate
	trustedByPool *x509.CertPool
}

func newPair(t *testing.T, name string) pair {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 64))
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	pk, _ := x509.MarshalPKCS8PrivateKey(key)
	x, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(x)
	return pair{name: name, x509: x, trustedByPool: pool,
		cert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		key:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pk})}
}

// replace puts data at path as an ACME client does: written beside it,
// then renamed over it.
func replace(t *testing.T, path string, data []byte) {
	t.Helper()
	tmp := path + ".new"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// served is the certificate a new TLS connection to addr gets.
func served(t *testing.T, addr string) *x509.Certificate {
	t.Helper()
	c, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.ConnectionState().PeerCertificates[0]
}

// healthz asks addr's /healthz over HTTPS, trusting only p.
func healthz(t *testing.T, addr string, p pair) error {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: p.trustedByPool}, DisableKeepAlives: true}}
	resp, err := client.Get("https://" + addr + "/healthz")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("/healthz over TLS: %s", resp.Status)
	}
	return nil
}

// TestCertificateFilesAreReloaded: a server started with --tls-cert and
// --tls-key serves, on both of its TLS listeners, the pair the files hold
// now: a replaced pair is taken up within CertCheckInterval (by the
// injected clock), a pair that cannot be used is logged and the previous
// certificate kept, and missing files keep it too.
func TestCertificateFilesAreReloaded(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "server.crt"), filepath.Join(dir, "server.key")
	a, b, c := newPair(t, "pair-a"), newPair(t, "pair-b"), newPair(t, "pair-c")
	replace(t, certFile, a.cert)
	replace(t, keyFile, a.key)

	var clock testclock.Offset
	logs := &exectest.SyncBuffer{}
	env := apitest.Start(t, func(cfg *server.Config) {
		cfg.TLSListen = "127.0.0.1:0"
		cfg.TLSCert, cfg.TLSKey = certFile, keyFile
		cfg.Now = clock.Now
		cfg.Log = slog.New(slog.NewTextHandler(logs, nil))
	})
	addrs := []string{env.Server.TLSAddr(), strings.TrimPrefix(env.URL, "http://")}
	expect := func(p pair, when string) {
		t.Helper()
		for _, addr := range addrs {
			if got := served(t, addr); !got.Equal(p.x509) {
				t.Fatalf("%s: %s serves %s, want %s", when, addr, got.Subject.CommonName, p.name)
			}
			if err := healthz(t, addr, p); err != nil {
				t.Fatalf("%s: a client trusting only %s: %v", when, p.name, err)
			}
		}
	}
	expect(a, "at start")

	// Renewed: the new pair is served once the check is due, not before.
	replace(t, certFile, b.cert)
	replace(t, keyFile, b.key)
	expect(a, "just after the files changed")
	clock.Advance(sdkserver.CertCheckInterval)
	expect(b, "after the check interval")
	if err := healthz(t, addrs[0], a); err == nil {
		t.Fatal("a client trusting only the old certificate still connects")
	}
	if !strings.Contains(logs.String(), `msg="TLS certificate reloaded"`) || !strings.Contains(logs.String(), "CN=pair-b") {
		t.Fatalf("no reload logged:\n%s", logs)
	}

	// Half renewed (a new certificate, the old key): refused, logged once,
	// the previous pair kept.
	replace(t, certFile, c.cert)
	for i := 0; i < 3; i++ {
		clock.Advance(sdkserver.CertCheckInterval)
		expect(b, "with a certificate that does not match its key")
	}
	if n := strings.Count(logs.String(), "the new pair cannot be used"); n != 1 || !strings.Contains(logs.String(), "private key does not match public key") {
		t.Fatalf("refusal logged %d times:\n%s", n, logs)
	}
	// The key follows, written in place rather than renamed: taken up.
	if err := os.WriteFile(keyFile, c.key, 0o600); err != nil {
		t.Fatal(err)
	}
	clock.Advance(sdkserver.CertCheckInterval)
	expect(c, "once the key matches")

	// Not PEM at all, then the files gone: the certificate in use stays.
	replace(t, certFile, []byte("not a certificate\n"))
	clock.Advance(sdkserver.CertCheckInterval)
	expect(c, "with a certificate file that is not PEM")
	os.Remove(certFile)
	os.Remove(keyFile)
	clock.Advance(sdkserver.CertCheckInterval)
	expect(c, "with the files gone")
	if !strings.Contains(logs.String(), "TLS certificate files unreadable") {
		t.Fatalf("missing files not logged:\n%s", logs)
	}
	// They come back (pair a again): served.
	replace(t, certFile, a.cert)
	replace(t, keyFile, a.key)
	clock.Advance(sdkserver.CertCheckInterval)
	expect(a, "once the files are back")
}
