//go:build linux

package verify

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubewin/kubewin/internal/testenv/netns"
)

// TestPacketSizeAgreesWithKernel (issue 25, item 4): with --packet-size 1500 over a path whose
// MTU is 1480 (an IP-in-IP hop on 1500-byte links), the kernel carries a TCP flow — MSS and path
// MTU discovery cut it into segments that fit — but drops 1500-byte ICMP and UDP packets with
// DF. verify must say the same for the same numbers.
//
// The kernel side is a chain a — r1 — r2 — b whose middle link has MTU 1480: the hop that
// encapsulates in the cluster (this test kernel has no IP-in-IP module, and the MTU is all the
// tunnel changes for this question). The ends keep 1500-byte links, so MSS from the SYNs alone
// would allow 1500-byte packets; it is path MTU discovery that shrinks TCP's segments, as on
// a Windows pod's path through the gateway holder.
func TestPacketSizeAgreesWithKernel(t *testing.T) {
	a, r1, r2, b := netns.New(t, "mtu-a"), netns.New(t, "mtu-r1"), netns.New(t, "mtu-r2"), netns.New(t, "mtu-b")
	netns.Veth(t, a, "eth0", r1, "eth0")
	netns.Veth(t, r1, "eth1", r2, "eth0")
	netns.Veth(t, r2, "eth1", b, "eth0")
	a.AddAddr(t, "eth0", "10.201.1.2/24")
	r1.AddAddr(t, "eth0", "10.201.1.1/24")
	r1.AddAddr(t, "eth1", "10.201.2.1/24")
	r2.AddAddr(t, "eth0", "10.201.2.2/24")
	r2.AddAddr(t, "eth1", "10.201.3.1/24")
	b.AddAddr(t, "eth0", "10.201.3.2/24")
	r1.MustRun(t, "ip", "link", "set", "dev", "eth1", "mtu", "1480")
	r2.MustRun(t, "ip", "link", "set", "dev", "eth0", "mtu", "1480")
	a.AddDefaultRoute(t, "10.201.1.1")
	b.AddDefaultRoute(t, "10.201.3.1")
	r1.MustRun(t, "ip", "route", "add", "10.201.3.0/24", "via", "10.201.2.2")
	r2.MustRun(t, "ip", "route", "add", "10.201.1.0/24", "via", "10.201.2.1")
	r1.Sysctl(t, "net.ipv4.ip_forward", "1")
	r2.Sysctl(t, "net.ipv4.ip_forward", "1")
	const dst, size = "10.201.3.2", 1500

	kernel := map[Proto]error{
		TCP:  kernelTCPBulk(t, a, b, dst, size),
		UDP:  kernelUDPDF(t, a, b, dst, size),
		ICMP: kernelPingDF(a, dst, size),
	}
	// The controls: a packet of the path MTU passes with DF, so the drops above are the size.
	if err := kernelUDPDF(t, a, b, dst, 1480); err != nil {
		t.Fatalf("control: a 1480-byte DF datagram: %v", err)
	}
	if err := kernelPingDF(a, dst, 1480); err != nil {
		t.Fatalf("control: a 1480-byte DF ping: %v", err)
	}
	if out := a.MustRun(t, "ip", "route", "get", dst); kernel[TCP] == nil && !strings.Contains(out, "mtu 1480") {
		t.Errorf("the TCP flow passed without the sender learning the path MTU:\n%s", out)
	}

	// verify, same numbers: node001's pod to master2's pod crosses IP-in-IP (Calico ipipMode
	// Always), path MTU 1500-20.
	c, p := example(t)
	m, err := Build(Input{Plan: p, Spec: c, Options: Options{PacketSize: size, DF: true}})
	if err != nil {
		t.Fatal(err)
	}
	v := NewVerifier(m, false)
	for _, proto := range []Proto{TCP, UDP, ICMP} {
		r := traceFlow(t, v, "node001/pod", "master2/pod", proto, 0)
		kernelOK := kernel[proto] == nil
		verifyOK := r.Verdict == VerdictOK
		t.Logf("%s %d bytes with DF over a 1480-byte path: kernel %s (%v), verify %s %s %s", proto, size, okStr(kernelOK), kernel[proto], r.Verdict, r.Disposition, r.Cause)
		if kernelOK != verifyOK {
			t.Errorf("%s: kernel %s, verify %s (%s: %s)\n%s", proto, okStr(kernelOK), r.Verdict, r.Disposition, r.Cause, r.Forward.Text(""))
		}
		if proto == TCP && !strings.Contains(r.Forward.Text(""), "MSS 1440") {
			t.Errorf("the TCP trace does not say MSS cuts the flow to the 1480-byte path:\n%s", r.Forward.Text(""))
		}
		if proto != TCP && !strings.Contains(r.Cause, "path MTU is 1480") {
			t.Errorf("%s: cause %q does not name the path MTU", proto, r.Cause)
		}
	}
}

