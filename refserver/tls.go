package refserver

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpbench/mcpbench/internal/netutil"
)

// TLSOptions make Start serve HTTPS. The zero value serves a generated
// certificate (see Server.CACertPEM) and offers HTTP/2 and HTTP/1.1 by
// ALPN.
type TLSOptions struct {
	// CertFile and KeyFile hold the server's certificate chain and key
	// (PEM); both "" generates them: a self-signed CA and, signed by it, a
	// certificate for 127.0.0.1, ::1, localhost and Hosts, valid 30 days.
	CertFile, KeyFile string
	// Hosts are more DNS names or IP addresses for the generated
	// certificate.
	Hosts []string
	// ClientCAFile holds the CAs (PEM) that must have signed the client
	// certificate every connection presents (mutual TLS).
	ClientCAFile string
	// RequireClientCert requires a client certificate signed by the
	// generated CA (mutual TLS) and generates one (Server.ClientCertPEM);
	// only with a generated certificate.
	RequireClientCert bool
	// HTTP2Only offers only h2 in ALPN: an HTTP/1.1-only client is
	// refused in the handshake (no_application_protocol).
	HTTP2Only bool
	// HTTP1Only offers only http/1.1 in ALPN.
	HTTP1Only bool
}

// validate reports the problems of o, each naming its field.
func (o *TLSOptions) validate() []error {
	var errs []error
	if (o.CertFile == "") != (o.KeyFile == "") {
		errs = append(errs, fmt.Errorf("%w: TLS.CertFile and TLS.KeyFile: give both or neither", ErrInvalidOptions))
	}
	if o.RequireClientCert && o.CertFile != "" {
		errs = append(errs, fmt.Errorf("%w: TLS.RequireClientCert: only with a generated certificate (use TLS.ClientCAFile)", ErrInvalidOptions))
	}
	if o.HTTP2Only && o.HTTP1Only {
		errs = append(errs, fmt.Errorf("%w: TLS.HTTP2Only and TLS.HTTP1Only: choose one", ErrInvalidOptions))
	}
	return errs
}

// tlsMaterial is the server's TLS configuration and what it generated.
type tlsMaterial struct {
	config      *tls.Config
	leaf        *x509.Certificate
	caPEM       []byte // generated CA ("": a given certificate)
	clientPEM   []byte // generated client certificate and key (mutual TLS)
	clientKey   []byte
	fingerprint string
}

// newTLS builds the server's TLS configuration.
func newTLS(o *TLSOptions) (*tlsMaterial, error) {
	m := &tlsMaterial{config: &tls.Config{MinVersion: tls.VersionTLS12}}
	var cert tls.Certificate
	if o.CertFile != "" {
		c, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("TLS.CertFile/KeyFile: %w", err)
		}
		cert = c
	} else {
		c, err := m.generate(o)
		if err != nil {
			return nil, err
		}
		cert = c
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		return nil, fmt.Errorf("TLS: the server certificate: %w", err)
	}
	m.leaf = leaf
	sum := sha256.Sum256(leaf.Raw)
	hexs := make([]string, len(sum))
	for i, b := range sum {
		hexs[i] = fmt.Sprintf("%02X", b)
	}
	m.fingerprint = strings.Join(hexs, ":")
	m.config.Certificates = []tls.Certificate{cert}
	if o.ClientCAFile != "" {
		pemb, err := os.ReadFile(o.ClientCAFile)
		if err != nil {
			return nil, fmt.Errorf("TLS.ClientCAFile: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pemb) {
			return nil, fmt.Errorf("TLS.ClientCAFile: %s holds no PEM certificate", o.ClientCAFile)
		}
		m.config.ClientCAs = pool
		m.config.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return m, nil
}

// generate makes a CA and a server certificate signed by it (and a client
// certificate with RequireClientCert).
func (m *tlsMaterial) generate(o *TLSOptions) (tls.Certificate, error) {
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "mcpbench reference server CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(30 * 24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return tls.Certificate{}, err
	}
	ca, _ := x509.ParseCertificate(caDER)
	m.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	srvTmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "mcpbench reference server"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(30 * 24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	for _, h := range o.Hosts {
		if ip := net.ParseIP(h); ip != nil {
			srvTmpl.IPAddresses = append(srvTmpl.IPAddresses, ip)
		} else {
			srvTmpl.DNSNames = append(srvTmpl.DNSNames, h)
		}
	}
	srv, err := issue(srvTmpl, ca, caKey)
	if err != nil {
		return tls.Certificate{}, err
	}
	if o.RequireClientCert {
		cliTmpl := &x509.Certificate{
			SerialNumber: serial(), Subject: pkix.Name{CommonName: "mcpbench client"},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(30 * 24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		}
		cli, err := issue(cliTmpl, ca, caKey)
		if err != nil {
			return tls.Certificate{}, err
		}
		m.clientPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cli.Certificate[0]})
		kd, _ := x509.MarshalPKCS8PrivateKey(cli.PrivateKey)
		m.clientKey = pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kd})
		pool := x509.NewCertPool()
		pool.AddCert(ca)
		m.config.ClientCAs = pool
		m.config.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return srv, nil
}

