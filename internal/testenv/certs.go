package testenv

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki is everything the control plane authenticates with, generated in-process for each control
// plane so that no two tests share a trust root.
type pki struct {
	caCert  *x509.Certificate
	caKey   *ecdsa.PrivateKey
	caPEM   []byte
	certPEM []byte // serving certificate for 127.0.0.1 / localhost
	keyPEM  []byte
	// admin client certificate in group system:masters (bypasses RBAC).
	adminCertPEM []byte
	adminKeyPEM  []byte
	// service-account token signing key pair.
	saKeyPEM []byte
	saPubPEM []byte
}

func newPKI(serveIP net.IP) (*pki, error) {
	p := &pki{}
	var err error
	p.caKey, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate CA key: %w", err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "kubewin-testenv-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &p.caKey.PublicKey, p.caKey)
	if err != nil {
		return nil, fmt.Errorf("create CA certificate: %w", err)
	}
	if p.caCert, err = x509.ParseCertificate(der); err != nil {
		return nil, fmt.Errorf("parse CA certificate: %w", err)
	}
	p.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})

	p.certPEM, p.keyPEM, err = p.issue(2, pkix.Name{CommonName: "kube-apiserver"},
		x509.ExtKeyUsageServerAuth, serveIPs(serveIP), []string{"localhost"})
	if err != nil {
		return nil, err
	}
	p.adminCertPEM, p.adminKeyPEM, err = p.issue(3,
		pkix.Name{CommonName: "kubewin-testenv-admin", Organization: []string{"system:masters"}},
		x509.ExtKeyUsageClientAuth, nil, nil)
	if err != nil {
		return nil, err
	}

	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate service-account key: %w", err)
	}
	if p.saKeyPEM, err = ecKeyPEM(saKey); err != nil {
		return nil, err
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("marshal service-account public key: %w", err)
	}
	p.saPubPEM = pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})
	return p, nil
}

// issue signs a leaf certificate with the CA.
func (p *pki) issue(serial int64, subject pkix.Name, usage x509.ExtKeyUsage, ips []net.IP, dns []string) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generate key for %s: %w", subject.CommonName, err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      subject,
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
		IPAddresses:  ips,
		DNSNames:     dns,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.caCert, &key.PublicKey, p.caKey)
	if err != nil {
		return nil, nil, fmt.Errorf("sign certificate for %s: %w", subject.CommonName, err)
	}
	keyPEM, err = ecKeyPEM(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), keyPEM, nil
}

func ecKeyPEM(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("marshal EC key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}

// writeFiles puts the PEM files the kube-apiserver flags point at into dir.
func (p *pki) writeFiles(dir string) (map[string]string, error) {
	caKeyPEM, err := ecKeyPEM(p.caKey)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{
		"ca.crt":     p.caPEM,
		"ca.key":     caKeyPEM,
		"server.crt": p.certPEM,
		"server.key": p.keyPEM,
		"sa.key":     p.saKeyPEM,
		"sa.pub":     p.saPubPEM,
	}
	paths := map[string]string{}
	for name, data := range files {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return nil, fmt.Errorf("write %s: %w", path, err)
		}
		paths[name] = path
	}
	return paths, nil
}

// serveIPs are the serving certificate's IP SANs: loopback, and ip when the API server listens
// there.
func serveIPs(ip net.IP) []net.IP {
	ips := []net.IP{net.IPv4(127, 0, 0, 1)}
	if ip != nil && !ip.IsLoopback() {
		ips = append(ips, ip)
	}
	return ips
}
