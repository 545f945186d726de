//go:build linux

// Package netns builds throw-away network topologies for tests and benchmarks: named network
// namespaces, veth pairs, a bridge in its own namespace, and processes running inside a
// namespace. Everything is registered with t.Cleanup, so it is removed also when a test fails.
//
// Namespaces are named "kwt<pid>-<random>-<label>"; New removes namespaces whose creating process is gone
// (a test binary killed by a timeout never runs its cleanups), and never touches a live
// process's namespaces. Netlink work goes through Handle, a netlink socket opened inside the
// namespace, so callers never have to switch an OS thread's namespace; Do is there for the rare
// code that must (raw sockets), and it locks the thread.
package netns

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	vnetns "github.com/vishvananda/netns"
)

// Prefix starts the name of every namespace this package creates.
const Prefix = "kwt"

// NS is one named network namespace.
type NS struct {
	Name   string
	handle vnetns.NsHandle
	nl     *netlink.Handle
	mu     sync.Mutex
	procs  []*Proc
}

// New creates a namespace labelled label (letters, digits, dashes) with loopback up. It is
// deleted at cleanup, after every process started in it has been killed.
func New(t testing.TB, label string) *NS {
	t.Helper()
	sweepStale()
	// The random part keeps names unique when two topologies with the same labels coexist.
	var r [3]byte
	_, _ = rand.Read(r[:])
	name := fmt.Sprintf("%s%d-%x-%s", Prefix, os.Getpid(), r, label)
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add %s: %v: %s", name, err, out)
	}
	ns := &NS{Name: name}
	t.Cleanup(func() { ns.destroy(t) })
	h, err := vnetns.GetFromName(name)
	if err != nil {
		t.Fatalf("open namespace %s: %v", name, err)
	}
	ns.handle = h
	nl, err := netlink.NewHandleAt(h)
	if err != nil {
		t.Fatalf("netlink handle in %s: %v", name, err)
	}
	ns.nl = nl
	lo, err := nl.LinkByName("lo")
	if err != nil {
		t.Fatalf("%s: find lo: %v", name, err)
	}
	if err := nl.LinkSetUp(lo); err != nil {
		t.Fatalf("%s: set lo up: %v", name, err)
	}
	return ns
}

func (n *NS) destroy(t testing.TB) {
	n.mu.Lock()
	procs := append([]*Proc(nil), n.procs...)
	n.mu.Unlock()
	for _, p := range procs {
		p.Kill()
	}
	if n.nl != nil {
		n.nl.Close()
	}
	if n.handle.IsOpen() {
		n.handle.Close()
	}
	if out, err := exec.Command("ip", "netns", "del", n.Name).CombinedOutput(); err != nil {
		t.Errorf("ip netns del %s: %v: %s", n.Name, err, out)
	}
}

// Handle is a netlink handle whose socket lives in the namespace; safe from any goroutine.
func (n *NS) Handle() *netlink.Handle { return n.nl }

// NsHandle is the namespace's file descriptor (for netlink subscriptions).
func (n *NS) NsHandle() vnetns.NsHandle { return n.handle }

// Path is the namespace's bind-mount path.
func (n *NS) Path() string { return "/run/netns/" + n.Name }

// Do runs fn on a locked OS thread switched into the namespace and switches it back. If the
// thread cannot be switched back it is left locked, so the Go runtime discards it.
func (n *NS) Do(fn func() error) error {
	runtime.LockOSThread()
	orig, err := vnetns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("get current namespace: %w", err)
	}
	defer orig.Close()
	if err := vnetns.Set(n.handle); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("enter namespace %s: %w", n.Name, err)
	}
	ferr := fn()
	if err := vnetns.Set(orig); err != nil {
		// Thread stays locked and dies with the goroutine: it must not run other goroutines.
		return errors.Join(ferr, fmt.Errorf("leave namespace %s: %w", n.Name, err))
	}
	runtime.UnlockOSThread()
	return ferr
}

// Run executes a command inside the namespace and returns its combined output.
func (n *NS) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", n.Name, name}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("%s %s in %s: %w: %s", name, strings.Join(args, " "), n.Name, err, strings.TrimSpace(string(out)))
	}
	return out, nil
}

