package diagnose

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync/atomic"
	"time"

	"golang.org/x/text/transform"
)

// ProgressThreshold is the input size above which progress is reported (when asked for).
const ProgressThreshold = 100 << 20

const (
	sniffSize    = 64 << 10
	maxNesting   = 4
	stdinName    = "<stdin>"
	memberMarker = "!"
)

// scanRun is the state of one Scan call.
type scanRun struct {
	ctx     context.Context
	opt     Options
	p       *pipeline
	rep     *Report
	streams []*streamState
	sums    []*InputSummary
	rawRead atomic.Int64
}

// Scan analyses the inputs (paths of files, directories and bundles; "-" is stdin) and returns
// the report. Bad input never stops it: unreadable inputs land in Report.Errors (or Skipped, for
// binary members met while walking a directory or bundle) and everything else is analysed.
func Scan(ctx context.Context, cat *Catalogue, inputs []string, stdin io.Reader, opt Options) *Report {
	opt = opt.withDefaults()
	agg := newAggregator(cat, opt.MaxUnmatched, opt.Sources)
	run := &scanRun{ctx: ctx, opt: opt, rep: &Report{}}
	run.p = newPipeline(cat, opt, agg)
	stop := run.startProgress(inputs)
	for _, in := range inputs {
		if ctx.Err() != nil {
			break
		}
		if in == "-" {
			run.scanReader(stdinName, &countingReader{r: stdin, n: &run.rawRead}, nil, 0, true)
			continue
		}
		run.scanPath(in)
	}
	run.p.close()
	stop()
	agg.fill(run.rep)
	for i, s := range run.sums {
		s.TruncatedLines = agg.truncated[run.streams[i]]
		s.Nodes = agg.inputNodes[s.Name]
		run.rep.Inputs = append(run.rep.Inputs, *s)
		run.rep.Bytes += s.Bytes
		run.rep.Lines += s.Lines
	}
	return run.rep
}

func (run *scanRun) fail(name string, line, off int64, err error) {
	run.rep.Errors = append(run.rep.Errors, InputError{Input: name, Line: line, Offset: off, Err: err.Error()})
}

func (run *scanRun) skip(name string, why string) {
	run.rep.Skipped = append(run.rep.Skipped, InputError{Input: name, Err: why})
}

// scanPath scans a file, or every regular file under a directory in lexical order.
func (run *scanRun) scanPath(path string) {
	fi, err := os.Stat(path)
	if err != nil {
		run.fail(path, 0, 0, err)
		return
	}
	if !fi.IsDir() {
		run.scanFile(path, true)
		return
	}
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			run.fail(p, 0, 0, err)
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if run.ctx.Err() != nil {
			return run.ctx.Err()
		}
		if d.IsDir() {
			return nil
		}
		run.scanFile(p, false)
		return nil
	})
	if err != nil && !errors.Is(err, context.Canceled) {
		run.fail(path, 0, 0, err)
	}
}

func (run *scanRun) scanFile(path string, explicit bool) {
	f, err := os.Open(path)
	if err != nil {
		run.fail(path, 0, 0, err)
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		run.fail(path, 0, 0, err)
		return
	}
	if !fi.Mode().IsRegular() {
		run.skip(path, fmt.Sprintf("not a regular file (%s)", fi.Mode().Type()))
		return
	}
	run.scanReader(path, &countingReader{r: f, n: &run.rawRead}, &sizedReaderAt{f, fi.Size()}, 0, explicit)
}

type sizedReaderAt struct {
	io.ReaderAt
	size int64
}

// scanReader dispatches on content, not on file names: gzip, zip and tar are opened (also nested,
// up to maxNesting), text is decoded and scanned, binary is reported.
func (run *scanRun) scanReader(name string, r io.Reader, ra *sizedReaderAt, depth int, explicit bool) {
	br := bufio.NewReaderSize(r, sniffSize)
	head, perr := br.Peek(sniffSize)
	if perr != nil && perr != io.EOF && !errors.Is(perr, bufio.ErrBufferFull) {
		if len(head) == 0 {
			run.fail(name, 0, 0, perr)
			return
		}
	}
	switch {
	case len(head) == 0:
		run.summary(name, EncUTF8) // empty input: listed, nothing to scan
		return
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		if depth >= maxNesting {
			run.skip(name, "archive nested too deeply")
			return
		}
		zr, err := gzip.NewReader(br)
		if err != nil {
			run.fail(name, 0, 0, fmt.Errorf("gzip header: %w", err))
			return
		}
		zr.Multistream(true)
		run.scanReader(name, zr, nil, depth+1, explicit)
		return
	case bytes.HasPrefix(head, []byte("PK\x03\x04")) || bytes.HasPrefix(head, []byte("PK\x05\x06")):
		if depth >= maxNesting {
			run.skip(name, "archive nested too deeply")
			return
		}
		run.scanZip(name, br, ra, depth)
		return
	case isTar(head):
		if depth >= maxNesting {
			run.skip(name, "archive nested too deeply")
			return
		}
		run.scanTar(name, br, depth)
		return
	}
	enc := SniffEncoding(head)
	var filter *binaryRegionFilter
	if enc == EncBinary && textWithBinaryRegions(head) {
		enc = EncUTF8
		filter = newBinaryRegionFilter(br)
	}
	if enc == EncBinary {
		why := fmt.Sprintf("binary data (NUL or control bytes in the first %d bytes); export Windows event logs as text (wevtutil qe System /f:text)", min(len(head), 4096))
		if explicit { // named on the command line (possibly through gzip): bad input
			run.fail(name, 0, 0, errors.New(why))
		} else {
			run.skip(name, why)
		}
		return
	}
	var text io.Reader = br
	if filter != nil {
		text = filter
	} else if enc == EncUTF8 && bytes.HasPrefix(head, []byte{0xEF, 0xBB, 0xBF}) {
		_, _ = br.Discard(3)
	}
	if t := decoderFor(enc); t != nil {
		text = transform.NewReader(text, t)
	}
	tb := bufio.NewReaderSize(text, 4096)
	dhead, _ := tb.Peek(4096)
	st := &streamState{index: len(run.streams), name: name, enc: enc, evDesc: -1,
		eventLog: isEventLogExport(dhead)}
	sum := run.summary(name, enc)
	run.streams[len(run.streams)-1] = st
	lines, n, err := run.p.readStream(run.ctx, st, tb)
	sum.Lines, sum.Bytes = lines, n
	if filter != nil {
		sum.BinarySkipped = filter.Skipped
	}
	if err != nil {
		run.fail(name, lines, n, describeReadErr(err))
	}
}

