// Package diagnose finds known failures in Kubernetes node logs (kubelet, kube-proxy, containerd,
// flanneld, CNI, nssm services, Windows event-log exports, kubectl events) and explains them.
//
// The pipeline streams: inputs (files, directories, .zip/.tar.gz/.gz bundles, stdin) are sniffed
// by content for archives and for their encoding (UTF-8, UTF-16LE/BE, GBK/GB18030; the last three
// are transcoded to UTF-8 with golang.org/x/text), cut into newline-aligned chunks of bounded size
// (a longer line is cut, scanned and reported), and scanned by a small pool of workers. Each line
// is walked once by an Aho-Corasick automaton over the catalogue's required literals (the klog
// header is skipped); only lines containing a literal are parsed and confirmed with the
// signatures' regexps, in catalogue order, first match wins, fallbacks last. Lines with klog
// severity E/F (or logrus level=error/fatal, or event-log level Error) that no signature claims
// are normalised and counted, so that nothing is silently dropped. Results are merged in input
// order, so the report does not depend on the number of workers or the chunk size. Memory is
// bounded by the chunk size, the worker count and the caps on distinct keys, not by the input.
//
// The catalogue (sig_<family>.go) is data: every entry has an example line under
// testdata/logs/signatures and a near miss under testdata/logs/nearmiss, both tested.
package diagnose
