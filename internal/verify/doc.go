// Package verify models the data plane of a mixed Linux/Windows cluster and answers which flows
// work, which do not and why, hop by hop — from the plan before anything is deployed, and again
// with real dumps (route -n / ip route, keepalived.data, Get-HnsNetwork/-Endpoint/-PolicyList
// JSON) overriding the planned state per node.
//
// # Model
//
// A Model holds nodes with interfaces on L2 segments (a segment is an IP subnet: ARP resolves
// only among interfaces of the same subnet), routing tables with longest-prefix match stacked
// as layers (node-local routes, plan routes shared by identical nodes, the Linux CNI's routes
// to other nodes), and per-OS behaviour:
//
//   - Linux: ip_forward, rp_filter (strict/loose per interface, the larger of "all" and the
//     interface), Calico (IPIP tunl0 per IPIP mode or VXLAN per vxlanMode, BGP export of the
//     gateway holder's connected VIP route — none with VXLAN, none for pool routes when Felix
//     programs cluster routes —, Felix refusing to run where all.rp_filter is loose, IPAM
//     blocks outside spec.podCIDR, real /26 blocks read from dumps), flannel host-gw and vxlan,
//     bridge CNIs, CNI outgoing masquerade, kube-proxy DNAT for ClusterIPs and NodePorts with
//     its masquerade rules (externalTrafficPolicy Local: local endpoints only, source kept),
//     netfilter conntrack (reply destinations restored before routing, sources after).
//   - keepalived: members start BACKUP with nopreempt, so the first election goes to the highest
//     priority, a failover to the highest running member, and a returning member never takes the
//     VIPs back (unless a dump says preemption is on). Dumps of keepalived.data fix the holder.
//     A dumped route that exists because of where the VIPs are (the holder's connected route,
//     another node's BGP-exported route via the holder) follows them when a scenario moves them.
//     Next to the steady state after such a scenario, a "during failover" view evaluates the
//     flows while hosts' ARP entries still hold the former holder's MAC, for the window
//     keepalived's gratuitous ARP or the kernel's neighbour timers give (NeighTimers).
//   - Windows: the HNS L2Bridge (or Overlay) network on its adapter's segment, the host endpoint
//     in compartment 1, the pods' gateway the CNI configuration gives (win-bridge with IPAM:
//     x.2, the host endpoint, so the host routes), endpoint policies (OutBoundNAT with ExceptionList; ROUTE/SDNRoute with
//     NeedEncap, which is what hands service traffic to winkernel's load balancer), VFP NAT
//     state, NodePorts served on the vSwitch adapter only (on Overlay, NodePort traffic to a
//     remote pod is SNATed to kube-proxy's sourceVip and VXLAN-encapsulated; without a
//     sourceVip winkernel does not start), and the documented limits as
//     explicit "unsupported-on-Windows" dispositions: node→service VIP, local NodePort, ICMP
//     that needs OutBoundNAT, node→remote pod on flannel VXLAN.
//   - HostProcess designs (calico/hostprocess, flannel/hostprocess; hostprocess.go): the CNI's
//     own pod makes the Windows network, so the model follows that CNI's Windows code. Calico
//     VXLAN: an Overlay network on the node's affine IPAM block (strictAffinity, or IPAM gives
//     Windows no address), pods from .3 with .1 (VFP) as gateway, VXLAN to every node both ways
//     (Felix's routes to the Windows VTEP, the Windows RemoteSubnetRoutes), no gateway VIPs,
//     Calico_ep's .2 as kube-proxy's sourceVip, OutBoundNAT except the service CIDR and the pools.
//     Calico BGP: L2Bridge with Calico_ep routing and the mesh's routes on the Windows host;
//     IP-in-IP reaches Windows undecapsulated. flannel vxlan: win-overlay (.1 gateway, HostRoute
//     policy for host↔local pods, no host endpoint), host-local's first address (.2) as
//     sourceVip, VNI ≥ 4096 and port 4789 or flanneld makes no network. flannel host-gw:
//     L2Bridge with <network>_ep at .2. Without a sourceVip winkernel does not start; with
//     --enable-dsr its ClusterIP load balancers are DSR ones.
//   - The ToR router of design upstream-tor/router, and an "edge" network behind the spec's
//     default gateways that reaches an external host and routes back what
//     spec.networking.upstreamRoutes states (default: the subnets of NICs with a gateway), never
//     pod CIDRs or the service CIDR.
//   - Packet size (Options.PacketSize): an ICMP or UDP packet with DF that does not fit the link
//     MTU less the encapsulation of its path is dropped; TCP is cut into segments that fit (MSS
//     from the route MTU the CNI lowers, and path MTU discovery).
//
// TestDatapathEmulationAgreesWithVerify rebuilds the example's gateways (real keepalived with
// the rendered keepalived.conf), a Linux worker and an emulated L2Bridge Windows node in network
// namespaces and checks that the kernel's verdict equals verify's for every compared flow class.
//
// # Services
//
// Given services (--services), or one probe service per pod class; the cluster DNS service at
// the plan's clusterDNS address (UDP and TCP 53, CoreDNS on the first two live Linux nodes) is
// always there unless a given service has its address.
//
// # Flows and traces
//
// A walker follows one packet (with encapsulation) through the model and records, when asked,
// Batfish-like hops and steps: route used (with its origin: plan entry or dump file:line), ARP
// target, SNAT/DNAT before and after, encapsulation. Every delivered flow is answered: the
// reply walks back from what was delivered, must pass the nodes that translated it, and must
// arrive as the reverse of the original connection. Dispositions: delivered,
// delivered-with-SNAT, no-route, no-ARP (including unheld VIPs), unsupported-on-Windows, loop,
// dropped, address-conflict.
//
// # Equivalence classes and incremental runs
//
// Nodes are grouped by a signature of everything their forwarding depends on (their own state,
// the shared tables they use, how those tables treat their addresses relative to them, the
// holder of their gateway). One representative pair per class pair and flow kind is evaluated
// and stands for all node pairs of the classes; TestClassesMatchNaive checks this against
// per-node-pair evaluation. Each class result records the facts it read (nodes visited, routes
// matched, ARP lookups), so after a node joins or a gateway dies only results that read a
// changed fact, or whose classes changed, are evaluated again.
package verify