func (run *scanRun) summary(name string, enc Encoding) *InputSummary {
	s := &InputSummary{Name: name, Encoding: enc}
	run.sums = append(run.sums, s)
	run.streams = append(run.streams, nil)
	return s
}

func describeReadErr(err error) error {
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("unexpected end of data (truncated archive or compressed stream): %w", err)
	case errors.Is(err, gzip.ErrChecksum), errors.Is(err, zip.ErrChecksum):
		return fmt.Errorf("checksum mismatch (corrupt archive): %w", err)
	}
	return err
}

func isTar(head []byte) bool {
	return len(head) >= 262 && bytes.Equal(head[257:262], []byte("ustar"))
}

func (run *scanRun) scanTar(name string, r io.Reader, depth int) {
	tr := tar.NewReader(r)
	for {
		if run.ctx.Err() != nil {
			return
		}
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			run.fail(name, 0, 0, fmt.Errorf("tar: %w", describeReadErr(err)))
			return
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		run.scanReader(name+memberMarker+h.Name, tr, nil, depth+1, false)
	}
}

// scanZip reads a zip archive. Zip needs random access; a zip that is not a plain file (stdin,
// a member of another archive) is spooled to a temporary file first, which is removed after.
func (run *scanRun) scanZip(name string, r io.Reader, ra *sizedReaderAt, depth int) {
	if ra == nil {
		tmp, err := os.CreateTemp("", "kubewin-diagnose-*.zip")
		if err != nil {
			run.fail(name, 0, 0, fmt.Errorf("spool zip: %w", err))
			return
		}
		defer os.Remove(tmp.Name())
		defer tmp.Close()
		n, err := io.Copy(tmp, r)
		if err != nil {
			run.fail(name, 0, n, fmt.Errorf("spool zip: %w", describeReadErr(err)))
			return
		}
		ra = &sizedReaderAt{tmp, n}
	}
	zr, err := zip.NewReader(ra, ra.size)
	if err != nil {
		run.fail(name, 0, 0, fmt.Errorf("zip: %w (truncated or not a zip archive: central directory unreadable)", err))
		return
	}
	files := append([]*zip.File(nil), zr.File...)
	sort.SliceStable(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	for _, f := range files {
		if run.ctx.Err() != nil {
			return
		}
		if f.FileInfo().IsDir() {
			continue
		}
		member := name + memberMarker + f.Name
		rc, err := f.Open()
		if err != nil {
			run.fail(member, 0, 0, fmt.Errorf("zip member: %w", err))
			continue
		}
		run.scanReader(member, rc, nil, depth+1, false)
		rc.Close()
	}
}

type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// startProgress reports raw bytes read on opt.Progress every opt.ProgressEvery when the inputs
// that can be sized add up to more than opt.ProgressMin. It returns the function stopping it.
func (run *scanRun) startProgress(inputs []string) func() {
	if run.opt.Progress == nil {
		return func() {}
	}
	var total int64
	for _, in := range inputs {
		if in == "-" {
			continue
		}
		_ = filepath.WalkDir(in, func(_ string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				if fi, err := d.Info(); err == nil && fi.Mode().IsRegular() {
					total += fi.Size()
				}
			}
			return nil
		})
	}
	if total <= run.opt.ProgressMin {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(finished)
		t := time.NewTicker(run.opt.ProgressEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				fmt.Fprintf(run.opt.Progress, "\r\033[K")
				return
			case <-t.C:
				n := run.rawRead.Load()
				rate := float64(n) / time.Since(start).Seconds() / (1 << 20)
				fmt.Fprintf(run.opt.Progress, "\r\033[Kdiagnose: %d/%d MiB (%.0f%%, %.0f MiB/s)",
					n>>20, total>>20, 100*float64(n)/float64(total), rate)
			}
		}
	}()
	return func() { close(done); <-finished }
}
