package diagnose

// certSignatures: TLS certificates, bootstrap and CSRs.
func certSignatures() []Signature {
	return []Signature{
		{
			ID: "CERT-EXPIRED", Component: "cert", Severity: SevError,
			Title: "certificate expired or not yet valid",
			// kubeadm/minikube certs.go also warns "could not validate bounds for certificate %s: the
			// certificate has expired: NotBefore: ..., NotAfter: ..." (kubernetes/minikube#18032).
			Literal: "certificate has expired",
			Pattern: `x509: certificate has expired or is not yet valid(?:: current time (?P<now>\S+) is (?:after|before) (?P<bound>[^\s"\\]+))?|` +
				`The currently active client certificate has expired|` +
				`could not validate bounds for certificate (?P<cert>[^\s:]+): the certificate has expired(?:: NotBefore: [^,]+, NotAfter: (?P<notafter>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?: [+-]\d{4} UTC)?))?`,
			Cause: "A certificate[[ ({cert})]] in the chain is outside its validity period[[ (now {now}, bound {bound})]][[ (NotAfter {notafter})]]; " +
				"either it expired or the node's clock is wrong (Windows nodes without NTP drift).",
			Fix:  "Check the clock first (w32tm /query /status; w32tm /resync). Otherwise renew: kubeadm certs renew on the control plane, or delete the node's client cert so kubelet bootstraps a new one.",
			Refs: []string{"https://kubernetes.io/docs/tasks/administer-cluster/kubeadm/kubeadm-certs/"},
		},
		{
			ID: "CERT-UNKNOWN-AUTHORITY", Component: "cert", Severity: SevError,
			Title:   "certificate signed by unknown authority",
			Literal: "x509: certificate signed by unknown authority",
			Pattern: `x509: certificate signed by unknown authority`,
			Cause:   "The peer's certificate does not chain to the CA in the kubeconfig/CA bundle: wrong or stale kubeconfig copied to the node, a TLS-intercepting proxy, or a registry with a private CA.",
			Fix:     "Copy the cluster's current kubeconfig (certificate-authority-data) to the node; for registries, import the CA into the node's trusted root store (Import-Certificate -CertStoreLocation Cert:\\LocalMachine\\Root).",
			Refs:    []string{"https://kubernetes.io/docs/tasks/administer-cluster/certificates/"},
		},
		{
			ID: "CERT-SAN-MISMATCH", Component: "cert", Severity: SevError,
			Title: "server certificate not valid for the address used",
			// crypto/x509 HostnameError: "x509: certificate is valid for %s, not %s", and for an IP with
			// no IP SANs at all "x509: cannot validate certificate for %s because it doesn't contain any
			// IP SANs" (kubernetes/kubernetes#27442, #62939).
			Literal: "x509: c",
			Pattern: `x509: (?:certificate is valid for (?P<names>.+?), not (?P<host>[\w.:\[\]*-]+)|cannot validate certificate for (?P<host>[\w.:\[\]-]+) because it doesn't contain any IP SANs)`,
			Cause: "The server certificate[[ covers {names} but]] does not cover the address the client connected to ({host}); a " +
				"certificate without IP SANs cannot be used when the client connects by IP (an API server certificate issued " +
				"without the node/public IP, or a kubelet's self-signed serving certificate).",
			Fix:  "Connect through a name/IP in the certificate (fix the kubeconfig server:), or reissue the apiserver certificate with {host} in its SANs (kubeadm init phase certs apiserver --apiserver-cert-extra-sans).",
			Refs: []string{"https://kubernetes.io/docs/setup/best-practices/certificates/"},
		},
		{
			ID: "CERT-BOOTSTRAP-EXPIRED", Component: "cert", Severity: SevError,
			// kubelet bootstrap.go: "part of the existing bootstrap client certificate in %s is expired: %s"
			// (older: no "in <path>"); the kubelet then falls back to --bootstrap-kubeconfig, and kubeadm
			// deletes bootstrap-kubelet.conf after the join, so server.go fails next with "unable to load
			// bootstrap kubeconfig: stat ...bootstrap-kubelet.conf" (kubernetes/kubernetes#98150).
			Title:   "kubelet client certificate expired (or absent) and no bootstrap credential to renew it",
			Literal: " bootstrap ",
			Pattern: `part of the existing bootstrap client certificate (?:in (?P<path>\S+) )?is expired: (?P<when>(?:[^"\\]|\\.)+)|` +
				`unable to load bootstrap kubeconfig: stat (?P<bootstrap>\S*bootstrap-kubelet\.conf): no such file or directory`,
			Cause: "The kubelet's client certificate[[ in {path}]] is not valid[[ (it expired at {when})]], or was never issued because the " +
				"join did not complete, and the kubelet falls back to its bootstrap kubeconfig to request a new one[[, but {bootstrap} does not exist (kubeadm deletes it " +
				"after the join, and kubeadm certs renew does not renew the kubelet client certificate)]]; the kubelet cannot " +
				"authenticate, and exits if there is no bootstrap kubeconfig.",
			Fix: "Give the kubelet a credential again: on kubeadm nodes run kubeadm init phase kubeconfig kubelet (control plane) or " +
				"create a fresh bootstrap kubeconfig with a new token (kubeadm token create / kubewin token create), delete the " +
				"expired kubelet-client-current.pem, restart kubelet and approve its CSR (kubectl certificate approve); keep " +
				"rotateCertificates enabled so it does not expire again.",
			Refs: []string{"https://kubernetes.io/docs/reference/access-authn-authz/kubelet-tls-bootstrapping/"},
		},
		{
			ID: "CERT-CSR-FORBIDDEN", Component: "cert", Severity: SevError,
			Title:   "kubelet not allowed to create its CSR",
			Literal: "certificatesigningrequests",
			Pattern: `User \\?"(?P<user>[^"\\]+)\\?" cannot create resource \\?"certificatesigningrequests\\?"`,
			Cause:   "{user} may not create CertificateSigningRequests: the bootstrap token is wrong/expired (so the request is anonymous) or the system:node-bootstrapper binding is missing.",
			Fix:     "Create a fresh bootstrap token (kubeadm token create) and kubeconfig; ensure the ClusterRoleBinding of group system:bootstrappers to system:node-bootstrapper exists.",
			Refs:    []string{"https://kubernetes.io/docs/reference/access-authn-authz/kubelet-tls-bootstrapping/"},
		},
		{
			ID: "CERT-CSR-NOT-SIGNED", Component: "cert", Severity: SevError,
			Title:   "kubelet CSR was not approved/signed",
			Literal: "Certificate request was not signed",
			Pattern: `Certificate request was not signed`,
			Cause:   "kubelet's CSR is pending: no approver auto-approved it (or the signer is not running in kube-controller-manager).",
			Fix:     "kubectl get csr; kubectl certificate approve <name>; enable auto-approval (ClusterRoleBinding for certificatesigningrequests:nodeclient / selfnodeclient).",
			Refs:    []string{"https://kubernetes.io/docs/reference/access-authn-authz/kubelet-tls-bootstrapping/#approval"},
		},
		{
			ID: "CERT-REGISTER-UNAUTHORIZED", Component: "cert", Severity: SevError,
			Title:   "node registration rejected: Unauthorized",
			Literal: "with API server",
			Pattern: `Unable to register node (?:"(?P<node>[^"]+)" )?with API server(?:" err="|: )Unauthorized`,
			Cause:   "The apiserver rejects kubelet's credentials: expired/revoked client certificate, a kubeconfig from another cluster, or an expired token.",
			Fix:     "Give the node a valid kubeconfig (fresh bootstrap token or client certificate) and restart kubelet; check kubectl get csr.",
			Refs:    []string{"https://kubernetes.io/docs/reference/access-authn-authz/kubelet-tls-bootstrapping/"},
		},
		{
			// kubelet_node_status.go (k8s v1.37.1): "Unable to register node with API server" with
			// the authorizer's denial; older kubelets print the node name inline
			// (kubernetes-sigs/cluster-api#8631, openshift-metal3/dev-scripts#597).
			ID: "CERT-REGISTER-ANONYMOUS", Component: "cert", Severity: SevError,
			Title: "kubelet registers as system:anonymous (no credential reaches the API server)",
			// The kubelet's node informer is refused the same way (reflector.go "failed to list *v1.Node:
			// ... User "system:anonymous" cannot list resource "nodes"", cby-chen/Kubernetes#51).
			Literal: "system:anonymous",
			Pattern: `(?:Unable to register node (?:"(?P<node>[^"]+)" )?with API server(?:, reason is forbidden|, error getting existing node)?(?:" err="|: )|` +
				`(?:failed to list|Failed to watch) \*v1\.Node: (?:failed to list \*v1\.Node: )?)` +
				`nodes(?: \\?"(?P<node>[^"\\]+)\\?")? is forbidden: User \\?"system:anonymous\\?" cannot (?:create|list|watch|get) (?:resource \\?"nodes|nodes)`,
			Cause: "The API server saw no client credential from the kubelet, so it is system:anonymous and may not create or read its Node: the kubeconfig " +
				"has no client certificate/token (TLS bootstrap never produced one), the certificate is not signed by the API server's " +
				"--client-ca-file, or a proxy terminates TLS in between.",
			Fix: "Check the kubelet's --kubeconfig: it must name a client certificate signed by the cluster CA (or a bootstrap kubeconfig with a " +
				"valid token for TLS bootstrap); delete a stale kubelet-client-current.pem, restart kubelet and approve its CSR.",
			Refs: []string{"https://kubernetes.io/docs/reference/access-authn-authz/kubelet-tls-bootstrapping/"},
		},
		{
			// client-go util/certificate/csr/csr.go: "cannot create certificate signing request: %v";
			// Unauthorized means the bootstrap token authenticated nobody (kubernetes/kubeadm#809,
			// opsnull/follow-me-install-kubernetes-cluster#235).
			ID: "CERT-CSR-UNAUTHORIZED", Component: "cert", Severity: SevError,
			Title:   "kubelet CSR rejected: Unauthorized (bootstrap token expired or unknown)",
			Literal: "cannot create certificate signing request: Unauthorized",
			Pattern: `cannot create certificate signing request: Unauthorized`,
			Cause: "The API server did not accept the bootstrap kubeconfig's token: bootstrap tokens expire (24 h by default) and are deleted " +
				"by the token cleaner, or the token was never created in kube-system / the API server runs without --enable-bootstrap-token-auth.",
			Fix: "Create a fresh token on the admin side (kubewin token create, or kubeadm token create), write it into the bootstrap kubeconfig " +
				"(or re-run kubewin join), delete any half-written kubelet kubeconfig and restart kubelet.",
			Refs: []string{"https://kubernetes.io/docs/reference/access-authn-authz/bootstrap-tokens/"},
		},
		{
			// The kubelet's API calls answered 401: the node lease controller ("failed to ensure node
			// lease exists, will retry in 7s, error: Unauthorized"; v1.2x: "Failed to ensure lease exists,
			// will retry" err="Unauthorized"), informers ("Failed to list *v1.Service: Unauthorized") and the
			// status loop ("error getting node \"x\": Unauthorized"). opsnull/follow-me-install-kubernetes-cluster#473,
			// kubernetes/kubernetes#69576.
			ID: "CERT-KUBELET-UNAUTHORIZED", Component: "cert", Severity: SevError,
			Title:   "API server rejects the kubelet's credential (Unauthorized)",
			Literal: "Unauthorized",
			Pattern: `(?P<op>[Ff]ailed to ensure (?:node )?lease exists|Failed to (?:list|watch) \*v1(?:beta1)?\.\w+|Error updating node status|` +
				`[Ff]ailed to update (?:node )?lease|Unable to update node status).*?(?:: |err=\\?")Unauthorized\b`,
			Cause: "The API server does not authenticate the kubelet ({op}: 401 Unauthorized): the client certificate in the kubelet's " +
				"kubeconfig is not signed by the API server's --client-ca-file (the CA was regenerated, or the kubeconfig comes from " +
				"another cluster), it expired, or the token is unknown; on EKS the node's IAM role token is rejected (aws-auth " +
				"mapping, or the authenticator's token cache).",
			Fix: "Check the kubelet's kubeconfig client certificate against the cluster CA (openssl verify -CAfile ca.crt " +
				"kubelet-client-current.pem; openssl x509 -noout -dates); if it is stale, delete it and the kubeconfig and bootstrap " +
				"again with a fresh token, then approve the CSR; on EKS check the aws-auth ConfigMap mapping of the node role.",
			Refs: []string{"https://github.com/opsnull/follow-me-install-kubernetes-cluster/issues/473",
				"https://github.com/kubernetes/kubernetes/issues/69576",
				"https://kubernetes.io/docs/reference/access-authn-authz/authentication/#x509-client-certificates"},
		},
		{
			// Pre-1.8 style "nodes is forbidden: User \"system:node:<name>\" cannot list nodes at the cluster
			// scope" (opsnull/follow-me-install-kubernetes-cluster#206); since 1.8 RBAC no longer grants the
			// system:nodes group the system:node role, the Node authorizer must (kubernetes/kubernetes#52711).
			ID: "CERT-NODE-FORBIDDEN", Component: "cert", Severity: SevError,
			Title:   "authorizer denies the kubelet's node identity",
			Literal: "system:node:",
			Pattern: `(?P<resource>\w+)(?: \\?"[^"\\]*\\?")? is forbidden: User \\?"system:node:(?P<node>[^"\\]+)\\?" cannot (?P<verb>\w+) (?:resource \\?")?(?:nodes|pods|services|endpoints)\b(?:\\?")?(?: in API group \\?"\\?")? at the cluster scope(?:$|[^:])`,
			Cause: "The kubelet authenticates as system:node:{node} but the API server's authorizers do not let it {verb} {resource}: " +
				"since Kubernetes 1.8 RBAC no longer binds the system:nodes group to the system:node role, so the API server needs " +
				"--authorization-mode=Node,RBAC, and the Node authorizer only admits certificates with O=system:nodes whose name " +
				"matches the node's (an IP from --hostname-override must be the name the kubelet registers with).",
			Fix: "Run kube-apiserver with --authorization-mode=Node,RBAC and --enable-admission-plugins including NodeRestriction; issue " +
				"the kubelet certificate with CN=system:node:<node name>, O=system:nodes for the same name the kubelet uses " +
				"(--hostname-override), or let TLS bootstrap issue it.",
			Refs: []string{"https://github.com/kubernetes/kubernetes/issues/52711",
				"https://github.com/opsnull/follow-me-install-kubernetes-cluster/issues/206",
				"https://kubernetes.io/docs/reference/access-authn-authz/node/"},
		},
	}
}
