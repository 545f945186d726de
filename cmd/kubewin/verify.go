package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kubewin/kubewin/internal/cliutil"
	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/internal/verify"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

func newVerifyCmd(s streams) *cobra.Command {
	var (
		file, output, dumpDir, servicesFile, proto, rpFilter string
		dumps, scenarios, flow                               []string
		port, packetSize, linkMTU                            int
		df                                                   bool
	)
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Check which pod, service, node and external flows work, hop by hop, before and after deploying",
		Long: `verify models the cluster's data plane — Linux routing tables and CNI (Calico IPIP, flannel
host-gw/vxlan, static host-gw), kube-proxy NAT, keepalived gateway VIPs with nopreempt, the
Windows HNS L2Bridge or Overlay network with its endpoint policies (OutBoundNAT ExceptionList,
ROUTE/SDNRoute NeedEncap) and winkernel load balancing (on Overlay, SNAT to its sourceVip and
VXLAN to remote pods), the L2 segments and the network beyond the default
gateways — and answers which flows work: pod→pod on one node, Linux↔Linux, Linux↔Windows and
Windows↔Windows, pod→service with backends on each OS, node→pod, pod→node, pod→external and
external→NodePort, for TCP, UDP and ICMP. Replies are checked too (NAT undone, asymmetric paths,
rp_filter). Documented Windows limits (node→service VIP, local NodePort, ICMP to remote
networks) are reported as expected-unsupported, not as failures.

What the spec states beyond the plan counts too: Windows pods use the gateway their CNI
configuration gives them (win-bridge with IPAM: the host endpoint x.2, and the Windows host
routes); the network beyond the default gateways routes back only
spec.networking.upstreamRoutes (default: the subnets of NICs that have a gateway); Calico's
vxlanMode (no BGP, nothing exports a gateway holder's route), clusterRoutes: Felix (pool routes
learned over BGP are not installed) and Felix refusing to run where net.ipv4.conf.all.rp_filter
is 2 (unless ignoreLooseRPF); externalTrafficPolicy Local in --services; and, with
--packet-size, ICMP and UDP packets with DF that do not fit an encapsulated path (TCP is cut
into segments that fit: MSS and path MTU discovery).

A --scenario that moves a gateway VIP adds a DURING FAILOVER view: how long hosts keep the
former holder's MAC (its successor's gratuitous ARP, or the kernel's neighbour timers when
nobody takes over) and the flows whose verdict differs meanwhile.

Nodes that behave alike are verified once per class, so large clusters verify in about a second.

The plan comes from -f (default: the embedded example). Real state overrides it per node:
  --dump NODE=FILE     one dump of NODE; repeatable
  --dump-dir DIR       DIR/<node>/<any file name>, every file a dump of that node
A dump is recognised by content: route -n or ip route output (Linux; "..." lines mark a partial
table that overrides only the routes it shows), keepalived's SIGUSR1 dump /tmp/keepalived.data
(gateway members), Get-HnsNetwork / Get-HnsEndpoint / Get-HnsPolicyList | ConvertTo-Json -Depth 10
(Windows; UTF-16 accepted).

Without --services, one probe service per class of pods is assumed (TCP 80 and UDP 53, with a
NodePort). The cluster DNS service (the plan's clusterDNS address, UDP and TCP 53, CoreDNS on
two Linux nodes) is always modelled, unless --services gives a service with its address.

Exit codes: 0 every expected flow works, 1 an expected flow fails, 2 bad input.`,
		Example: `  kubewin verify
  kubewin verify -f cluster.yaml --dump node009=endpoints.json --dump master1=route-n.txt
  kubewin verify --scenario gateway-down=master1,master2
  kubewin verify --flow node001/pod node009/pod --proto icmp
  kubewin verify --flow node009/pod 10.176.0.10 --proto udp --port 53 -o json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// "--flow SRC DST": pflag gives the flag SRC; DST arrives as the argument.
			if len(args) == 1 {
				if len(flow) != 1 {
					return cliutil.BadInputf("unexpected argument %q (verify takes none; --flow takes SRC DST)", args[0])
				}
				flow = append(flow, args[0])
			}
			if err := cliutil.ValidateFormat(output, "text", "json"); err != nil {
				return err
			}
			in := verify.Input{}
			if packetSize < 0 || packetSize > 65535 {
				return cliutil.BadInputf("--packet-size %d: expected 0 (not checked) to 65535 bytes", packetSize)
			}
			if linkMTU < 68 || linkMTU > 65535 {
				return cliutil.BadInputf("--link-mtu %d: expected 68 to 65535 bytes", linkMTU)
			}
			in.Options.PacketSize, in.Options.DF, in.Options.LinkMTU = packetSize, df, linkMTU
			switch rpFilter {
			case "loose":
				in.Options.DefaultRPFilter = 2
			case "strict":
				in.Options.DefaultRPFilter = 1
			case "off":
				in.Options.DefaultRPFilter = -1
			default:
				return cliutil.BadInputf("--rp-filter %q: expected loose, strict or off", rpFilter)
			}
			var err error
			if file == "" {
				in.Spec, _, err = v1alpha1.ParseExample()
			} else {
				in.Spec, _, err = v1alpha1.Load(file)
			}
			if err != nil {
				return cliutil.BadInput(err)
			}
			if in.Plan, err = plan.New(in.Spec); err != nil {
				return cliutil.BadInput(fmt.Errorf("plan: %w", err))
			}
			ds := &verify.DumpSet{}
			for _, d := range dumps {
				node, path, ok := strings.Cut(d, "=")
				if !ok || node == "" || path == "" {
					return cliutil.BadInputf("--dump %q: expected NODE=FILE", d)
				}
				f, err := verify.LoadDumpFile(node, path)
				if err != nil {
					return cliutil.BadInput(err)
				}
				ds.Files = append(ds.Files, f)
			}
			if dumpDir != "" {
				fs, err := verify.LoadDumpDir(dumpDir)
				if err != nil {
					return cliutil.BadInput(err)
				}
				ds.Files = append(ds.Files, fs...)
			}
			if len(ds.Files) > 0 {
				in.Dumps = ds
			}
			if servicesFile != "" {
				data, err := os.ReadFile(servicesFile)
				if err != nil {
					return cliutil.BadInput(fmt.Errorf("read services: %w", err))
				}
				if in.Services, err = verify.ParseServices(servicesFile, data); err != nil {
					return cliutil.BadInput(err)
				}
			}
			m, err := verify.Build(in)
			if err != nil {
				var de *verify.DumpError
				if errors.As(err, &de) {
					return cliutil.BadInput(err)
				}
				return cliutil.BadInput(fmt.Errorf("model: %w", err))
			}
			v := verify.NewVerifier(m, false)
			for _, sc := range scenarios {
				parsed, err := verify.ParseScenario(sc)
				if err != nil {
					return cliutil.BadInput(err)
				}
				if err := v.Apply(parsed); err != nil {
					return cliutil.BadInput(err)
				}
			}
			if len(flow) > 0 {
				return runFlow(s, v, flow, proto, port, output)
			}
			if cmd.Flags().Changed("proto") || cmd.Flags().Changed("port") {
				return cliutil.BadInputf("--proto and --port apply to --flow")
			}
			rep := v.Run()
			if output == "json" {
				err = rep.WriteJSON(s.out)
			} else {
				err = rep.WriteText(s.out)
			}
			if err != nil {
				return fmt.Errorf("write report: %w", err)
			}
			if rep.Failed() {
				return cliutil.Findings()
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&file, "file", "f", "", "cluster description (default: the embedded example)")
	f.StringVarP(&output, "output", "o", "text", "output format: text or json")
	f.StringArrayVar(&dumps, "dump", nil, "NODE=FILE: a route -n / ip route / keepalived.data / HNS JSON dump of NODE (repeatable)")
	f.StringVar(&dumpDir, "dump-dir", "", "directory of dumps, DIR/<node>/<file>")
	f.StringVar(&servicesFile, "services", "", "JSON list of services: {name, clusterIP, ports, backends, externalTrafficPolicy}")
	f.StringArrayVar(&scenarios, "scenario", nil, "gateway-down=NODE[,NODE], gateway-up=NODE, node-down=NODE, node-up=NODE, vip-unheld=VIP|WINDOWS-NODE|GROUP (repeatable, applied in order)")
	f.StringSliceVar(&flow, "flow", nil, "trace one flow: --flow SRC DST, each a node, NODE/pod, an address or external")
	f.StringVar(&proto, "proto", "tcp", "protocol of --flow: tcp, udp or icmp")
	f.IntVar(&port, "port", 0, "destination port of --flow (default: the service's or 8080/5353)")
	f.StringVar(&rpFilter, "rp-filter", "loose", "rp_filter of interfaces the plan sets none for: loose, strict or off (\"all\" stays the kernel's 0 unless the plan sets it)")
	f.IntVar(&packetSize, "packet-size", 0, "IP size in bytes of every flow's packets (TCP: of its writes, which MSS cuts to fit); ICMP/UDP paths whose MTU less encapsulation is smaller fail (0: not checked)")
	f.BoolVar(&df, "df", true, "with --packet-size: ICMP and UDP packets carry the don't-fragment bit, so they are not fragmented to fit")
	f.IntVar(&linkMTU, "link-mtu", 1500, "MTU of the node links, with --packet-size")
	return cmd
}

// runFlow traces --flow SRC DST (also accepted as --flow SRC,DST).
func runFlow(s streams, v *verify.Verifier, flow []string, proto string, port int, output string) error {
	if len(flow) != 2 {
		return cliutil.BadInputf("--flow takes SRC and DST (e.g. --flow node001/pod node009/pod), got %q", strings.Join(flow, " "))
	}
	pr, err := verify.ParseProto(proto)
	if err != nil {
		return cliutil.BadInput(err)
	}
	if port < 0 || port > 65535 {
		return cliutil.BadInputf("--port %d: expected 1-65535", port)
	}
	rs, err := v.Flow(flow[0], flow[1], pr, port)
	if err != nil {
		return cliutil.BadInput(err)
	}
	if output == "json" {
		err = verify.WriteFlowJSON(s.out, rs)
	} else {
		err = verify.WriteFlowText(s.out, rs)
	}
	if err != nil {
		return fmt.Errorf("write flow: %w", err)
	}
	for _, r := range rs {
		if r.Verdict == verify.VerdictFail {
			return cliutil.Findings()
		}
	}
	return nil
}
