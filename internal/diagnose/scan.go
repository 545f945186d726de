package diagnose

import (
	"bytes"
	"context"
	"io"
	"runtime"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/kubewin/kubewin/internal/diagnose/srcmsg"
)

// Options tune a scan. Zero values pick the defaults.
type Options struct {
	// Workers scanning chunks in parallel (default: GOMAXPROCS, at most 4).
	Workers int
	// ChunkSize is the read unit and the longest line kept whole; longer lines are cut to this
	// size, scanned, and reported as truncated (default 1 MiB).
	ChunkSize int
	// MaxUnmatched caps the distinct unmatched-error keys kept (default 2000); further keys are
	// only counted.
	MaxUnmatched int
	// Sources, when set, names the source location of every line no signature explains and
	// lets source entries explain it (srcmsg.Load; nil: no source recognition).
	Sources *srcmsg.Index
	// LoadSources, when set and Sources is nil, is called once after the last chunk is scanned
	// and its index used as Sources. The index is only needed for the groups at the end; loaded
	// then, its ≈ 21 MiB of live heap and the scan's chunk buffers are never live together, and a
	// soft memory limit sized for the scan does not keep the collector running through it.
	LoadSources func() *srcmsg.Index
	// Progress, when set, receives a progress line every ProgressEvery (default 500 ms) while
	// the sizable inputs add up to more than ProgressMin bytes (default ProgressThreshold).
	Progress      io.Writer
	ProgressEvery time.Duration
	ProgressMin   int64
}

func (o Options) withDefaults() Options {
	if o.Workers <= 0 {
		o.Workers = min(runtime.GOMAXPROCS(0), 4)
	}
	if o.ChunkSize <= 0 {
		o.ChunkSize = 1 << 20
	}
	if o.ChunkSize < 4096 {
		o.ChunkSize = 4096
	}
	if o.ProgressEvery <= 0 {
		o.ProgressEvery = 500 * time.Millisecond
	}
	if o.ProgressMin <= 0 {
		o.ProgressMin = ProgressThreshold
	}
	if o.MaxUnmatched <= 0 {
		o.MaxUnmatched = 2000
	}
	return o
}

// maxSample caps the bytes of a line kept as a finding's sample.
const maxSample = 4096

// streamState is one leaf input (a file, a bundle member, stdin) while it is scanned.
type streamState struct {
	index    int
	name     string
	enc      Encoding
	eventLog bool // wevtutil text export: records span lines, so chunks run in order
	ev       eventLogState
	evDesc   int // description lines seen in the current record (-1: not in a description)
}

// job is one newline-aligned chunk of a stream.
type job struct {
	seq       int
	st        *streamState
	data      []byte
	buf       []byte
	startLine int64 // 1-based number of the chunk's first line
	truncated bool  // data is the head of a line longer than ChunkSize
	done      chan struct{}
}

// sigPartial aggregates one signature within a chunk.
type sigPartial struct {
	count       int64 // occurrences, kubectl event repeats (x12) included
	lines       int64 // physical lines
	first, last Timestamp
	line        int64 // first occurrence in this chunk
	sampleLine  int64 // line the sample was taken from
	sample      string
	caps        map[string]string
	nodes       []string
	// plain: the sample is prose (no log format recognised); a later hit in a log line replaces
	// it, since a real log line is the more useful sample.
	plain bool
	// aborts: a line of the finding is fatal to its component's operation
	// (Line.abortsOperation), so the finding is an error whatever the entry says.
	aborts bool
	// linux, windows: a line of the finding shows which OS wrote it (lineOS).
	linux, windows bool
}

type unmatchedPartial struct {
	severity  byte   // the highest severity among the group's lines: 'F', 'E' or 'W'
	component string // the first line's component
	msg       string // the first line's message (for the chain of causes)
	caller    string // the first line's klog call site (file:line), if any
	aborts    bool   // a line of the group is fatal to its component's operation (Line.abortsOperation)
	count     int64
	line      int64
	sample    string
	first     Timestamp
	last      Timestamp
}

// chunkResult is what a worker found in one chunk; it holds no reference to the chunk memory.
type chunkResult struct {
	seq       int
	st        *streamState
	sigs      map[int]*sigPartial
	sigOrder  []int
	unmatched map[string]*unmatchedPartial
	unmOrder  []string
	lines     int64
	truncated int64    // line number of a truncated line, 0 if none
	nodes     []string // nodes named by identity lines (distinct, in order)
}

