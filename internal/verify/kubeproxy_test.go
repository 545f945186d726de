package verify

import (
	"strconv"
	"strings"
	"testing"
)

// extRule is one rule of a service's KUBE-EXT chain as kube-proxy's iptables mode writes it
// (kubernetes v1.37.1 pkg/proxy/iptables/proxier.go, "Set up external traffic handling"),
// reduced to what it matches on: -s <cluster CIDR> (the ClusterCIDR local-traffic detector,
// pkg/proxy/util/localdetector.go NewDetectLocalByCIDR) and -m addrtype --src-type LOCAL.
type extRule struct {
	comment  string
	podSrc   bool // localDetector.IfLocal()
	localSrc bool // -m addrtype --src-type LOCAL
	target   string
}

// extChain lists the rules in the order proxier.go writes them; hasLocal says whether the node
// has an endpoint of the service (hasExternalEndpoints for policy Local).
func extChain(local, hasLocal bool) []extRule {
	if !local {
		return []extRule{
			{comment: "masquerade traffic for external destinations", target: "KUBE-MARK-MASQ"},
			{comment: "(externalPolicyChain = clusterPolicyChain)", target: "KUBE-SVC"},
		}
	}
	rules := []extRule{
		{comment: "pod traffic for external destinations", podSrc: true, target: "KUBE-SVC"},
		{comment: "masquerade LOCAL traffic for external destinations", localSrc: true, target: "KUBE-MARK-MASQ"},
		{comment: "route LOCAL traffic for external destinations", localSrc: true, target: "KUBE-SVC"},
	}
	if hasLocal {
		rules = append(rules, extRule{comment: "(externalPolicyChain = localPolicyChain)", target: "KUBE-SVL"})
	}
	return rules
}

// walkExt runs a packet through the chain: the terminal chain (KUBE-SVC, KUBE-SVL, or "" when
// it falls off the chain untranslated, which the filter table's "has no local endpoints" rule
// then drops) and whether KUBE-MARK-MASQ marked it (a -j to a user chain that only marks
// returns, as KUBE-MARK-MASQ does).
func walkExt(rules []extRule, podSrc, localSrc bool) (chain string, masq bool) {
	for _, r := range rules {
		if (r.podSrc && !podSrc) || (r.localSrc && !localSrc) {
			continue
		}
		if r.target == "KUBE-MARK-MASQ" {
			masq = true
			continue
		}
		return r.target, masq
	}
	return "", masq
}

// TestNodePortPolicyFollowsKubeProxyRules: for every kind of client of a NodePort, verify's
// verdict, disposition and source translation are what kube-proxy's KUBE-EXT rules give — in
// particular a Linux node to its own NodePort and a Linux pod to its own node's NodePort of an
// externalTrafficPolicy Local service whose only endpoint is elsewhere (issue 25, items 1 and
// 2): "route LOCAL traffic" and "pod traffic" send both to the cluster chain, so they are
// delivered.
func TestNodePortPolicyFollowsKubeProxyRules(t *testing.T) {
	c, p := example(t)
	svcs, err := ParseServices("services.json", []byte(`[
	  {"name": "web", "clusterIP": "10.176.0.50", "backends": ["10.160.3.10"],
	   "ports": [{"protocol": "TCP", "port": 80, "targetPort": 8080, "nodePort": 30500}]},
	  {"name": "web-local", "clusterIP": "10.176.0.51", "backends": ["10.160.3.10"], "externalTrafficPolicy": "Local",
	   "ports": [{"protocol": "TCP", "port": 80, "targetPort": 8081, "nodePort": 30501}]}
	]`))
	if err != nil {
		t.Fatal(err)
	}
	m, err := Build(Input{Plan: p, Spec: c, Services: svcs})
	if err != nil {
		t.Fatal(err)
	}
	v := NewVerifier(m, false)
	v.Run()
	backendNode := m.OwnerOfPodIP(mustAddr(t, "10.160.3.10"))
	if backendNode == nil || backendNode.Name != "node001" {
		t.Fatalf("the endpoint 10.160.3.10 is on %v, want node001", backendNode)
	}
	for _, tc := range []struct {
		name      string
		src, node string // flow source; the node whose NodePort is used
		pod       bool   // the source is a pod of src (else its host, or external)
	}{
		{name: "node to its own NodePort, endpoint elsewhere", src: "master2", node: "master2"},
		{name: "node to its own NodePort, local endpoint", src: "node001", node: "node001"},
		{name: "pod to its own node's NodePort, endpoint elsewhere", src: "master2/pod", node: "master2", pod: true},
		{name: "pod to its own node's NodePort, local endpoint", src: "node001/pod", node: "node001", pod: true},
		{name: "another node's host, no local endpoint", src: "node001", node: "master2"},
		{name: "another node's host, local endpoint", src: "master2", node: "node001"},
		{name: "external client, no local endpoint", src: "external", node: "master2"},
		{name: "external client, local endpoint", src: "external", node: "node001"},
	} {
		for _, local := range []bool{false, true} {
			svc, port := "web", 30500
			if local {
				svc, port = "web-local", 30501
			}
			t.Run(tc.name+"/"+svc, func(t *testing.T) {
				n := m.NodeByName(tc.node)
				addr := n.IP()
				if tc.src == "external" {
					addr = nodePortAddr(n)
				}
				// The source as it reaches the node: the client's own address, as no hop
				// between the client and a node's own (or a directly reachable) address
				// translates it.
				var src Addr
				switch {
				case tc.src == "external":
					src = m.External
				case tc.pod:
					src = m.NodeByName(strings.TrimSuffix(tc.src, "/pod")).Pods[0].IP
				default:
					src = m.NodeByName(tc.src).IP()
				}
				chain, masq := walkExt(extChain(local, n == backendNode), m.ClusterCIDRs[0].Contains(src), n.isLocal(src))
				r := traceFlow(t, v, tc.src, addr.String()+":"+strconv.Itoa(port), TCP, 0)
				text := r.Forward.Text("")
				switch chain {
				case "":
					if r.Disposition != Dropped || r.Verdict != VerdictOK || !strings.Contains(r.Cause, "no local endpoint") {
						t.Errorf("kube-proxy drops it (no rule of KUBE-EXT matches, filter: has no local endpoints); verify: %s %s (%s)\n%s", r.Verdict, r.Disposition, r.Cause, text)
					}
					return
				case "KUBE-SVL":
					if r.Disposition != Delivered || r.Verdict != VerdictOK {
						t.Errorf("kube-proxy sends it to the local endpoint with the source kept; verify: %s %s (%s)\n%s", r.Verdict, r.Disposition, r.Cause, text)
					}
					return
				}
				// KUBE-SVC: any endpoint; masqueraded when marked and the endpoint is on
				// another node (a local endpoint sees the node's own address either way).
				if r.Verdict != VerdictOK || (r.Disposition != Delivered && r.Disposition != DeliveredSNAT) {
					t.Fatalf("kube-proxy sends it to the cluster chain (masquerade %t); verify: %s %s (%s)\n%s", masq, r.Verdict, r.Disposition, r.Cause, text)
				}
				if n != backendNode && masq != (r.Disposition == DeliveredSNAT) {
					t.Errorf("masquerade mark %t, but verify says %s (%s)\n%s", masq, r.Disposition, r.Cause, text)
				}
				if local && (tc.pod || tc.src == tc.node) && !strings.Contains(text, "cluster chain") {
					t.Errorf("the trace does not say kube-proxy short-circuits to the cluster chain:\n%s", text)
				}
			})
		}
	}
}
