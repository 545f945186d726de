package diagnose

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// Encoding is what an input stream was detected as.
type Encoding string

const (
	EncUTF8    Encoding = "utf-8"
	EncUTF16LE Encoding = "utf-16le"
	EncUTF16BE Encoding = "utf-16be"
	EncGB18030 Encoding = "gb18030"
	EncBinary  Encoding = "binary"
)

// SniffEncoding decides the encoding of a stream from its first bytes (up to 64 KiB is useful).
// A BOM wins; otherwise UTF-16 is recognised by the share of NUL bytes in odd or even positions
// (log text is mostly ASCII), GB18030 (a superset of GBK) by invalid UTF-8 that decodes cleanly as
// GB18030, and binary by NUL or control bytes in text that is not UTF-16.
func SniffEncoding(p []byte) Encoding {
	switch {
	case bytes.HasPrefix(p, []byte{0xEF, 0xBB, 0xBF}):
		return EncUTF8
	case bytes.HasPrefix(p, []byte{0xFF, 0xFE}):
		return EncUTF16LE
	case bytes.HasPrefix(p, []byte{0xFE, 0xFF}):
		return EncUTF16BE
	}
	s := p[:min(len(p), 4096)]
	if len(s) >= 4 {
		var zeroEven, zeroOdd int
		for i, c := range s {
			if c == 0 {
				if i%2 == 0 {
					zeroEven++
				} else {
					zeroOdd++
				}
			}
		}
		half := len(s) / 2
		switch {
		case zeroOdd*10 >= half*4 && zeroEven*20 <= half:
			return EncUTF16LE
		case zeroEven*10 >= half*4 && zeroOdd*20 <= half:
			return EncUTF16BE
		}
	}
	var ctrl int
	for _, c := range s {
		if c == 0 {
			return EncBinary
		}
		if c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\f' && c != 0x1b {
			ctrl++
		}
	}
	if len(s) > 0 && ctrl*10 > len(s) {
		return EncBinary
	}
	if looksGB18030(p) {
		return EncGB18030
	}
	return EncUTF8
}

// looksGB18030 reports whether p has more invalid UTF-8 than valid multi-byte UTF-8 and decodes
// as GB18030 with almost no replacement characters.
func looksGB18030(p []byte) bool {
	var invalid, multi int
	for i := 0; i < len(p); {
		if p[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRune(p[i:])
		if r == utf8.RuneError && n == 1 {
			if len(p)-i < utf8.UTFMax && !utf8.FullRune(p[i:]) {
				break // a rune cut by the sample boundary
			}
			invalid++
		} else {
			multi++
		}
		i += n
	}
	if invalid == 0 || invalid <= multi {
		return false
	}
	out, err := simplifiedchinese.GB18030.NewDecoder().Bytes(p)
	if err != nil {
		return false
	}
	bad := bytes.Count(out, []byte("\uFFFD"))
	return bad*100 <= invalid
}

// decoderFor returns the transformer that turns a stream of enc into UTF-8 (nil: none needed).
// UTF-8 is passed through untouched (a BOM is skipped by the caller): invalid bytes in it are
// decoded per line for display, and transcoding every byte would halve the scan speed.
func decoderFor(enc Encoding) transform.Transformer {
	switch enc {
	case EncUTF16LE:
		return unicode.UTF16(unicode.LittleEndian, unicode.UseBOM).NewDecoder()
	case EncUTF16BE:
		return unicode.UTF16(unicode.BigEndian, unicode.UseBOM).NewDecoder()
	case EncGB18030:
		return simplifiedchinese.GB18030.NewDecoder()
	}
	return nil
}

// DecodeText turns bytes of unknown origin into valid UTF-8: UTF-8 stays, otherwise GB18030 is
// tried (PowerShell on Chinese Windows writes GBK), and what still is invalid becomes U+FFFD.
func DecodeText(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	if out, ok := decodeGB(b); ok {
		return out
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

func decodeGB(b []byte) (string, bool) {
	out, err := simplifiedchinese.GB18030.NewDecoder().Bytes(b)
	if err != nil || bytes.Count(out, []byte("\uFFFD")) > bytes.Count(b, []byte("\uFFFD")) {
		return "", false
	}
	return string(out), true
}

// UnquoteGoBytes reverses Go's %q on a byte string: \xNN escapes become the raw bytes, \u and \U
// escapes and literal runes their UTF-8 bytes (which is how %q prints valid runes that happen to
// sit inside non-UTF-8 text), and the usual single-character escapes their byte. body is the text
// between the quotes. A truncated or malformed escape ends the decoding; the rest is kept as is
// and complete reports false.
func UnquoteGoBytes(body string) (out []byte, complete bool) {
	out = make([]byte, 0, len(body))
	s := body
	for len(s) > 0 {
		c := s[0]
		if c != '\\' {
			// Copy runs without escapes in one step.
			i := strings.IndexByte(s, '\\')
			if i < 0 {
				i = len(s)
			}
			out = append(out, s[:i]...)
			s = s[i:]
			continue
		}
		v, multibyte, tail, err := strconv.UnquoteChar(s, '"')
		if err != nil {
			return append(out, s...), false
		}
		if v < utf8.RuneSelf || (!multibyte && v < 256 && (s[1] == 'x' || isOctal(s[1]))) {
			out = append(out, byte(v))
		} else {
			out = utf8.AppendRune(out, v)
		}
		s = tail
	}
	return out, true
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// DecodeQuotedStrings rewrites every Go-quoted string in msg that carries \x, \u or \U escapes
// into readable text: the escapes are turned back into bytes, the bytes decoded (UTF-8, else
// GB18030), and control characters shown as \r, \n, \t so the result stays on one line. Strings
// without such escapes and all text outside quotes are left untouched; invalid UTF-8 outside
// quotes is decoded with DecodeText.
func DecodeQuotedStrings(msg []byte) string {
	if !bytes.Contains(msg, []byte(`\x`)) && !bytes.Contains(msg, []byte(`\u`)) && !bytes.Contains(msg, []byte(`\U`)) {
		return DecodeText(msg)
	}
	var sb strings.Builder
	s := msg
	for {
		i := bytes.IndexByte(s, '"')
		if i < 0 {
			sb.WriteString(DecodeText(s))
			break
		}
		sb.WriteString(DecodeText(s[:i+1]))
		s = s[i+1:]
		end := closingQuote(s)
		body := s
		if end >= 0 {
			body = s[:end]
		}
		if bytes.Contains(body, []byte(`\x`)) || bytes.Contains(body, []byte(`\u`)) || bytes.Contains(body, []byte(`\U`)) {
			raw, _ := UnquoteGoBytes(string(body))
			writeVisible(&sb, DecodeText(raw))
		} else {
			sb.WriteString(DecodeText(body))
		}
		if end < 0 {
			break
		}
		sb.WriteByte('"')
		s = s[end+1:]
	}
	return sb.String()
}

// closingQuote finds the unescaped '"' that ends a Go-quoted string body, or -1.
func closingQuote(s []byte) int {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return -1
}

// writeVisible writes text with line breaks, tabs and other C0 controls escaped.
func writeVisible(sb *strings.Builder, text string) {
	for _, r := range text {
		switch {
		case r == '\r':
			sb.WriteString(`\r`)
		case r == '\n':
			sb.WriteString(`\n`)
		case r == '\t':
			sb.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			sb.WriteString(strconv.QuoteRune(r)[1:][:len(strconv.QuoteRune(r))-2])
		default:
			sb.WriteRune(r)
		}
	}
}
