package nodecheck

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"golang.org/x/net/dns/dnsmessage"
	"golang.org/x/net/icmp"
	"golang.org/x/net/ipv4"
)

// The probes take source, the address they send from ("" lets the kernel choose): on a Windows
// node the host endpoint's pod network address.

func pingICMP(ctx context.Context, dst string, timeout time.Duration, source string) (string, error) {
	if source == "" {
		source = "0.0.0.0"
	}
	c, err := icmp.ListenPacket("ip4:icmp", source)
	if err != nil {
		return "", fmt.Errorf("ICMP socket: %w", err)
	}
	defer c.Close()
	msg := icmp.Message{Type: ipv4.ICMPTypeEcho, Body: &icmp.Echo{ID: os.Getpid() & 0xffff, Seq: 1, Data: []byte("kubewin")}}
	b, err := msg.Marshal(nil)
	if err != nil {
		return "", err
	}
	began := time.Now()
	if _, err := c.WriteTo(b, &net.IPAddr{IP: net.ParseIP(dst)}); err != nil {
		return "", fmt.Errorf("echo to %s: %w", dst, err)
	}
	_ = c.SetReadDeadline(deadline(ctx, timeout))
	buf := make([]byte, 1500)
	for {
		n, peer, err := c.ReadFrom(buf)
		if err != nil {
			return "", fmt.Errorf("no echo reply from %s within %s", dst, timeout)
		}
		m, err := icmp.ParseMessage(1, buf[:n])
		if err == nil && m.Type == ipv4.ICMPTypeEchoReply && peer.String() == dst {
			return fmt.Sprintf("echo reply in %s", time.Since(began).Round(time.Microsecond)), nil
		}
	}
}

// dialer binds to source when one is given.
func dialer(timeout time.Duration, source string, udp bool) (*net.Dialer, error) {
	d := &net.Dialer{Timeout: timeout}
	if source == "" {
		return d, nil
	}
	ip := net.ParseIP(source)
	if ip == nil {
		return nil, fmt.Errorf("probe source %q is not an IP address", source)
	}
	if udp {
		d.LocalAddr = &net.UDPAddr{IP: ip}
	} else {
		d.LocalAddr = &net.TCPAddr{IP: ip}
	}
	return d, nil
}

func dialTCP(ctx context.Context, addr string, timeout time.Duration, source string) (string, error) {
	d, err := dialer(timeout, source, false)
	if err != nil {
		return "", err
	}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer c.Close()
	return "connected from " + c.LocalAddr().String(), nil
}

// tlsHandshake connects and completes a TLS handshake: the API server answered through the
// Service. The certificate is not verified — the probe asks whether the path works, not whom
// to trust; nothing is sent after the handshake.
func tlsHandshake(ctx context.Context, addr string, timeout time.Duration, source string) (string, error) {
	nd, err := dialer(timeout, source, false)
	if err != nil {
		return "", err
	}
	d := tls.Dialer{NetDialer: nd, Config: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // reachability only
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer c.Close()
	st := c.(*tls.Conn).ConnectionState()
	subject := ""
	if len(st.PeerCertificates) > 0 {
		subject = st.PeerCertificates[0].Subject.CommonName
	}
	return "TLS handshake with " + subject, nil
}

// queryDNS asks server for name's A record over UDP, on this thread's socket (the resolver of
// package net may move the query to another thread, outside the probe namespace).
func queryDNS(ctx context.Context, server, name string, timeout time.Duration, source string) (string, error) {
	q := dnsmessage.Message{Header: dnsmessage.Header{ID: 0x6b77, RecursionDesired: true},
		Questions: []dnsmessage.Question{{Name: dnsmessage.MustNewName(name), Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET}}}
	b, err := q.Pack()
	if err != nil {
		return "", err
	}
	d, err := dialer(timeout, source, true)
	if err != nil {
		return "", err
	}
	c, err := d.DialContext(ctx, "udp", server)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(deadline(ctx, timeout))
	if _, err := c.Write(b); err != nil {
		return "", err
	}
	buf := make([]byte, 1500)
	n, err := c.Read(buf)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return "", fmt.Errorf("no answer from %s within %s", server, timeout)
		}
		return "", err
	}
	var r dnsmessage.Message
	if err := r.Unpack(buf[:n]); err != nil {
		return "", fmt.Errorf("answer from %s: %w", server, err)
	}
	if r.RCode != dnsmessage.RCodeSuccess || len(r.Answers) == 0 {
		return "", fmt.Errorf("%s answered %s with %d records", server, r.RCode, len(r.Answers))
	}
	if a, ok := r.Answers[0].Body.(*dnsmessage.AResource); ok {
		return fmt.Sprintf("%s = %s", name, net.IP(a.A[:])), nil
	}
	return "answered", nil
}

func deadline(ctx context.Context, timeout time.Duration) time.Time {
	d := time.Now().Add(timeout)
	if cd, ok := ctx.Deadline(); ok && cd.Before(d) {
		return cd
	}
	return d
}
