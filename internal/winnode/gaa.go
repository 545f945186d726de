package winnode

import (
	"net"
	"net/netip"
	"strings"
)

// What the real host reads about one interface from GetAdaptersAddresses and GetIfTable2, and how
// it turns that into an Adapter. The classification is OS-neutral so that it is tested here; the
// calls that fill gaaInterface are in adapters_windows.go.

// IP_ADAPTER_ADDRESSES.Flags bit set when IPv4 is bound to the interface: iptypes.h
// (#define IP_ADAPTER_IPV4_ENABLED 0x00000080; Wine include/iptypes.h has the same value) and
// learn.microsoft.com/windows/win32/api/iptypes/ns-iptypes-ip_adapter_addresses_lh (Ipv4Enabled).
// x/sys/windows v0.49.0 does not define it.
const ipAdapterIPv4Enabled = 0x80

// IANA ifType values of IP_ADAPTER_ADDRESSES.IfType (ipifcons.h; x/sys/windows IF_TYPE_*).
const (
	ifTypeEthernet         = 6
	ifTypeSoftwareLoopback = 24
	ifTypeIEEE80211        = 71
	ifTypeTunnel           = 131
)

// MIB_IF_ROW2.InterfaceAndOperStatusFlags bits (netioapi.h: a struct of BOOLEAN bit fields,
// HardwareInterface first, then FilterInterface; WireGuard/wireguard-windows
// tunnel/winipcfg/types.go IAOSFHardwareInterface = 1, IAOSFFilterInterface = 2).
const (
	ifFlagHardwareInterface = 0x01
	ifFlagFilterInterface   = 0x02
)

// hyperVVNICDescription starts the description of a Hyper-V host vNIC, numbered from the second
// one on ("Hyper-V Virtual Ethernet Adapter #2": the getmac listing in golang/go#21027).
const hyperVVNICDescription = "Hyper-V Virtual Ethernet Adapter"

// gaaInterface is one entry of GetAdaptersAddresses(AF_UNSPEC, GAA_FLAG_INCLUDE_ALL_INTERFACES)
// with the interface flags GetIfTable2 reports for the same LUID.
type gaaInterface struct {
	FriendlyName string
	Description  string
	// MAC is PhysicalAddress[:PhysicalAddressLength].
	MAC []byte
	// IfType and Flags are IP_ADAPTER_ADDRESSES.IfType and .Flags.
	IfType uint32
	Flags  uint32
	// NDISFlags is MIB_IF_ROW2.InterfaceAndOperStatusFlags (0 when GetIfTable2 had no row).
	NDISFlags uint8
	// IPv4 are the IPv4 unicast addresses.
	IPv4 []string
}

func (g gaaInterface) ipv4Enabled() bool { return g.Flags&ipAdapterIPv4Enabled != 0 }

// adapterFromGAA is the Adapter an interface of the listing is, or false for one the Host
// contract leaves out.
//
// GAA_FLAG_INCLUDE_ALL_INTERFACES lists every NDIS interface, not only those bound to IP: besides
// the NIC bound to a vSwitch it lists the filter interfaces stacked on each NIC ("…-WFP Native
// MAC Layer LightWeight Filter-0000", "…-QoS Packet Scheduler-0000", with the NIC's MAC and no
// address), the vSwitch's "Hyper-V Virtual Switch Extension Adapter", WAN miniports
// (winsiderss/systeminformer#445; the filter list of BornToBeRoot/NETworkManager#3286 after
// dotnet/runtime#100824 added the flag to .NET; openjdk/jdk#12593 on GetIfStackTable). A filter
// interface with the cluster NIC's MAC would pass for the NIC itself, so filter interfaces
// (GetIfTable2's FilterInterface) are left out, and so is any other interface without IPv4 that
// is not a hardware NIC: such an interface is software (a miniport or extension adapter) and
// the Reconciler never binds a network to it. A NIC without IPv4 that is hardware is Bound: its
// IP stack was unbound when an external vSwitch took it.
func adapterFromGAA(g gaaInterface) (Adapter, bool) {
	if g.NDISFlags&ifFlagFilterInterface != 0 {
		return Adapter{}, false
	}
	switch g.IfType {
	case ifTypeSoftwareLoopback, ifTypeTunnel:
		return Adapter{}, false
	}
	if len(g.MAC) != 6 || allZero(g.MAC) {
		return Adapter{}, false
	}
	a := Adapter{
		Name:    g.FriendlyName,
		MAC:     net.HardwareAddr(g.MAC).String(),
		Virtual: strings.HasPrefix(g.Description, hyperVVNICDescription),
	}
	if g.ipv4Enabled() {
		a.IPv4 = append([]string(nil), g.IPv4...)
		return a, true
	}
	if a.Virtual {
		return a, true // a vNIC whose IPv4 binding was removed: listed, not a bound NIC
	}
	if g.NDISFlags&ifFlagHardwareInterface == 0 || (g.IfType != ifTypeEthernet && g.IfType != ifTypeIEEE80211) {
		return Adapter{}, false
	}
	a.Bound = true
	return a, true
}

func allZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}

// hostIPv4Set is the set of IPv4 addresses the host's interfaces hold.
func hostIPv4Set(adapters []Adapter) map[netip.Addr]bool {
	out := map[netip.Addr]bool{}
	for _, a := range adapters {
		for _, s := range a.IPv4 {
			if ip, err := netip.ParseAddr(s); err == nil {
				out[ip] = true
			}
		}
	}
	return out
}

// heldByHost says whether a host interface holds ip: an HNS endpoint is attached to the host
// when its address is on a host vNIC (host.go, Endpoint.HostAttached).
func heldByHost(set map[netip.Addr]bool, ip string) bool {
	a, err := netip.ParseAddr(ip)
	return err == nil && set[a]
}