// worker scans chunks. The Aho-Corasick trie is shared (read-only); the rest is per worker.
type worker struct {
	cat      *Catalogue
	lineLits []int
	sigTmp   []int
	keyBuf   []byte
	lowerBuf []byte // the candidate line, ASCII lower-cased, for the lowered patterns
	// lastReported is the chunk line that last gave a finding or an unmatched group: the
	// continuation lines of a PowerShell error record right after it belong to it.
	lastReported int64
	// lastPSMessage is the chunk line of the last PowerShell error record's message line: its
	// CategoryInfo/FullyQualifiedErrorId/position rows right after it give no finding of their own.
	lastPSMessage int64
}

// osSampleLines is how many lines of a finding per chunk lineOS reads.
const osSampleLines = 4

// recordSpan is how many lines after its message line a PowerShell error record's continuation
// lines may come (position, code line, "+ ~~~", CategoryInfo, FullyQualifiedErrorId).
const recordSpan = 6

func newWorker(c *Catalogue) *worker {
	return &worker{cat: c}
}

// process scans one chunk line by line: one Aho-Corasick walk per line finds the catalogue
// literals it contains (usually none); only such lines are parsed and confirmed by regexp. Lines
// without a literal are only checked for a klog E/F header, so unknown errors are counted.
func (w *worker) process(j *job) *chunkResult {
	res := &chunkResult{seq: j.seq, st: j.st}
	w.lastReported = -recordSpan - 1
	w.lastPSMessage = -recordSpan - 1
	data := j.data
	st := j.st
	lineNo := j.startLine
	for pos := 0; pos < len(data); lineNo++ {
		end := len(data)
		if e := bytes.IndexByte(data[pos:], '\n'); e >= 0 {
			end = pos + e
		}
		ln := data[pos:end]
		if n := len(ln); n > 0 && ln[n-1] == '\r' {
			ln = ln[:n-1]
		}
		pos = end + 1
		inDesc := false
		if st.eventLog {
			switch st.ev.apply(ln) {
			case evHeader:
				st.evDesc = -1
				continue
			case evDescLabel:
				st.evDesc = 0
				continue
			case evDescInline:
				inDesc, st.evDesc = true, 1
			default:
				if st.evDesc >= 0 && len(bytes.TrimSpace(ln)) > 0 {
					inDesc = st.evDesc == 0
					st.evDesc++
				}
			}
		}
		w.lineLits = w.cat.scanner.appendMatches(w.lineLits[:0], ln[klogHeaderLen(ln):])
		if len(w.lineLits) > 0 {
			w.sigTmp = w.sigTmp[:0]
			for _, li := range w.lineLits {
				w.sigTmp = append(w.sigTmp, w.cat.litSigs[li]...)
			}
			w.evaluate(res, st, ln, lineNo, inDesc)
			continue
		}
		if sev := klogSeverityAt(leadingBlanksTrimmed(ln)); sev == 'E' || sev == 'F' || sev == 'W' {
			if l := ParseLine(ln); l.isSurfaced() {
				w.addUnmatched(res, &l, ln, lineNo)
			}
		} else if len(ln) > 12 && (ln[0] == '"' || isDigit(ln[0])) {
			// Get-WinEvent tables and CSV exports carry time and level on each row.
			if l := ParseLine(ln); l.Format == FormatEventLog && l.isErrorSeverity() {
				w.addUnmatched(res, &l, ln, lineNo)
			}
		} else if inDesc && (st.ev.level == 'E' || st.ev.level == 'F') {
			l := Line{Format: FormatEventLog, Severity: st.ev.level, Time: st.ev.time, Msg: ln, Repeat: 1}
			w.addUnmatched(res, &l, ln, lineNo)
		}
	}
	res.lines = lineNo - j.startLine
	if j.truncated {
		res.truncated = j.startLine
	}
	return res
}