// MustRun is Run that fails the test on error.
func (n *NS) MustRun(t testing.TB, name string, args ...string) string {
	t.Helper()
	out, err := n.Run(context.Background(), name, args...)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// Sysctl sets a sysctl inside the namespace (key with dots, e.g. net.ipv4.ip_forward).
func (n *NS) Sysctl(t testing.TB, key, value string) {
	t.Helper()
	path := "/proc/sys/" + strings.ReplaceAll(key, ".", "/")
	err := n.Do(func() error { return os.WriteFile(path, []byte(value), 0o644) })
	if err != nil {
		t.Fatalf("%s: sysctl %s=%s: %v", n.Name, key, value, err)
	}
}

// Proc is a process started in a namespace, in its own process group.
type Proc struct {
	Cmd  *exec.Cmd
	done chan struct{}
	once sync.Once
	err  error
}

// Start runs a command in the namespace in a new process group, with stdout and stderr going to
// logPath (created, truncated) when it is not empty. The whole group is killed at cleanup.
func (n *NS) Start(t testing.TB, logPath string, name string, args ...string) *Proc {
	t.Helper()
	cmd := exec.Command("ip", append([]string{"netns", "exec", n.Name, name}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if logPath != "" {
		f, err := os.Create(logPath)
		if err != nil {
			t.Fatalf("create log %s: %v", logPath, err)
		}
		defer f.Close()
		cmd.Stdout, cmd.Stderr = f, f
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s in %s: %v", name, n.Name, err)
	}
	p := &Proc{Cmd: cmd, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	n.mu.Lock()
	n.procs = append(n.procs, p)
	n.mu.Unlock()
	return p
}

// Pid of the started process (ip netns exec execs the command, so this is the command itself).
func (p *Proc) Pid() int { return p.Cmd.Process.Pid }

// Done is closed when the process has exited.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Kill sends SIGKILL to the whole process group and waits for the leader to exit.
func (p *Proc) Kill() {
	p.once.Do(func() {
		pgid := p.Cmd.Process.Pid
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.done
		// Children of the leader (keepalived's VRRP process) are reparented and reaped by
		// init; wait until none of the group is running any more.
		deadline := time.Now().Add(10 * time.Second)
		for groupRunning(pgid) && time.Now().Before(deadline) {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			time.Sleep(10 * time.Millisecond)
		}
	})
	<-p.done
}

// Alive reports whether pid exists and is not a zombie.
func Alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || (s[i+2] != 'Z' && s[i+2] != 'X')
}

func groupRunning(pgid int) bool {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return false
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if g, err := syscall.Getpgid(pid); err == nil && g == pgid && Alive(pid) {
			return true
		}
	}
	return false
}

// Signal sends sig to the process (not its group).
func (p *Proc) Signal(sig syscall.Signal) error { return p.Cmd.Process.Signal(sig) }

// Veth creates a veth pair with one end (aName) in a and the other (bName) in b, both up.
// Either namespace may be nil for the namespace of the calling process.
func Veth(t testing.TB, a *NS, aName string, b *NS, bName string) {
	t.Helper()
	la := netlink.LinkAttrs{Name: aName}
	if a != nil {
		la.Namespace = netlink.NsFd(int(a.handle))
	}
	veth := &netlink.Veth{LinkAttrs: la, PeerName: bName}
	if b != nil {
		veth.PeerNamespace = netlink.NsFd(int(b.handle))
	}
	if err := netlink.LinkAdd(veth); err != nil {
		t.Fatalf("veth %s<->%s: %v", aName, bName, err)
	}
	for _, end := range []struct {
		ns   *NS
		name string
	}{{a, aName}, {b, bName}} {
		h := netlinkFor(end.ns)
		l, err := h.LinkByName(end.name)
		if err != nil {
			t.Fatalf("find %s: %v", end.name, err)
		}
		if err := h.LinkSetUp(l); err != nil {
			t.Fatalf("set %s up: %v", end.name, err)
		}
		if end.ns == nil {
			name := end.name
			t.Cleanup(func() {
				if l, err := netlink.LinkByName(name); err == nil {
					_ = netlink.LinkDel(l)
				}
			})
		}
	}
}

func netlinkFor(ns *NS) *netlink.Handle {
	if ns == nil {
		return &netlink.Handle{}
	}
	return ns.nl
}

// Bridge creates an up bridge called name inside n.
func (n *NS) Bridge(t testing.TB, name string) {
	t.Helper()
	br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: name}}
	if err := n.nl.LinkAdd(br); err != nil {
		t.Fatalf("%s: add bridge %s: %v", n.Name, name, err)
	}
	if err := n.nl.LinkSetUp(br); err != nil {
		t.Fatalf("%s: set bridge %s up: %v", n.Name, name, err)
	}
}

