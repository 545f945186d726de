//go:build windows

package winnode

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// The host's interfaces, read with GetAdaptersAddresses: Adapters, SetForwarding, and the
// interface aliases of Routes, AddRoute and DeleteRoute. Compiled and vetted for Windows only;
// the classification (gaa.go) is tested on Linux.

// ipInterface is one entry of the GetAdaptersAddresses listing, with what it takes to address
// the interface again.
type ipInterface struct {
	gaaInterface
	// luid is the interface's NET_LUID (IP_ADAPTER_ADDRESSES.Luid), which iphlpapi calls prefer
	// over the index.
	luid uint64
	// index is the IPv4 interface index (IP_ADAPTER_ADDRESSES.IfIndex); 0 without IPv4, as Go's
	// net/interface_windows.go interfaceTable expects ("ipv6IfIndex is a substitute for
	// ifIndex").
	index uint32
}

// listIPInterfaces reads GetAdaptersAddresses(AF_UNSPEC, GAA_FLAG_INCLUDE_ALL_INTERFACES) and
// GetIfTable2's interface flags. Go's net.Interfaces calls GetAdaptersAddresses without that
// flag ($GOROOT/src/net/interface_windows.go adapterAddresses: GAA_FLAG_INCLUDE_PREFIX |
// GAA_FLAG_INCLUDE_GATEWAYS), which leaves out a NIC whose IP stack a vSwitch unbound
// (design.md host facts); with it "all NDIS interfaces" are returned
// (learn.microsoft.com/windows/win32/api/iphlpapi/nf-iphlpapi-getadaptersaddresses).
func listIPInterfaces() ([]ipInterface, error) {
	ndis, err := ndisFlags()
	if err != nil {
		return nil, err
	}
	// The buffer is sized and regrown as Go's net package does (15000 bytes, the size the
	// GetAdaptersAddresses documentation recommends, then what ERROR_BUFFER_OVERFLOW asks for).
	// The skipped address kinds are not used and make the listing smaller.
	const flags = windows.GAA_FLAG_INCLUDE_ALL_INTERFACES | windows.GAA_FLAG_SKIP_ANYCAST |
		windows.GAA_FLAG_SKIP_MULTICAST | windows.GAA_FLAG_SKIP_DNS_SERVER
	size := uint32(15000)
	var buf []byte
	for {
		buf = make([]byte, size)
		err := windows.GetAdaptersAddresses(windows.AF_UNSPEC, flags, 0, (*windows.IpAdapterAddresses)(unsafe.Pointer(&buf[0])), &size)
		if err == nil {
			break
		}
		if !errors.Is(err, windows.ERROR_BUFFER_OVERFLOW) || size <= uint32(len(buf)) {
			return nil, os.NewSyscallError("GetAdaptersAddresses", err)
		}
	}
	if size == 0 {
		return nil, nil // no interface at all
	}
	var out []ipInterface
	for aa := (*windows.IpAdapterAddresses)(unsafe.Pointer(&buf[0])); aa != nil; aa = aa.Next {
		n := min(int(aa.PhysicalAddressLength), len(aa.PhysicalAddress))
		i := ipInterface{
			gaaInterface: gaaInterface{
				FriendlyName: windows.UTF16PtrToString(aa.FriendlyName),
				Description:  windows.UTF16PtrToString(aa.Description),
				MAC:          append([]byte(nil), aa.PhysicalAddress[:n]...),
				IfType:       aa.IfType,
				Flags:        aa.Flags,
				NDISFlags:    ndis[aa.Luid],
			},
			luid:  aa.Luid,
			index: aa.IfIndex,
		}
		for u := aa.FirstUnicastAddress; u != nil; u = u.Next {
			if ip, ok := netip.AddrFromSlice(u.Address.IP()); ok && ip.Is4() {
				i.IPv4 = append(i.IPv4, ip.String())
			}
		}
		out = append(out, i)
	}
	return out, nil
}

// ndisFlags maps each interface's LUID to MIB_IF_ROW2.InterfaceAndOperStatusFlags
// (GetIfTable2Ex without statistics; the table is freed with FreeMibTable, as
// learn.microsoft.com/windows/win32/api/netioapi/nf-netioapi-getiftable2ex asks). x/sys/windows'
// MibIfRow2 has the C layout (1352 bytes on 64-bit, WireGuard/wireguard-windows
// tunnel/winipcfg/types_test.go), so Rows strides correctly.
func ndisFlags() (map[uint64]uint8, error) {
	var table *windows.MibIfTable2
	if err := windows.GetIfTable2Ex(windows.MibIfTableNormalWithoutStatistics, &table); err != nil {
		return nil, os.NewSyscallError("GetIfTable2Ex", err)
	}
	defer windows.FreeMibTable(unsafe.Pointer(table))
	rows := unsafe.Slice(&table.Table[0], table.NumEntries)
	out := make(map[uint64]uint8, len(rows))
	for i := range rows {
		out[rows[i].InterfaceLuid] = rows[i].InterfaceAndOperStatusFlags
	}
	return out, nil
}

// interfaceNamed finds an interface by alias: the exact name first, then ignoring case, as
// Windows compares interface aliases (Get-NetAdapter -Name and netsh take them in any case).
func interfaceNamed(ifs []ipInterface, alias string) *ipInterface {
	for i := range ifs {
		if ifs[i].FriendlyName == alias {
			return &ifs[i]
		}
	}
	for i := range ifs {
		if strings.EqualFold(ifs[i].FriendlyName, alias) {
			return &ifs[i]
		}
	}
	return nil
}

