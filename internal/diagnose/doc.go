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
// are normalised and counted, so that nothing is silently dropped. Calico's "[ERROR]" layout,
// logrus text ("ERRO[0000]") and JSON lines, and lines wrapped by journald, a host-name column or a
// "[date] " prefix are parsed by what they wrap, so their errors are counted too.
//
// Windows error codes are decoded generically (winerror.go: HCN/HCS HRESULTs and Win32 codes from
// winerror.h as data, decimal codes of HNS JSON and PowerShell records, the component and
// operation of "hcnCreateX failed in Win32"), so an HNS failure no entry knows still says what
// was being done and what the code means; known zh-CN Win32 messages map to their codes.
//
// The catalogue is measured on a field corpus of real lines from public issue threads
// (testdata/diagnose-field, TestFieldCorpus).
//
// Results are merged in input order, so the report does not depend on the number of workers or
// the chunk size. Memory is bounded by the chunk size, the worker count and the caps on distinct
// keys, not by the input.
//
// The catalogue (sig_<family>.go) is data: every entry has an example line under
// testdata/logs/signatures and a near miss under testdata/logs/nearmiss, both tested.
package diagnose