// issue makes a certificate for tmpl with a fresh key, signed by ca.
func issue(tmpl, ca *x509.Certificate, caKey *ecdsa.PrivateKey) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	return n
}

// protocols are the HTTP versions the server speaks: ALPN's h2 and
// http/1.1 over TLS (TLSOptions.HTTP2Only, HTTP1Only), h2c with prior
// knowledge beside HTTP/1.1 on plain HTTP (Options.H2C).
func protocols(o Options) *http.Protocols {
	var p http.Protocols
	switch t := o.TLS; {
	case t == nil:
		p.SetHTTP1(true)
		p.SetUnencryptedHTTP2(o.H2C)
	case t.HTTP2Only:
		p.SetHTTP2(true)
	case t.HTTP1Only:
		p.SetHTTP1(true)
	default:
		p.SetHTTP1(true)
		p.SetHTTP2(true)
	}
	return &p
}

// Fingerprint returns the SHA-256 fingerprint of the server's TLS
// certificate ("AB:CD:..."), "" without TLS.
func (s *Server) Fingerprint() string {
	if s.tls == nil {
		return ""
	}
	return s.tls.fingerprint
}

// CACertPEM returns the generated CA's certificate (PEM), which a client
// trusts to verify the server (mcpbench run --ca FILE); nil without TLS or
// with a given certificate.
func (s *Server) CACertPEM() []byte {
	if s.tls == nil {
		return nil
	}
	return s.tls.caPEM
}

// ClientCertPEM returns the generated client certificate and its key
// (PEM) that the server accepts (TLSOptions.RequireClientCert); nil
// otherwise.
func (s *Server) ClientCertPEM() (cert, key []byte) {
	if s.tls == nil {
		return nil, nil
	}
	return s.tls.clientPEM, s.tls.clientKey
}

// WriteTLSFiles writes the generated CA certificate (ca.pem) and, with
// RequireClientCert, the client certificate and key (client.pem,
// client-key.pem, mode 0600) into dir, and returns the paths written.
func (s *Server) WriteTLSFiles(dir string) ([]string, error) {
	if s.tls == nil || s.tls.caPEM == nil {
		return nil, errors.New("no generated TLS material (serve with TLS and no certificate file)")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	files := []struct {
		name string
		data []byte
		mode os.FileMode
	}{{"ca.pem", s.tls.caPEM, 0o644}, {"client.pem", s.tls.clientPEM, 0o644}, {"client-key.pem", s.tls.clientKey, 0o600}}
	var paths []string
	for _, f := range files {
		if f.data == nil {
			continue
		}
		p := filepath.Join(dir, f.name)
		if err := os.WriteFile(p, f.data, f.mode); err != nil {
			return paths, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// hostGuard keeps DNS rebinding protection (2025-11-25 security best
// practices) for a server on a loopback address whose certificate names
// more hosts (TLSOptions.Hosts, e.g. a name a proxy maps to it): the Host
// header must be a loopback name or address, or one of hosts, else 403.
// It replaces the go-sdk's check, which allows loopback names only.
func hostGuard(hosts []string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !netutil.HostAllowed(r, hosts) {
			http.Error(w, fmt.Sprintf("Forbidden: invalid Host header %q", r.Host), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}
