package diagnose

// certSignatures: TLS certificates, bootstrap and CSRs.
func certSignatures() []Signature {
	return []Signature{
		{
			ID: "CERT-EXPIRED", Component: "cert", Severity: SevError,
			Title:   "certificate expired or not yet valid",
			Literal: "x509: certificate has expired or is not yet valid",
			Pattern: `x509: certificate has expired or is not yet valid(?:: current time (?P<now>\S+) is (?:after|before) (?P<bound>[^\s"\\]+))?`,
			Cause:   "A certificate in the chain is outside its validity period[[ (now {now}, bound {bound})]]; either it expired or the node's clock is wrong (Windows nodes without NTP drift).",
			Fix:     "Check the clock first (w32tm /query /status; w32tm /resync). Otherwise renew: kubeadm certs renew on the control plane, or delete the node's client cert so kubelet bootstraps a new one.",
			Refs:    []string{"https://kubernetes.io/docs/tasks/administer-cluster/kubeadm/kubeadm-certs/"},
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
			Title:   "server certificate not valid for the address used",
			Literal: "x509: certificate is valid for",
			Pattern: `x509: certificate is valid for (?P<names>.+?), not (?P<host>[\w.:\[\]-]+)`,
			Cause:   "The server certificate covers {names} but the client connected to {host}.",
			Fix:     "Connect through a name/IP in the certificate (fix the kubeconfig server:), or reissue the apiserver certificate with {host} in its SANs (kubeadm init phase certs apiserver --apiserver-cert-extra-sans).",
			Refs:    []string{"https://kubernetes.io/docs/setup/best-practices/certificates/"},
		},
		{
			ID: "CERT-BOOTSTRAP-EXPIRED", Component: "cert", Severity: SevError,
			Title:   "kubelet client certificate expired",
			Literal: "part of the existing bootstrap client certificate",
			Pattern: `part of the existing bootstrap client certificate in (?P<path>\S+) is expired: (?P<when>(?:[^"\\]|\\.)+)`,
			Cause:   "The client certificate referenced by {path} expired at {when}; kubelet cannot authenticate.",
			Fix:     "Delete {path} and the kubelet client cert, provide a fresh bootstrap kubeconfig/token, restart kubelet, and approve its CSR (kubectl certificate approve).",
			Refs:    []string{"https://kubernetes.io/docs/reference/access-authn-authz/kubelet-tls-bootstrapping/"},
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
			Title:   "kubelet registers as system:anonymous (no credential reaches the API server)",
			Literal: "with API server",
			Pattern: `Unable to register node (?:"(?P<node>[^"]+)" )?with API server(?:, reason is forbidden|, error getting existing node)?(?:" err="|: )nodes(?: \\?"[^"\\]+\\?")? is forbidden: User \\?"system:anonymous\\?" cannot create resource`,
			Cause: "The API server saw no client credential from the kubelet, so it is system:anonymous and may not create its Node: the kubeconfig " +
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
	}
}
