package sdkserver

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Names of the generated certificate and key inside the data directory.
const (
	GeneratedCertFile = "tls/process-endpoint.crt"
	GeneratedKeyFile  = "tls/process-endpoint.key"
)

// LoadCertificate returns the process endpoint's TLS certificate. With
// certFile and keyFile (--tls-cert, --tls-key) it loads that pair. Without
// them it loads the certificate generated earlier into dataDir, or
// generates one there: self-signed, ECDSA P-256, valid ten years, for
// 127.0.0.1, ::1, localhost and host (when not empty); with no dataDir,
// one kept in memory for this run. The C++ SDK does not
// verify the certificate; a Go SDK must be told to trust it.
func LoadCertificate(certFile, keyFile, dataDir, host string) (tls.Certificate, error) {
	if certFile != "" || keyFile != "" {
		if certFile == "" || keyFile == "" {
			return tls.Certificate{}, errors.New("tls: both a certificate and a key file are needed")
		}
		return tls.LoadX509KeyPair(certFile, keyFile)
	}
	if dataDir == "" {
		// No data directory (PostgreSQL without one): a certificate for
		// this run only, never written anywhere.
		certPEM, keyPEM, err := selfSigned(host, time.Now())
		if err != nil {
			return tls.Certificate{}, err
		}
		return tls.X509KeyPair(certPEM, keyPEM)
	}
	certPath := filepath.Join(dataDir, GeneratedCertFile)
	keyPath := filepath.Join(dataDir, GeneratedKeyFile)
	cert, err := tls.LoadX509KeyPair(certPath, keyPath)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return cert, err
	}
	certPEM, keyPEM, err := selfSigned(host, time.Now())
	if err != nil {
		return tls.Certificate{}, err
	}
	if err := os.MkdirAll(filepath.Dir(certPath), 0o700); err != nil {
		return tls.Certificate{}, err
	}
	// The certificate is written last: its presence marks a complete pair.
	if err := writeNew(keyPath, keyPEM, 0o600); err != nil {
		return tls.Certificate{}, err
	}
	if err := writeNew(certPath, certPEM, 0o644); err != nil {
		return tls.Certificate{}, err
	}
	return tls.X509KeyPair(certPEM, keyPEM)
}

// selfSigned returns a PEM certificate and PKCS #8 key valid from now.
func selfSigned(host string, now time.Time) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{Organization: []string{"Anylift"}, CommonName: "Anylift process endpoint"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		DNSNames:              []string{"localhost"},
	}
	if host != "" && host != "localhost" {
		if ip := net.ParseIP(host); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, host)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	pk, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pk}), nil
}

// writeNew writes a file, replacing what a start interrupted before the
// certificate was written may have left, and syncs it.
func writeNew(path string, data []byte, perm os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return fmt.Errorf("tls: %w", err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
