package srcmsg

import (
	"strings"

	"github.com/kubewin/kubewin/internal/diagnose/srcmsg/extract"
)

// wild stands for a printf verb in a normalised format; it cannot occur in normalised text.
const wild = '\x00'

// fuzzyMinWords is the fewest literal words a format needs to be matched approximately: shorter
// ones would match by chance once a word may be missing.
const fuzzyMinWords = 6

type pattern struct {
	pieces     []string  // literal text between wildcards, normalised
	lead       bool      // starts with a wildcard
	trail      bool      // ends with a wildcard
	litLen     int       // bytes of literal text
	words      []string  // literal words in order, for near matches
	weights    []float32 // inverse document frequency of each word, for near matches
	wordPiece  []int16   // the piece each word is in
	wordIDs    []int32   // Index.words id of each word
	slotLimit  []bool    // per piece after the first: the wildcard before it holds a name, not an error
	tailErr    bool      // ends with a verb after ":" (a wrapped cause), whose text is not the format's
	anchorable []string  // words that can only match a whole message word
	fuzzyKeys  uint8     // how many fuzzy postings hold this pattern
	anchorPc   int16     // piece holding the anchor word
	anchorOff  int16     // its offset in that piece
	maxW       float32   // the rarest word's weight
	spec       float32   // specificity: summed inverse document frequency of the literal words
}

func isWord(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c >= 'A' && c <= 'Z'
}

