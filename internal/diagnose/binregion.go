package diagnose

import (
	"bytes"
	"io"
)

// Logs cut short by a crash, or written into preallocated files, hold runs of NUL bytes (and
// sometimes other garbage) between or before their text. Such a file is still a log: its text is
// scanned and the binary runs are skipped and counted (InputSummary.BinarySkipped). A file that
// is binary by format (an executable, a Windows .evtx, an image) is still refused as before.

// binaryMagics are formats that are binary by design; their head decides, not the byte mix.
var binaryMagics = [][]byte{
	[]byte("\x7fELF"), []byte("MZ"), []byte("ElfFile\x00"), []byte("ElfChnk\x00"), []byte("\x89PNG"),
	[]byte("SQLite format 3\x00"), []byte("\xd0\xcf\x11\xe0"), []byte("%PDF"), []byte("\x28\xb5\x2f\xfd"),
	[]byte("BZh"), []byte("\xfd7zXZ\x00"), []byte("7z\xbc\xaf\x27\x1c"),
}

// textWithBinaryRegions reports whether head, which SniffEncoding called binary, is text with
// binary runs: no known binary format, and the bytes outside NUL runs are mostly text (or the
// head is nothing but NULs, as at the start of a preallocated file).
func textWithBinaryRegions(head []byte) bool {
	for _, m := range binaryMagics {
		if bytes.HasPrefix(head, m) {
			return false
		}
	}
	var nonNUL, ctrl int
	for _, c := range head {
		switch {
		case c == 0:
		case c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\f' && c != 0x1b:
			nonNUL++
			ctrl++
		default:
			nonNUL++
		}
	}
	return nonNUL == 0 || ctrl*10 <= nonNUL
}

// binaryRegionFilter drops NUL and stray control bytes from a byte stream and ends the current
// line where a dropped run interrupted it, so text on either side of a run is never glued into
// one line. Skipped counts the dropped bytes.
type binaryRegionFilter struct {
	r       io.Reader
	buf     []byte
	Skipped int64
	inRun   bool // the last byte read was dropped
	lastOut byte // the last byte emitted ('\n' at start)
	pending []byte
	err     error
}

func newBinaryRegionFilter(r io.Reader) *binaryRegionFilter {
	return &binaryRegionFilter{r: r, buf: make([]byte, 32<<10), lastOut: '\n'}
}

func droppable(c byte) bool {
	return c == 0 || (c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\f' && c != 0x1b)
}

func (f *binaryRegionFilter) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		n, err := f.r.Read(f.buf)
		f.err = err
		out := f.pending[:0]
		for _, c := range f.buf[:n] {
			if droppable(c) {
				f.Skipped++
				f.inRun = true
				continue
			}
			if f.inRun {
				f.inRun = false
				if f.lastOut != '\n' && c != '\n' {
					out = append(out, '\n')
				}
			}
			out = append(out, c)
			f.lastOut = c
		}
		f.pending = out
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}
