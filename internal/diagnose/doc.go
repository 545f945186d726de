// Package diagnose finds known failures in Kubernetes node logs (kubelet, kube-proxy, containerd,
// flanneld, CNI, nssm services, Windows event-log exports, kubectl events) and explains them.
//
// The pipeline is streaming: inputs (files, directories, .zip/.tar.gz/.gz bundles, stdin) are
// sniffed for their encoding (UTF-8, UTF-16LE/BE, GBK/GB18030) and transcoded to UTF-8, cut into
// newline-aligned chunks of bounded size, and scanned by a small pool of workers. Each chunk is
// first searched for the catalogue's required literals with one Aho-Corasick pass; only lines that
// contain a literal are parsed and confirmed with the signature's regexp. Lines with klog severity
// E/F (or logrus level=error/fatal) that no signature claims are normalised and counted, so that
// nothing is silently dropped. Memory is bounded by the chunk size, the worker count and the caps
// on distinct keys, not by the input size.
package diagnose