// normalizeFormat lower-cases a printf format, turns each verb into one wildcard byte, collapses
// whitespace and drops trailing sentence punctuation, which releases add and remove.
func normalizeFormat(f string) string {
	var b strings.Builder
	b.Grow(len(f))
	space := false
	for i := 0; i < len(f); i++ {
		c := f[i]
		if c == '%' {
			if i+1 < len(f) && f[i+1] == '%' {
				i++
			} else {
				j := i + 1
				for j < len(f) && strings.IndexByte("+-# 0123456789.*[]", f[j]) >= 0 {
					j++
				}
				if space {
					b.WriteByte(' ')
					space = false
				}
				s := b.String()
				if len(s) == 0 || s[len(s)-1] != wild {
					b.WriteByte(wild)
				}
				i = j // skips the verb letter
				continue
			}
		}
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	s := b.String()
	return strings.TrimRight(s, ".! ")
}

// compile splits a normalised format into pieces. ok is false for formats with too little
// literal text to name a place (see extract.Meaningful).
func compile(norm string) (pattern, bool) {
	var p pattern
	if norm == "" || !extract.Meaningful(strings.ReplaceAll(norm, string(wild), "%v")) {
		return p, false
	}
	p.lead = norm[0] == wild
	p.trail = norm[len(norm)-1] == wild
	for _, s := range strings.Split(norm, string(wild)) {
		if s != "" {
			p.pieces = append(p.pieces, s)
			p.litLen += len(s)
		}
	}
	for pi, s := range p.pieces {
		wildBefore := pi > 0 || p.lead
		wildAfter := pi < len(p.pieces)-1 || p.trail
		for i := 0; i < len(s); {
			if !isWord(s[i]) {
				i++
				continue
			}
			j := i
			for j < len(s) && isWord(s[j]) {
				j++
			}
			w := s[i:j]
			p.words = append(p.words, w)
			p.wordPiece = append(p.wordPiece, int16(pi))
			if len(w) >= 3 && !(i == 0 && wildBefore) && !(j == len(s) && wildAfter) {
				p.anchorable = append(p.anchorable, w)
			}
			i = j
		}
	}
	if len(p.anchorable) == 0 || p.litLen < minLiteral {
		return p, false
	}
	p.tailErr = p.trail && errorSlot(p.pieces[len(p.pieces)-1])
	p.slotLimit = make([]bool, len(p.pieces))
	for i := 1; i < len(p.pieces); i++ {
		p.slotLimit[i] = !errorSlot(p.pieces[i-1])
	}
	return p, true
}

// normalizeMessage lower-cases a log message, unescapes \" (lines quoted in JSON or klog values)
// and collapses whitespace, so that offsets in hits refer to this form.
func normalizeMessage(m string) string {
	var b strings.Builder
	b.Grow(len(m))
	space := false
	for i := 0; i < len(m); i++ {
		c := m[i]
		if c == '\\' && i+1 < len(m) && m[i+1] == '"' {
			continue
		}
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == 0 {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}

// maxNameSpaces bounds how many spaces a verb that stands for a name (not an error) may absorb:
// a pod or network name has none, a quoted list a few; more means the literal text that follows
// belongs to another message.
const maxNameSpaces = 4

// errorSlot reports whether the verb after piece holds an error (or other free text): it follows
// a colon, an equals sign, a parenthesis or the words err/error.
func errorSlot(piece string) bool {
	t := strings.TrimRight(piece, " ")
	if t == "" {
		return true
	}
	switch t[len(t)-1] {
	case ':', '=', '(', '[', '{', ',', '-', '>':
		return true
	}
	return strings.HasSuffix(t, "error") || strings.HasSuffix(t, "err") || strings.HasSuffix(t, "output") ||
		strings.HasSuffix(t, "reason") || strings.HasSuffix(t, "because") || strings.HasSuffix(t, "due to")
}

// locate records where word w (a whole word) sits in the pattern's pieces, for matchAround.
func (p *pattern) locate(w string) bool {
	for k, piece := range p.pieces {
		for from := 0; from < len(piece); {
			i := strings.Index(piece[from:], w)
			if i < 0 {
				break
			}
			i += from
			e := i + len(w)
			if (i == 0 || !isWord(piece[i-1])) && (e == len(piece) || !isWord(piece[e])) && i < 1<<15 {
				p.anchorPc, p.anchorOff = int16(k), int16(i)
				return true
			}
			from = i + 1
		}
	}
	return false
}

// matchAround matches p with its anchor piece at m[at:]: the pieces after it forward (leftmost),
// the pieces before it backward (rightmost), so that one anchor word in the message gives one
// attempt instead of a scan of the whole message. tail is where the last literal piece ends.
func (p *pattern) matchAround(m string, at int) (start, end, tail int, ok bool) {
	k := int(p.anchorPc)
	if at < 0 || !strings.HasPrefix(m[at:], p.pieces[k]) {
		return 0, 0, 0, false
	}
	// Forward from the anchor piece.
	pos := at + len(p.pieces[k])
	if k == len(p.pieces)-1 && !p.trail {
		if pos < len(m) && isWord(m[pos]) && isWord(p.pieces[k][len(p.pieces[k])-1]) {
			return 0, 0, 0, false
		}
	}
	for i := k + 1; i < len(p.pieces); i++ {
		piece := p.pieces[i]
		last := i == len(p.pieces)-1 && !p.trail
		for {
			j := strings.Index(m[pos:], piece)
			if j < 0 {
				return 0, 0, 0, false
			}
			if p.slotLimit[i] && strings.Count(m[pos:pos+j], " ") > maxNameSpaces {
				return 0, 0, 0, false
			}
			e := pos + j + len(piece)
			if !last || e == len(m) || !isWord(m[e]) || !isWord(piece[len(piece)-1]) {
				pos = e
				break
			}
			pos += j + 1
		}
	}
	end, tail = pos, pos
	if p.trail {
		end = len(m)
	}
	// Backward from the anchor piece.
	pos = at
	for i := k - 1; i >= 0; i-- {
		piece := p.pieces[i]
		limit := pos
		for {
			j := strings.LastIndex(m[:limit], piece)
			if j < 0 {
				return 0, 0, 0, false
			}
			if p.slotLimit[i+1] && strings.Count(m[j+len(piece):pos], " ") > maxNameSpaces {
				return 0, 0, 0, false
			}
			if i == 0 && !p.lead && j > 0 && isWord(m[j-1]) && isWord(piece[0]) {
				limit = j + len(piece) - 1 // not at a word start: look further left
				continue
			}
			pos = j
			break
		}
	}
	start = pos
	if k == 0 && !p.lead && start > 0 && isWord(m[start-1]) && isWord(p.pieces[0][0]) {
		return 0, 0, 0, false
	}
	if p.lead {
		start = 0
	}
	return start, end, tail, true
}

// words splits normalised text into words with their offsets.
func splitWords(m string, out []wordPos) []wordPos {
	out = out[:0]
	for i := 0; i < len(m); {
		if !isWord(m[i]) {
			i++
			continue
		}
		j := i
		for j < len(m) && isWord(m[j]) {
			j++
		}
		out = append(out, wordPos{w: m[i:j], start: i, end: j})
		i = j
	}
	return out
}

type wordPos struct {
	w          string
	start, end int
	id         int32 // Index.words id, -1 for a word no format has
}