// Attach enslaves link to bridge, both inside n.
func (n *NS) Attach(t testing.TB, link, bridge string) {
	t.Helper()
	l, err := n.nl.LinkByName(link)
	if err != nil {
		t.Fatalf("%s: find %s: %v", n.Name, link, err)
	}
	br, err := n.nl.LinkByName(bridge)
	if err != nil {
		t.Fatalf("%s: find bridge %s: %v", n.Name, bridge, err)
	}
	if err := n.nl.LinkSetMaster(l, br); err != nil {
		t.Fatalf("%s: attach %s to %s: %v", n.Name, link, bridge, err)
	}
}

// AddAddr adds cidr (e.g. 192.0.2.10/24) to link.
func (n *NS) AddAddr(t testing.TB, link, cidr string) {
	t.Helper()
	l, err := n.nl.LinkByName(link)
	if err != nil {
		t.Fatalf("%s: find %s: %v", n.Name, link, err)
	}
	a, err := netlink.ParseAddr(cidr)
	if err != nil {
		t.Fatalf("parse %s: %v", cidr, err)
	}
	if err := n.nl.AddrAdd(l, a); err != nil {
		t.Fatalf("%s: add %s to %s: %v", n.Name, cidr, link, err)
	}
}

// AddDefaultRoute routes 0.0.0.0/0 via gw.
func (n *NS) AddDefaultRoute(t testing.TB, gw string) {
	t.Helper()
	ip := net.ParseIP(gw)
	if ip == nil {
		t.Fatalf("bad gateway %q", gw)
	}
	if err := n.nl.RouteAdd(&netlink.Route{Gw: ip}); err != nil {
		t.Fatalf("%s: default route via %s: %v", n.Name, gw, err)
	}
}

// SetLink sets link up or down.
func (n *NS) SetLink(link string, up bool) error {
	l, err := n.nl.LinkByName(link)
	if err != nil {
		return fmt.Errorf("%s: find %s: %w", n.Name, link, err)
	}
	if up {
		err = n.nl.LinkSetUp(l)
	} else {
		err = n.nl.LinkSetDown(l)
	}
	if err != nil {
		return fmt.Errorf("%s: set %s up=%v: %w", n.Name, link, up, err)
	}
	return nil
}

// HasAddr reports whether ip is configured on any interface of n.
func (n *NS) HasAddr(ip string) (bool, error) {
	want := net.ParseIP(ip)
	addrs, err := n.Addrs()
	if err != nil {
		return false, err
	}
	for _, a := range addrs {
		if a.IP.Equal(want) {
			return true, nil
		}
	}
	return false, nil
}

// Addrs lists the namespace's IPv4 addresses, repeating dumps the kernel marks interrupted
// (the address table changed while it was read).
func (n *NS) Addrs() ([]netlink.Addr, error) {
	for i := 0; ; i++ {
		addrs, err := n.nl.AddrList(nil, netlink.FAMILY_V4)
		if errors.Is(err, netlink.ErrDumpInterrupted) && i < 50 {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: list addresses: %w", n.Name, err)
		}
		return addrs, nil
	}
}

// sweepStale deletes namespaces left by test processes that no longer exist.
func sweepStale() {
	entries, err := os.ReadDir("/run/netns")
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, Prefix) {
			continue
		}
		rest := strings.TrimPrefix(name, Prefix)
		i := strings.IndexByte(rest, '-')
		if i <= 0 {
			continue
		}
		pid, err := strconv.Atoi(rest[:i])
		if err != nil || pid == os.Getpid() {
			continue
		}
		if err := syscall.Kill(pid, 0); err == nil || errors.Is(err, syscall.EPERM) {
			continue // owner alive
		}
		_ = exec.Command("ip", "netns", "del", name).Run()
	}
}
