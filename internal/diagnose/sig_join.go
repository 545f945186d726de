package diagnose

const (
	refKubeadmJoin   = "https://kubernetes.io/docs/reference/setup-tools/kubeadm/kubeadm-join/#token-based-discovery-with-ca-pinning"
	refBootstrapToks = "https://kubernetes.io/docs/reference/access-authn-authz/bootstrap-tokens/"
)

// joinSignatures: the join path (issue 12) — discovery with a pinned CA and a bootstrap token, TLS
// bootstrap, registration, pod CIDR. Literals are the upstream components' own message text
// (Kubernetes v1.37.1), because kubeadm, the kubelet and kube-proxy print them whichever tool drove
// the join; kubewin join's own wording is matched only where it quotes them.
func joinSignatures() []Signature {
	return []Signature{
		{
			// cmd/kubeadm/app/util/pubkeypin/pubkeypin.go: "none of the public keys %q are pinned",
			// wrapped by discovery/token/token.go "cluster CA found in cluster-info ConfigMap is invalid".
			ID: "JOIN-CA-PIN-MISMATCH", Component: "join", Severity: SevError,
			Title:   "discovery refused the cluster CA: its public key is not the pinned one",
			Literal: "are pinned",
			Pattern: `none of the public keys "(?P<hash>sha256:[0-9a-f]+)[^"]*" are pinned`,
			Cause: "The CA in kube-public/cluster-info hashes to {hash}, which is not the --discovery-token-ca-cert-hash / --ca-cert-hash " +
				"given to join: the hash was copied from another cluster, the CA was rotated since the join command was printed, or " +
				"something between the node and the API server presents a different CA.",
			Fix: "On the admin side print the current pin (kubewin token create, or kubeadm token create --print-join-command; or " +
				"openssl x509 -pubkey -in ca.crt | openssl pkey -pubin -outform der | sha256sum) and re-run join with it; never join with " +
				"--discovery-token-unsafe-skip-ca-verification.",
			Refs: []string{"https://github.com/kubernetes/kubernetes/blob/v1.37.1/cmd/kubeadm/app/util/pubkeypin/pubkeypin.go", refKubeadmJoin},
		},
		{
			// kubewin join's own wording of the pin check (internal/join/discovery.go ErrCAPinMismatch,
			// checked with kubeadm's pubkeypin); kubeadm's "none of the public keys ... are pinned" is
			// JOIN-CA-PIN-MISMATCH.
			ID: "JOIN-KUBEWIN-CA-PIN-MISMATCH", Component: "join", Severity: SevError,
			Title:   "kubewin join refused the cluster CA: it does not match --ca-cert-hash",
			Literal: "the cluster CA does not match --ca-cert-hash",
			Pattern: `the cluster CA does not match --ca-cert-hash(?: \((?P<pin>sha256:[0-9a-f]+); the cluster's is (?P<hash>sha256:[0-9a-f]+))?`,
			Cause: "The CA that the server[[ (its key hashes to {hash})]] publishes in kube-public/cluster-info is not the one join was told " +
				"to pin[[ ({pin})]]: the hash was copied from another cluster or mistyped, the cluster CA was rotated since the join " +
				"command was printed, or something other than the cluster's API server answers at --server. join stops before it " +
				"writes anything (exit 2).",
			Fix: "On the admin side run kubewin token create and use the --ca-cert-hash it prints (or compute it: openssl x509 -pubkey " +
				"-in ca.crt | openssl pkey -pubin -outform der | sha256sum); if the hash is right, check that --server really is this " +
				"cluster's API server (no TLS-intercepting proxy in between).",
			Refs: []string{"https://github.com/kubernetes/kubernetes/blob/v1.37.1/cmd/kubeadm/app/util/pubkeypin/pubkeypin.go", refKubeadmJoin},
		},
		{
			// kubewin join (internal/join/discovery.go ErrTokenNotSigned): cluster-info still has no
			// jws-kubeconfig-<id> key when the discovery timeout ends.
			ID: "JOIN-KUBEWIN-TOKEN-UNKNOWN", Component: "join", Severity: SevError,
			Title:   "kubewin join: the bootstrap token is unknown, expired or deleted",
			Literal: "cluster-info has no signature for this token",
			Pattern: `cluster-info has no signature for this token(?: \(token (?P<token>[a-z0-9]{6})\))?`,
			Cause: "kube-public/cluster-info carries no JWS signature for token id[[ {token}]]: the token's Secret " +
				"(kube-system/bootstrap-token-<id>) does not exist — it expired and the token cleaner removed it, it was deleted, or the " +
				"token belongs to another cluster — or kube-controller-manager's bootstrapsigner controller is not running, so no token " +
				"is signed.",
			Fix: "On the admin side create a fresh token (kubewin token create) and join with the command it prints; if tokens exist " +
				"(kubectl -n kube-system get secrets --field-selector type=bootstrap.kubernetes.io/token) but cluster-info has no " +
				"jws-kubeconfig-* keys, run kube-controller-manager with --controllers=*,bootstrapsigner,tokencleaner.",
			Refs: []string{"https://github.com/kubernetes/kubernetes/blob/v1.37.1/cmd/kubeadm/app/discovery/token/token.go", refBootstrapToks},
		},
		{
			// kubewin join's TLS-bootstrap wait (internal/join/node.go csrState) reads the token's own
			// CSRs and names the one no approver has approved.
			ID: "JOIN-KUBEWIN-CSR-PENDING", Component: "join", Severity: SevError,
			Title:   "kubewin join: the kubelet's certificate signing request is not approved",
			Literal: "is pending: not approved",
			Pattern: `CSR (?P<csr>\S+) is pending: not approved`,
			Cause: "The kubelet asked for its client certificate (CSR {csr}) with the bootstrap token, but nothing approved it: " +
				"kube-controller-manager's csrapproving controller is not running (or runs with --controllers without it), or the " +
				"token's group is not bound to the node-client auto-approval ClusterRole, so the CSR stays Pending and the kubelet " +
				"never gets a credential.",
			Fix: "Run kube-controller-manager with csrapproving (and csrsigning with the cluster CA); kubewin token create binds the " +
				"auto-approval roles for the token's pool. To finish this node now: kubectl certificate approve {csr}, then run the same " +
				"kubewin join again — it resumes.",
			Refs: []string{"https://github.com/kubernetes/kubernetes/blob/v1.37.1/pkg/controller/certificates/approver/sarapprove.go"},
		},
		{
			// kubewin join's TLS-bootstrap wait (internal/join/node.go) loads the kubelet's kubeconfig;
			// the v1.37 kubelet writes it (pointing at pki/kubelet-client-current.pem) before it has the
			// certificate, so client-go's validation (tools/clientcmd/validation.go "unable to read
			// client-cert %v for %v due to %w") names the missing file until the CSR is signed.
			ID: "JOIN-KUBELET-CLIENT-CERT-MISSING", Component: "join", Severity: SevError,
			Title:   "TLS bootstrap did not finish: the kubelet has no client certificate",
			Literal: "kubelet-client-current.pem",
			Pattern: `unable to read client-cert (?P<path>\S*kubelet-client-current\.pem) for \S+ due to open \S+: no such file or directory`,
			Cause: "The kubelet's kubeconfig names {path} but the file does not exist: TLS bootstrap has not produced the kubelet's " +
				"client certificate. Either its CSR was never created (the bootstrap token was rejected: kubelet log \"cannot create " +
				"certificate signing request: Unauthorized\") or it is pending — no approver (kube-controller-manager's csrapproving " +
				"controller, with the auto-approval bindings kubewin token create makes) approved it, or no signer (csrsigning with " +
				"the cluster CA) issued it.",
			Fix: "kubectl get csr: a Pending CSR of system:bootstrap:<token id> needs kube-controller-manager running csrapproving and " +
				"csrsigning (or kubectl certificate approve <csr>); no CSR at all means the token was rejected — create a new token " +
				"(kubewin token create) and join again.",
			Refs: []string{"https://github.com/kubernetes/client-go/blob/v0.37.1/tools/clientcmd/validation.go",
				"https://kubernetes.io/docs/reference/access-authn-authz/kubelet-tls-bootstrapping/"},
		},
		{
			// cmd/kubeadm/app/discovery/token/token.go validateClusterInfoToken.
			ID: "JOIN-TOKEN-INVALID", Component: "join", Severity: SevError,
			Title:   "discovery: bootstrap token unknown to the cluster or expired",
			Literal: "is invalid for this cluster",
			Pattern: `token id \\?"(?P<token>[a-z0-9]{6})\\?" is invalid for this cluster(?: or it has expired|, can.t connect)`,
			Cause: "cluster-info in kube-public carries no JWS signature for token id {token}: the bootstrap-token-{token} Secret is gone " +
				"(tokens expire, 24 h by default, and the token cleaner deletes them) or was never created in this cluster.",
			Fix: "Create a fresh token on the admin side (kubewin token create, or kubeadm token create --print-join-command) and join with it; " +
				"for autoscaled nodes use a longer-lived, pool-scoped token.",
			Refs: []string{"https://github.com/kubernetes/kubernetes/blob/v1.37.1/cmd/kubeadm/app/discovery/token/token.go", refBootstrapToks},
		},
		{
			// cmd/kubeadm/app/discovery/token/token.go getClusterInfo: retried until the timeout.
			ID: "JOIN-JWS-MISSING", Component: "join", Severity: SevError,
			Title:   "discovery: cluster-info has no JWS signature for this token",
			Literal: "could not find a JWS signature in the cluster-info ConfigMap",
			Pattern: `could not find a JWS signature in the cluster-info ConfigMap for token ID \\?"(?P<token>[a-z0-9]+)\\?"`,
			Cause: "No signature for token id {token} appears in kube-public/cluster-info: the token does not exist (mistyped, expired, deleted) " +
				"or the bootstrap signer controller in kube-controller-manager is not running (--controllers must include bootstrapsigner).",
			Fix: "kubectl -n kube-system get secret bootstrap-token-{token}; create a new token if absent; otherwise enable the bootstrapsigner " +
				"controller (kube-controller-manager --controllers=*,bootstrapsigner,tokencleaner).",
			Refs: []string{"https://github.com/kubernetes/kubernetes/blob/v1.37.1/cmd/kubeadm/app/discovery/token/token.go", refBootstrapToks},
		},
		{
			// kubeadm discovery: "failed to parse cluster CA from the cluster-info configmap"
			// (kubernetes/kubeadm#1399: a CA bundle with two certificates during CA rotation).
			ID: "JOIN-CA-PARSE", Component: "join", Severity: SevError,
			Title:   "discovery cannot parse the CA in cluster-info",
			Literal: "failed to parse cluster CA from the cluster-info",
			Pattern: `failed to parse cluster CA from the cluster-info (?i:configmap): (?P<why>.*)`,
			Cause: "The certificate-authority-data in kube-public/cluster-info does not parse ({why}); a bundle of several CA " +
				"certificates (during CA rotation) is refused by older kubeadm discovery, and a hand-edited cluster-info may be truncated.",
			Fix: "Keep a single PEM CA in cluster-info while nodes join (or use a kubeadm that accepts bundles), or join with file " +
				"discovery (a kubeconfig carrying the CA bundle).",
			Refs: []string{"https://github.com/kubernetes/kubeadm/issues/1399", refKubeadmJoin},
		},
		{
			ID: "JOIN-JWS-INVALID", Component: "join", Severity: SevError,
			Title:   "discovery: cluster-info signature does not verify with this token",
			Literal: "failed to verify JWS signature of received cluster info object",
			Pattern: `failed to verify JWS signature of received cluster info object`,
			Cause: "The token id exists but its secret part does not sign the cluster-info content: the token secret was mistyped, or " +
				"cluster-info was edited (server URL or CA changed) and not re-signed yet.",
			Fix: "Re-copy the full token (id.secret) from the admin side, or create a new one; if cluster-info was just changed, wait for " +
				"the bootstrap signer to re-sign it and retry.",
			Refs: []string{"https://github.com/kubernetes/kubernetes/blob/v1.37.1/cmd/kubeadm/app/discovery/token/token.go", refBootstrapToks},
		},
		{
			// plugin/pkg/admission/noderestriction/admission.go: "node %q is not allowed to modify node %q".
			ID: "JOIN-NODE-NAME-MISMATCH", Component: "join", Severity: SevError,
			Title:   "node registration forbidden: credential is for another node name",
			Literal: "is not allowed to modify node",
			Pattern: `node \\?"(?P<cred>[^"\\]+)\\?" is not allowed to modify node \\?"(?P<node>[^"\\]+)\\?"`,
			Cause: "NodeRestriction admits a kubelet only for its own Node object: the kubelet's client certificate says system:node:{cred} but " +
				"it registers as {node} (hostname changed, --hostname-override differs from the name used at TLS bootstrap, or a certificate " +
				"copied from another machine).",
			Fix: "Make the kubelet's node name equal the certificate's (set --hostname-override/the hostname consistently), or delete the " +
				"kubelet client certificate (kubelet-client-current.pem) and bootstrap again so a certificate for {node} is issued.",
			Refs: []string{"https://github.com/kubernetes/kubernetes/blob/v1.37.1/plugin/pkg/admission/noderestriction/admission.go",
				"https://kubernetes.io/docs/reference/access-authn-authz/node/"},
		},
		{
			// pkg/kubelet/kubelet_node_status.go (v1.37.1) tryRegisterWithAPIServer: when creating the
			// Node is forbidden the kubelet looks for an existing Node of its name; "not found" there
			// means the create was refused and nothing registered (the forbidden reason itself is
			// not logged unless KubeletRegistrationGetOnExistsOnly is on).
			ID: "JOIN-NODE-REGISTER-FORBIDDEN", Component: "join", Severity: SevError,
			Title:   "node registration forbidden: the kubelet may not create its Node",
			Literal: "error getting existing node",
			Pattern: `Unable to register node with API server, error getting existing node\\?"? err=\\?"nodes \\?"(?P<node>[^"\\]+)\\?" not found`,
			Cause: "The API server refused to create Node {node} for the kubelet's credential (forbidden; the kubelet then found no " +
				"existing Node of that name): the client certificate is for another node name — the hostname or --hostname-override " +
				"changed after TLS bootstrap, or kubelet-client-current.pem was copied from another machine — so the Node authorizer " +
				"and NodeRestriction let it touch only its own Node (its lease errors then say \"can only access node lease with the " +
				"same name as the requesting node\"), or the credential is not in the system:nodes group at all.",
			Fix: "Compare the certificate's name (openssl x509 -noout -subject -in kubelet-client-current.pem: CN=system:node:<name>) with " +
				"{node}: restore the original node name, or delete kubelet-client-current.pem and the kubelet kubeconfig and join again " +
				"with a fresh token so a certificate for {node} is issued.",
			Refs: []string{"https://github.com/kubernetes/kubernetes/blob/v1.37.1/pkg/kubelet/kubelet_node_status.go",
				"https://github.com/kubernetes/kubernetes/blob/v1.37.1/plugin/pkg/admission/noderestriction/admission.go",
				"https://kubernetes.io/docs/reference/access-authn-authz/node/"},
		},
		{
			// plugin/pkg/auth/authorizer/node/node_authorizer.go (v1.37.1): "can only access node lease
			// with the same name as the requesting node" (and the same for CSINode).
			ID: "JOIN-NODE-CREDENTIAL-OTHER-NAME", Component: "join", Severity: SevError,
			Title:   "the kubelet's credential is for another node name",
			Literal: "with the same name as the requesting node",
			Pattern: `\\?"(?P<node>[^"\\]+)\\?" is forbidden: User \\?"system:node:(?P<cred>[^"\\]+)\\?" cannot \w+ resource \\?"(?P<res>\w+)\\?".*?can only access (?:node lease|CSINode) with the same name as the requesting node`,
			Cause: "The kubelet runs as node {node} but authenticates as system:node:{cred}; the Node authorizer lets a node touch only its " +
				"own {res}, so the kubelet cannot register, renew its lease or report status: the hostname or --hostname-override " +
				"changed after TLS bootstrap, or the client certificate was copied from another machine.",
			Fix: "Run the kubelet as {cred} again (hostname / --hostname-override), or delete kubelet-client-current.pem and the kubelet " +
				"kubeconfig and join again with a fresh token so a certificate for {node} is issued.",
			Refs: []string{"https://github.com/kubernetes/kubernetes/blob/v1.37.1/plugin/pkg/auth/authorizer/node/node_authorizer.go",
				"https://kubernetes.io/docs/reference/access-authn-authz/node/"},
		},
		{
			// pkg/proxy/node.go NewNodeManager (kube-proxy waits for node.spec.podCIDRs when it needs them).
			ID: "JOIN-PODCIDR-NOT-ASSIGNED", Component: "join", Severity: SevError,
			Title: "node never got a pod CIDR",
			// Windows start scripts poll for it too (acs-engine kubeletstart.ps1: "Sleeping for 10s, and then
			// waiting to discover pod CIDR", Azure/acs-engine#2384).
			Literal: "CIDR",
			// kubewin join (internal/join/node.go podNetwork): "Node <name> has no spec.podCIDR (is
			// kube-controller-manager running with --allocate-node-cidrs and a --cluster-cidr?)".
			Pattern: `timeout waiting for PodCIDR allocation on node \\?"(?P<node>[^"\\]+)\\?"|and then waiting to discover pod CIDR|` +
				`Node (?P<node>[^\s"]+) has no spec\.podCIDR`,
			Cause: "The node[[ {node}]] has no spec.podCIDR(s): the node never registered (the kubelet cannot reach or authenticate to the " +
				"API server, so a start script that waits for the pod CIDR waits forever), kube-controller-manager runs without " +
				"--allocate-node-cidrs (or without --cluster-cidr), its range is exhausted for this --node-cidr-mask-size, or the CNI " +
				"(Calico IPAM) never uses node pod CIDRs while this node's setup (kube-proxy detect-local NodeCIDR, flannel, a Windows " +
				"L2Bridge network) needs one.",
			Fix: "kubectl get node <node> -o yaml: if the node is missing, fix its registration first (kubelet log); if spec.podCIDRs is " +
				"empty, enable --allocate-node-cidrs with a --cluster-cidr large enough, or " +
				"set the Node's spec.podCIDRs before the kubelet registers (kubewin plan renders them); then restart kube-proxy.",
			Refs: []string{"https://github.com/kubernetes/kubernetes/blob/v1.37.1/pkg/proxy/node.go",
				"https://kubernetes.io/docs/reference/command-line-tools-reference/kube-controller-manager/"},
		},
		{
			// kubeadm phases/kubelet: kubelet-check polls http://localhost:10248/healthz; older kubeadm logs
			// "[kubelet-check] The HTTP call equal to 'curl -sSL http://localhost:10248/healthz' failed with
			// error: ..." and "It seems like the kubelet isn't running or healthy" (kubernetes/kubernetes#95857).
			ID: "JOIN-KUBELET-NOT-HEALTHY", Component: "join", Severity: SevError,
			Title:   "kubeadm kubelet-check: the kubelet is not running or not healthy",
			Literal: "[kubelet-check]",
			Pattern: `\[kubelet-check\] (?:The HTTP call equal to '[^']*' failed with error: (?P<err>.+)|It seems like the kubelet isn't running or healthy|The kubelet is not healthy after (?P<after>\S+))`,
			Cause: "kubeadm started the kubelet but its health endpoint (localhost:10248/healthz) does not answer[[ ({err})]][[ (after " +
				"{after})]]: the kubelet exits at start-up (bad flags or config, cgroup driver different from the container " +
				"runtime's, swap enabled, missing kubeconfig/CA) or the service is not enabled.",
			Fix: "Read the kubelet's own log (journalctl -xeu kubelet; on Windows Get-Service kubelet and the kubelet log file), fix the " +
				"first error it prints, then kubeadm reset and join again.",
			Refs: []string{"https://github.com/kubernetes/kubernetes/issues/95857",
				"https://kubernetes.io/docs/setup/production-environment/tools/kubeadm/troubleshooting-kubeadm/"},
		},
		{
			// kubeadm cmd/phases/workflow: "error execution phase %s" wraps the phase's error; specific
			// entries (CA pin, token, certificates) match the wrapped cause first.
			ID: "JOIN-PHASE-FAILED", Component: "join", Severity: SevError, Fallback: true,
			Title:   "kubeadm gave up in a phase",
			Literal: "error execution phase",
			Pattern: `error execution phase (?P<phase>[\w/-]+)(?::\s*(?P<reason>.+))?`,
			Cause: "kubeadm stopped in phase {phase}[[: {reason}]]; in kubelet-start this means the kubelet never became healthy " +
				"(see the [kubelet-check] lines and the kubelet log), in preflight the node or discovery checks failed.",
			Fix: "Fix the error printed with the phase (re-run with --v=5 for detail; for kubelet-start read journalctl -xeu kubelet), " +
				"then kubeadm reset and run the join again.",
			Refs: []string{"https://github.com/kubernetes/kubernetes/issues/95857",
				"https://kubernetes.io/docs/reference/setup-tools/kubeadm/kubeadm-join/"},
		},
		{
			// kubeadm preflight (cmd/kubeadm/app/preflight/checks.go PortOpenCheck): kubesphere/kubekey#227.
			ID: "JOIN-PREFLIGHT-PORT-IN-USE", Component: "join", Severity: SevError,
			Title:   "kubeadm preflight: a port the node needs is in use",
			Literal: "[ERROR Port-",
			Pattern: `\[ERROR Port-(?P<port>\d+)\]: Port \d+ is in use`,
			Cause: "Port {port} is taken, usually by a kubelet (10250) or control-plane component left running from an earlier install or " +
				"join, so kubeadm refuses to join this machine.",
			Fix:  "Find the process (ss -ltnp 'sport = :{port}'); if it is an old kubelet, kubeadm reset -f (or systemctl stop kubelet) and join again.",
			Refs: []string{"https://github.com/kubesphere/kubekey/issues/227", "https://github.com/kubernetes/kubernetes/blob/master/cmd/kubeadm/app/preflight/checks.go"},
		},
		{
			// kubeadm preflight FileAvailableCheck: kubesphere/kubekey#1637.
			ID: "JOIN-PREFLIGHT-FILE-EXISTS", Component: "join", Severity: SevError,
			Title:   "kubeadm preflight: a file join writes already exists",
			Literal: "[ERROR FileAvailable--",
			Pattern: `\[ERROR FileAvailable--\S+\]: (?P<path>\S+) already exists`,
			Cause:   "{path} is left from an earlier install or join (the node is not clean), so kubeadm refuses to overwrite it and join.",
			Fix:     "If this machine is meant to rejoin: kubeadm reset -f (it removes /etc/kubernetes/kubelet.conf, pki and the manifests), then join again.",
			Refs:    []string{"https://github.com/kubesphere/kubekey/issues/1637", "https://github.com/kubernetes/kubernetes/blob/master/cmd/kubeadm/app/preflight/checks.go"},
		},
	}
}