// kernelTCPBulk writes 200 application writes of size bytes from a to b and reports whether
// they all arrived and b's answer came back.
func kernelTCPBulk(t *testing.T, a, b *netns.NS, dst string, size int) error {
	t.Helper()
	var ln net.Listener
	if err := b.Do(func() (err error) { ln, err = net.Listen("tcp4", ":9000"); return }); err != nil {
		t.Fatalf("listen: %v", err)
	}
	defer ln.Close()
	const writes = 200
	got := make(chan int64, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- -1
			return
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(30 * time.Second))
		n, _ := io.Copy(io.Discard, c)
		fmt.Fprintf(c, "%d", n)
		got <- n
	}()
	var conn net.Conn
	if err := a.Do(func() (err error) {
		conn, err = net.DialTimeout("tcp4", net.JoinHostPort(dst, "9000"), 5*time.Second)
		return
	}); err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	buf := make([]byte, size)
	for i := 0; i < writes; i++ {
		if _, err := conn.Write(buf); err != nil {
			return fmt.Errorf("write %d: %w", i, err)
		}
	}
	if err := conn.(*net.TCPConn).CloseWrite(); err != nil {
		return err
	}
	answer, err := io.ReadAll(conn)
	if err != nil {
		return fmt.Errorf("read the answer: %w", err)
	}
	if want := fmt.Sprint(writes * size); string(answer) != want {
		return fmt.Errorf("b received %q bytes, want %s", answer, want)
	}
	if n := <-got; n != int64(writes*size) {
		return fmt.Errorf("b counted %d bytes", n)
	}
	return nil
}

// kernelUDPDF sends UDP datagrams of size bytes (IP) with DF (IP_PMTUDISC_DO) from a to b and
// reports whether one arrived.
func kernelUDPDF(t *testing.T, a, b *netns.NS, dst string, size int) error {
	t.Helper()
	var pc net.PacketConn
	if err := b.Do(func() (err error) { pc, err = net.ListenPacket("udp4", ":9001"); return }); err != nil {
		t.Fatalf("listen: %v", err)
	}
	defer pc.Close()
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		if err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IP, syscall.IP_MTU_DISCOVER, syscall.IP_PMTUDISC_DO)
		}); err != nil {
			return err
		}
		return serr
	}}
	var conn net.Conn
	if err := a.Do(func() (err error) { conn, err = d.Dial("udp4", net.JoinHostPort(dst, "9001")); return }); err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer conn.Close()
	payload := make([]byte, size-28) // IP and UDP headers
	var sendErr error
	for i := 0; i < 3; i++ {
		if _, err := conn.Write(payload); err != nil {
			sendErr = err // EMSGSIZE once a knows the path MTU
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = pc.SetReadDeadline(time.Now().Add(2 * time.Second))
	buf := make([]byte, 2048)
	n, _, err := pc.ReadFrom(buf)
	if err != nil {
		return fmt.Errorf("no datagram arrived (%v; sender: %v)", err, sendErr)
	}
	if n != len(payload) {
		return fmt.Errorf("a %d-byte datagram arrived, %d sent", n, len(payload))
	}
	return nil
}

// kernelPingDF sends one ping of size bytes (IP) with DF and reports whether it was answered.
func kernelPingDF(a *netns.NS, dst string, size int) error {
	_, err := a.Run(context.Background(), "ping", "-n", "-c", "1", "-W", "2", "-M", "do", "-s", fmt.Sprint(size-28), dst)
	return err
}
