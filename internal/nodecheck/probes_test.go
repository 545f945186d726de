package nodecheck

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// The probes leave from the source address they are given (a Windows node's host endpoint);
// here loopback addresses stand for it.
func TestProbesLeaveFromTheSource(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	peers := make(chan string, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			peers <- c.RemoteAddr().(*net.TCPAddr).IP.String()
			c.Close()
		}
	}()
	for _, source := range []string{"", "127.0.0.2", "127.0.0.3"} {
		detail, err := dialTCP(ctx, ln.Addr().String(), time.Second, source)
		if err != nil {
			t.Fatalf("dial from %q: %v", source, err)
		}
		peer := <-peers
		if source != "" && (peer != source || !strings.Contains(detail, source+":")) {
			t.Errorf("from %q: the server saw %s, the probe says %q", source, peer, detail)
		}
	}
	if _, err := dialTCP(ctx, ln.Addr().String(), time.Second, "not-an-ip"); err == nil || !strings.Contains(err.Error(), `"not-an-ip" is not an IP address`) {
		t.Errorf("a bad source: %v", err)
	}

	// DNS over UDP from the source, answered by a server of the test's.
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	from := make(chan string, 1)
	go func() {
		buf := make([]byte, 1500)
		n, addr, err := pc.ReadFrom(buf)
		if err != nil {
			return
		}
		from <- addr.(*net.UDPAddr).IP.String()
		var q dnsmessage.Message
		if q.Unpack(buf[:n]) != nil || len(q.Questions) != 1 {
			return
		}
		r := dnsmessage.Message{Header: dnsmessage.Header{ID: q.ID, Response: true}, Questions: q.Questions,
			Answers: []dnsmessage.Resource{{Header: dnsmessage.ResourceHeader{Name: q.Questions[0].Name, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET, TTL: 5},
				Body: &dnsmessage.AResource{A: [4]byte{10, 96, 0, 1}}}}}
		b, _ := r.Pack()
		_, _ = pc.WriteTo(b, addr)
	}()
	detail, err := queryDNS(ctx, pc.LocalAddr().String(), "kubernetes.default.svc.cluster.local.", time.Second, "127.0.0.2")
	if err != nil {
		t.Fatal(err)
	}
	if got := <-from; got != "127.0.0.2" || !strings.Contains(detail, "10.96.0.1") {
		t.Errorf("query from %s answered %q; want from 127.0.0.2 and 10.96.0.1", got, detail)
	}
}