func (w *worker) evaluate(res *chunkResult, st *streamState, ln []byte, lineNo int64, inDesc bool) {
	l := ParseLine(ln)
	if l.Format == FormatPowerShell {
		if l.Continuation && lineNo-w.lastPSMessage <= recordSpan {
			// A row of a PowerShell error record whose message line was just reported (as a
			// finding or an unmatched group) belongs to it: no second finding for the same error.
			return
		}
		if !l.Continuation {
			w.lastPSMessage = lineNo
		}
	}
	ownLevel := l.Format == FormatEventLog // a table or CSV row carries its own level
	if st.eventLog && l.Format == FormatPlain {
		l.Format, l.Time, l.Severity = FormatEventLog, st.ev.time, st.ev.level
	}
	slices.Sort(w.sigTmp)
	prev := -1
	lower := []byte(nil)
	for _, si := range w.sigTmp {
		if si == prev {
			continue
		}
		prev = si
		re := w.cat.res[si]
		in := ln
		if need := w.cat.need[si]; need != nil {
			if lower == nil {
				w.lowerBuf = lowerASCII(w.lowerBuf, ln)
				lower = w.lowerBuf
			}
			if !need.possible(lower) {
				continue
			}
			in = lower
		}
		var loc []int
		if p := res.sigs[si]; p == nil || w.cat.nodeGroup[si] > 0 || (p.plain && l.Format != FormatPlain) {
			// Captures are needed for the first hit of a chunk and for node names only.
			if loc = re.FindSubmatchIndex(in); loc == nil {
				continue
			}
		} else if !re.Match(in) {
			continue
		}
		if w.cat.sigs[si].Identity {
			if i := w.cat.nodeGroup[si]; loc != nil && i > 0 && loc[2*i] >= 0 {
				if n := DecodeText(ln[loc[2*i]:loc[2*i+1]]); !slices.Contains(res.nodes, n) {
					res.nodes = append(res.nodes, n)
				}
			}
			return
		}
		w.addHit(res, si, &l, ln, loc, lineNo)
		return
	}
	// A wevtutil text export's record header lines carry the level for the description lines
	// below them; table and CSV rows carry their own.
	if l.isSurfaced() && (l.Format != FormatEventLog || inDesc || ownLevel) {
		w.addUnmatched(res, &l, ln, lineNo)
	} else if l.Severity == 0 && l.Format == FormatSyslog {
		// A program's message with no level of its own (keepalived writes none to syslog): the
		// format that printed it decides, once per group (aggregator.attachSources).
		l.Severity = sevPending
		w.addUnmatched(res, &l, ln, lineNo)
	}
}

func (w *worker) addHit(res *chunkResult, si int, l *Line, ln []byte, loc []int, lineNo int64) {
	w.lastReported = lineNo
	if res.sigs == nil {
		res.sigs = map[int]*sigPartial{}
	}
	p := res.sigs[si]
	if p == nil {
		re := w.cat.res[si]
		p = &sigPartial{first: l.Time, last: l.Time, line: lineNo, sampleLine: lineNo, sample: sampleOf(ln),
			caps: captures(re, ln, loc), plain: l.Format == FormatPlain}
		res.sigs[si] = p
		res.sigOrder = append(res.sigOrder, si)
	} else if p.plain && l.Format != FormatPlain {
		p.sample, p.caps, p.plain, p.sampleLine = sampleOf(ln), captures(w.cat.res[si], ln, loc), false, lineNo
	}
	p.count += int64(max(l.Repeat, 1))
	p.lines++
	p.aborts = p.aborts || l.abortsOperation()
	// The OS a finding's lines show is read from its first few lines in each chunk: enough to
	// choose the fix, without a scan of every repeat (lineOS is ~9 % of scan CPU when run on all).
	if p.lines <= osSampleLines {
		switch lineOS(ln) {
		case osLinux:
			p.linux = true
		case osWindows:
			p.windows = true
		}
	}
	widenSpan(&p.first, &p.last, l.Time, l.Time)
	node := l.Node
	if i := w.cat.nodeGroup[si]; i > 0 && loc[2*i] >= 0 {
		node = DecodeText(ln[loc[2*i]:loc[2*i+1]])
	}
	if node != "" && len(p.nodes) < maxNodes && !slices.Contains(p.nodes, node) {
		p.nodes = append(p.nodes, node)
	}
}

func (w *worker) addUnmatched(res *chunkResult, l *Line, ln []byte, lineNo int64) {
	if l.Continuation && lineNo-w.lastReported <= recordSpan {
		return
	}
	w.lastReported = lineNo
	kb := w.keyBuf[:0]
	if l.Format == FormatKlog {
		kb = append(append(kb, l.Source...), "] "...)
	}
	kb = appendNormalized(kb, l.Msg)
	if !utf8.Valid(kb) {
		kb = bytes.ToValidUTF8(kb, []byte("\uFFFD"))
	}
	w.keyBuf = kb
	if res.unmatched == nil {
		res.unmatched = map[string]*unmatchedPartial{}
	}
	u := res.unmatched[string(kb)] // no allocation for the lookup
	if u == nil {
		key := string(kb)
		u = &unmatchedPartial{line: lineNo, sample: sampleOf(ln), first: l.Time, last: l.Time,
			severity: l.Severity, component: l.Component, msg: sampleOf(l.Msg), caller: l.Source}
		res.unmatched[key] = u
		res.unmOrder = append(res.unmOrder, key)
	}
	if severityRank(l.Severity) < severityRank(u.severity) {
		u.severity = l.Severity
	}
	u.aborts = u.aborts || l.abortsOperation()
	u.count += int64(max(l.Repeat, 1))
	widenSpan(&u.first, &u.last, l.Time, l.Time)
}

// sampleOf renders a line for display: Go-quoted escapes decoded, at most maxSample bytes.
func sampleOf(ln []byte) string {
	cut := false
	if len(ln) > maxSample {
		ln, cut = ln[:maxSample], true
		for len(ln) > 0 && !utf8.RuneStart(ln[len(ln)-1]) {
			ln = ln[:len(ln)-1]
		}
	}
	s := DecodeQuotedStrings(ln)
	if cut {
		s += " …[cut]"
	}
	return s
}