// ipv4InterfaceRow reads the interface's IPv4 MIB_IPINTERFACE_ROW (GetIpInterfaceEntry with
// Family AF_INET and the LUID; learn.microsoft.com/windows/win32/api/netioapi/
// nf-netioapi-getipinterfaceentry). found is false for an interface without IPv4.
//
// x/sys/windows v0.49.0 declares TransmitOffload and ReceiveOffload as uint32 where netioapi.h
// has NL_INTERFACE_OFFLOAD_ROD, a one-byte bit field struct (WireGuard/wireguard-windows
// tunnel/winipcfg/types_test.go: 168 bytes, offload at 164 and 165, DisableDefaultRoutes at 166;
// retep998/winapi-rs src/shared/nldef.rs). Its struct is 176 bytes: the fields up to
// TransmitOffload are where Windows writes them, the buffer is large enough, and the last three
// fields are never read or written here, so the row Windows fills is passed back to
// SetIpInterfaceEntry byte for byte. GetIpInterfaceTable is not used: its rows would stride
// 176 bytes over a table of 168-byte rows.
func ipv4InterfaceRow(luid uint64) (row windows.MibIpInterfaceRow, found bool, err error) {
	row = windows.MibIpInterfaceRow{Family: windows.AF_INET, InterfaceLuid: luid}
	err = windows.GetIpInterfaceEntry(&row)
	switch {
	case err == nil:
		return row, true, nil
	case errors.Is(err, windows.ERROR_NOT_FOUND), errors.Is(err, windows.ERROR_FILE_NOT_FOUND):
		// ERROR_NOT_FOUND: no IPv4 on the interface; ERROR_FILE_NOT_FOUND: the LUID is gone
		// (GetIpInterfaceEntry's documented return codes).
		return row, false, nil
	default:
		return row, false, err
	}
}

// Adapters lists the interfaces with their IPv4 forwarding state: one GetAdaptersAddresses and
// one GetIfTable2 per call, then GetIpInterfaceEntry on each interface with IPv4.
func (h *WindowsHost) Adapters(ctx context.Context) ([]Adapter, error) {
	return call(ctx, func() ([]Adapter, error) {
		ifs, err := listIPInterfaces()
		if err != nil {
			return nil, fmt.Errorf("list network adapters: %w", err)
		}
		var out []Adapter
		for _, i := range ifs {
			a, ok := adapterFromGAA(i.gaaInterface)
			if !ok {
				continue
			}
			if i.ipv4Enabled() {
				row, found, err := ipv4InterfaceRow(i.luid)
				if err != nil {
					return nil, fmt.Errorf("IPv4 settings of %s: GetIpInterfaceEntry: %w", a.Name, err)
				}
				a.Forwarding = found && row.ForwardingEnabled != 0
			}
			out = append(out, a)
		}
		return out, nil
	})
}

// SetForwarding enables IPv4 forwarding on the interface named alias: GetIpInterfaceEntry, then
// SetIpInterfaceEntry with ForwardingEnabled set and SitePrefixLength 0, which the documentation
// requires for IPv4 ("For IPv4, the SitePrefixLength member must be set to 0",
// learn.microsoft.com/windows/win32/api/netioapi/nf-netioapi-setipinterfaceentry, Remarks).
// x/sys/windows does not wrap SetIpInterfaceEntry; it is called from iphlpapi.dll.
func (h *WindowsHost) SetForwarding(ctx context.Context, alias string) error {
	return call0(ctx, func() error {
		ifs, err := listIPInterfaces()
		if err != nil {
			return fmt.Errorf("enable forwarding on %s: list network adapters: %w", alias, err)
		}
		i := interfaceNamed(ifs, alias)
		if i == nil {
			return fmt.Errorf("enable forwarding on %s: no such interface", alias)
		}
		row, found, err := ipv4InterfaceRow(i.luid)
		if err != nil {
			return fmt.Errorf("enable forwarding on %s: GetIpInterfaceEntry: %w", alias, err)
		}
		if !found {
			// A NIC bound to a vSwitch: its IPv4 lives on the vSwitch's vNIC.
			return fmt.Errorf("enable forwarding on %s: the interface has no IPv4", alias)
		}
		if row.ForwardingEnabled != 0 {
			return nil
		}
		row.ForwardingEnabled = 1
		row.SitePrefixLength = 0
		set, err := iphlpapiProc("SetIpInterfaceEntry")
		if err != nil {
			return err
		}
		if r1, _, _ := set.Call(uintptr(unsafe.Pointer(&row))); r1 != 0 {
			return fmt.Errorf("enable forwarding on %s: SetIpInterfaceEntry: %w", alias, syscall.Errno(r1))
		}
		return nil
	})
}

// iphlpapiProc finds a procedure of iphlpapi.dll that x/sys/windows does not wrap. The handles
// are function-local: the package keeps no mutable state, iphlpapi.dll is loaded already
// (x/sys/windows uses it), so loading it again only counts a reference, and these calls are
// made a few times per pass at most.
func iphlpapiProc(name string) (*windows.LazyProc, error) {
	p := windows.NewLazySystemDLL("iphlpapi.dll").NewProc(name)
	if err := p.Find(); err != nil {
		return nil, fmt.Errorf("iphlpapi.dll: %w", err)
	}
	return p, nil
}