// pipeline runs the worker pool and puts results back in input order.
type pipeline struct {
	opt     Options
	jobs    chan *job
	results chan *chunkResult
	free    chan []byte
	seq     int
	wg      sync.WaitGroup
	mergeWG sync.WaitGroup
	agg     *aggregator
}

func newPipeline(cat *Catalogue, opt Options, agg *aggregator) *pipeline {
	nbuf := opt.Workers*2 + 1
	p := &pipeline{opt: opt, jobs: make(chan *job, nbuf), results: make(chan *chunkResult, nbuf),
		free: make(chan []byte, nbuf), agg: agg}
	for range nbuf {
		p.free <- make([]byte, opt.ChunkSize)
	}
	for range opt.Workers {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			w := newWorker(cat)
			for j := range p.jobs {
				r := w.process(j)
				p.free <- j.buf
				if j.done != nil {
					close(j.done)
				}
				p.results <- r
			}
		}()
	}
	p.mergeWG.Add(1)
	go func() {
		defer p.mergeWG.Done()
		pending := map[int]*chunkResult{}
		next := 0
		for r := range p.results {
			pending[r.seq] = r
			for {
				r, ok := pending[next]
				if !ok {
					break
				}
				delete(pending, next)
				agg.merge(r)
				next++
			}
		}
	}()
	return p
}

func (p *pipeline) close() {
	close(p.jobs)
	p.wg.Wait()
	close(p.results)
	p.mergeWG.Wait()
	// The chunk buffers are garbage from here on: drop them before a source index is loaded.
	for len(p.free) > 0 {
		<-p.free
	}
	if p.agg.sources == nil && p.opt.LoadSources != nil {
		p.agg.sources = p.opt.LoadSources()
	}
}

// readStream cuts r into newline-aligned chunks and feeds them to the workers. It returns the
// number of lines read and the first read error (the chunks before it are still scanned).
func (p *pipeline) readStream(ctx context.Context, st *streamState, r io.Reader) (lines int64, bytesRead int64, err error) {
	var carry []byte // bytes after the last newline of the previous chunk (copied)
	line := int64(1)
	skipping := false // discarding the tail of an over-long line
	scratch := []byte(nil)
	eof := false
	for !eof {
		if ctx.Err() != nil {
			return line - 1, bytesRead, ctx.Err()
		}
		if skipping {
			if scratch == nil {
				scratch = make([]byte, 64<<10)
			}
			n, rerr := r.Read(scratch)
			bytesRead += int64(n)
			if i := bytes.IndexByte(scratch[:n], '\n'); i >= 0 {
				skipping = false
				line++
				carry = append(carry[:0], scratch[i+1:n]...)
			}
			if rerr == io.EOF {
				if skipping {
					line++ // the truncated line ended at EOF
				}
				break
			}
			if rerr != nil {
				return line - 1, bytesRead, rerr
			}
			continue
		}
		buf := <-p.free
		n := copy(buf, carry)
		carry = carry[:0]
		var rerr error
		for n < len(buf) && rerr == nil {
			var m int
			m, rerr = r.Read(buf[n:])
			n += m
			bytesRead += int64(m)
		}
		if rerr == io.EOF {
			eof, rerr = true, nil
		}
		data := buf[:n]
		cut := n
		truncated := false
		if !eof {
			if i := bytes.LastIndexByte(data, '\n'); i >= 0 {
				cut = i + 1
			} else if n == len(buf) {
				truncated, skipping = true, true
			}
		}
		if rerr != nil && !truncated {
			// Keep what ended in a newline; the partial line after it is lost with the error.
			if i := bytes.LastIndexByte(data, '\n'); i >= 0 {
				cut = i + 1
			} else {
				cut = 0
			}
		}
		if cut > 0 {
			carry = append(carry, data[cut:]...)
			j := &job{seq: p.seq, st: st, data: data[:cut], buf: buf, startLine: line, truncated: truncated}
			p.seq++
			if st.eventLog {
				j.done = make(chan struct{})
			}
			nl := int64(bytes.Count(j.data, []byte{'\n'}))
			if truncated {
				nl = 0 // counted when the skip finds its newline
			} else if eof && cut > 0 && data[cut-1] != '\n' {
				nl++ // final line without newline
			}
			line += nl
			p.jobs <- j
			if j.done != nil {
				<-j.done
			}
		} else {
			carry = append(carry, data...)
			p.free <- buf
		}
		if rerr != nil {
			return line - 1, bytesRead, rerr
		}
	}
	return line - 1, bytesRead, nil
}
