package srcmsg

import (
	"sort"
	"strconv"
	"strings"
)

// minLiteral is the fewest bytes of literal (non-verb) text a format must have to be indexed and
// reported; with extract.Meaningful (two words, eight letters) it keeps "%v", "failed: %w" and
// "error: %v" out.
const minLiteral = 10

// maxHits bounds what Match returns: generic formats ("failed to create %s: %v") occur in many
// files, and the caller wants the best few.
const maxHits = 24

// fuzzyThreshold is the share of a format's literal word weight (rarity) that a near match must
// find in order in the message.
const fuzzyThreshold = 0.8

// Hit is one source location whose format matches (part of) a message.
type Hit struct {
	Entry
	Part    string  // "" for a plain message, "msg" or the key ("err") of a klog structured message
	Text    string  // the matched part, normalised (lower case, single spaces)
	Start   int     // byte offsets of the match in Text's part
	End     int     //
	Covered float64 // literal bytes of the format / bytes of the part: 1 is a full match without values
	Exact   bool    // false for a near match (a word changed between versions)
	// Specific: the format's literal words are rare enough to name one place (see specific); a
	// hit on a generic format ("%s already exists") is a textual match whose source may be one
	// of several components.
	Specific bool
}

type scratch struct {
	wseen []uint32 // per word id: stamp of the last message part that had the word
	seen  []uint32
	hits  []uint8
	stamp uint32
	words []wordPos
	dp    []float32
	cands []int32
}

func (sc *scratch) next() uint32 {
	sc.stamp++
	if sc.stamp == 0 { // wrapped: clear so that old stamps cannot collide
		for i := range sc.seen {
			sc.seen[i] = 0
		}
		for i := range sc.wseen {
			sc.wseen[i] = 0
		}
		sc.stamp = 1
	}
	return sc.stamp
}

// Match returns the source formats that match msg: exact before near, the message before its
// err=... values, specific formats before generic ones, then by start (outermost wrapper first,
// causes after), then longer literal text first; identical formats at several locations each
// give a hit. msg is a log message with its log header removed; a klog structured message
// (`"msg" key="value" ...`) is matched on its message and on its err/error/errors/reason values.
//
// Rule for a hit (README.md has the details): the format has at least two words, ten letters and
// ten bytes of literal text (verbs excluded); all its literal text occurs in order in the
// message, starting at a word boundary, a trailing literal ending at one, and a verb that holds a
// name taking at most four spaces; a verb-free format makes up a whole segment of the message;
// a format with verbs is specific (see specific) or starts a segment and supplies half of the
// text from there on up to its wrapped cause. Near matches (Exact false) allow one changed word
// in a specific format of six words or more, and are tried only when nothing matched exactly.
func (ix *Index) Match(msg string) []Hit {
	sc := ix.scratch.Get().(*scratch)
	defer ix.scratch.Put(sc)
	var hits []Hit
	if head, kv, ok := splitStructured(msg); ok {
		hits = ix.matchPart(sc, hits, "msg", normalizeMessage(head))
		for _, v := range kv {
			hits = ix.matchPart(sc, hits, v.key, normalizeMessage(v.val))
		}
	} else {
		hits = ix.matchPart(sc, hits, "", normalizeMessage(msg))
	}
	sort.SliceStable(hits, func(a, b int) bool {
		ha, hb := &hits[a], &hits[b]
		if ha.Exact != hb.Exact {
			return ha.Exact
		}
		if pa, pb := partRank(ha.Part), partRank(hb.Part); pa != pb {
			return pa < pb
		}
		if ha.Specific != hb.Specific {
			return ha.Specific
		}
		if ha.Start != hb.Start {
			return ha.Start < hb.Start
		}
		return ix.pats[ha.pat].litLen > ix.pats[hb.pat].litLen
	})
	if len(hits) > maxHits {
		hits = hits[:maxHits]
	}
	return hits
}

// partRank orders the message before the values of its error keys.
func partRank(p string) int {
	if p == "" || p == "msg" {
		return 0
	}
	return 1
}

// Best returns the first hit, if any: the outermost format of the message (the location that
// printed it) rather than a cause wrapped inside.
func (ix *Index) Best(msg string) (Hit, bool) {
	h := ix.Match(msg)
	if len(h) == 0 {
		return Hit{}, false
	}
	return h[0], true
}

func (ix *Index) matchPart(sc *scratch, hits []Hit, part, m string) []Hit {
	if len(m) == 0 {
		return hits
	}
	sc.words = splitWords(m, sc.words)
	for i := range sc.words {
		if id, ok := ix.words[sc.words[i].w]; ok {
			sc.words[i].id = id
		} else {
			sc.words[i].id = -1
		}
	}
	stamp := sc.next()
	best := 0.0
	for _, w := range sc.words {
		if w.id < 0 {
			continue
		}
		for _, id := range ix.infos[w.id].anchor {
			if sc.seen[id] == stamp { // already matched at an earlier occurrence
				continue
			}
			p := &ix.pats[id]
			start, end, tail, ok := p.matchAround(m, w.start-int(p.anchorOff))
			if !ok || !p.accept(m, start, end, tail) {
				continue
			}
			sc.seen[id] = stamp
			cov := float64(p.litLen) / float64(len(m))
			if cov > best {
				best = cov
			}
			hits = ix.appendHits(hits, id, part, m, start, end, cov, true)
		}
	}
	if best > 0 {
		// Near matches are for messages no format matches exactly (a release's rewording).
		return hits
	}
	return ix.matchNear(sc, hits, part, m)
}

func (ix *Index) appendHits(hits []Hit, id int32, part, m string, start, end int, cov float64, exact bool) []Hit {
	if cov > 1 {
		cov = 1
	}
	spec := ix.pats[id].specific()
	for _, e := range ix.byPat[id] {
		hits = append(hits, Hit{Entry: ix.entries[e], Part: part, Text: m, Start: start, End: end, Covered: cov, Exact: exact, Specific: spec})
	}
	return hits
}

// segmentStart reports whether s starts the message or one segment of it: after a separator
// that error chains and key=value output put before a wrapped message.
func segmentStart(m string, s int) bool {
	i := s - 1
	for i >= 0 && m[i] == ' ' {
		i--
	}
	return i < 0 || strings.IndexByte(":=([{)]}\"'>,;|", m[i]) >= 0
}

// segmentEnd reports whether e ends the message or one segment of it.
func segmentEnd(m string, e int) bool {
	for e < len(m) && m[e] == ' ' {
		e++
	}
	if e == len(m) || strings.IndexByte(":,;.!([{)]}\"'|", m[e]) >= 0 {
		return true
	}
	// logrus and Calico text output put fields after the message: "msg error=...".
	k := e
	for k < len(m) && isWord(m[k]) {
		k++
	}
	return k > e && k < len(m) && m[k] == '='
}

// minSpec is the specificity (summed log(1+N/df) of the literal words, N formats in the index,
// df how many contain the word) above which a format's match is trusted anywhere in a message:
// "failed to %s" (2.0) or "failed to find %q: %v" (6.2) are below it, "failed in win32: %s (0x%x)"
// (11.3) above. A format also needs three literal words for it ("%s timed out" is short however
// rare "timed" is) and a distinctive word (specific).
const minSpec = 10

// specific: three literal words, summed rarity ≥ minSpec, and either one distinctive word
// (weight ≥ minRarest: "win32", "creation", "kubelet") or much summed rarity (≥ 14.5). Measured
// on the generated index: "%s does not exist" (11.2, rarest 4.8), "network %v not found" (10.1,
// 4.3) and "container %v does not exist" (14.3, 4.8) are generic; "Policy creation failed: %v"
// (11.8, 6.2), "failed to find plugin %q in path %s" (14.9) and "Unable to update cni config: %s"
// (16.5, 4.9) are not.
func (p *pattern) specific() bool {
	return p.spec >= minSpec && len(p.words) >= 3 && (p.maxW >= minRarest || p.spec >= 14.5)
}

// minRarest is the weight log(1+N/df) of a word in about one format in 150.
const minRarest = 5

// accept applies the rule for a hit beyond the literal text matching: a format without verbs
// must make up a whole segment of the message (so "create failed" is not found inside "runc
// create failed: ..."); a format with verbs must be specific, or start a segment and supply at
// least half of the text from there on.
func (p *pattern) accept(m string, start, end, tail int) bool {
	if !p.lead && !p.trail && len(p.pieces) == 1 {
		return segmentStart(m, start) && segmentEnd(m, end)
	}
	if p.specific() {
		return true
	}
	// The text a trailing error verb takes (the wrapped cause) is not the format's to cover.
	limit := len(m)
	if p.tailErr {
		limit = tail
	}
	return segmentStart(m, start) && 2*p.litLen >= limit-start
}

// matchNear finds formats whose literal words occur in order in the message but for a changed or
// missing word (wording that differs between releases). Candidates share at least two of the
// format's three rarest words with the message; the in-order word overlap (longest common
// subsequence weighted by word rarity) must reach fuzzyThreshold.
func (ix *Index) matchNear(sc *scratch, hits []Hit, part, m string) []Hit {
	stamp := sc.next()
	cands := sc.cands[:0]
	defer func() { sc.cands = cands }()
	for _, w := range sc.words {
		if w.id < 0 || sc.wseen[w.id] == stamp { // unknown, or seen earlier in this part
			continue
		}
		sc.wseen[w.id] = stamp
		for _, id := range ix.infos[w.id].fuzzy {
			if sc.seen[id] != stamp {
				sc.seen[id] = stamp
				sc.hits[id] = 0
			}
			sc.hits[id]++
			need := uint8(2)
			if ix.pats[id].fuzzyKeys < need {
				need = ix.pats[id].fuzzyKeys
			}
			if sc.hits[id] == need {
				cands = append(cands, id)
			}
		}
	}
	for _, id := range cands {
		p := &ix.pats[id]
		if !p.specific() {
			continue
		}
		r := lcsWords(p, sc.words, &sc.dp)
		if r.total == 0 || r.matched < fuzzyThreshold*r.total || r.letters < minLiteral {
			continue
		}
		// One word may differ: changed, added or dropped, inside the literal text or at its ends.
		if r.missing+r.edits > 1 && !(r.missing <= 1 && r.edits <= 1 && len(p.words) >= 12) {
			continue
		}
		first, last := r.first, r.last
		if !p.accept(m, sc.words[first].start, sc.words[last].end, sc.words[last].end) {
			continue
		}
		start, end := sc.words[first].start, sc.words[last].end
		if p.trail {
			end = len(m)
		}
		hits = ix.appendHits(hits, id, part, m, start, end, float64(r.letters)/float64(len(m)), false)
	}
	return hits
}

type lcsResult struct {
	matched, total float64 // idf weight of the matched words and of all the format's words
	first, last    int     // message words where the match starts and ends
	missing        int     // format words not found
	edits          int     // words skipped inside a literal piece, on either side
	letters        int     // length of the matched words
}

// lcsWords is the longest common subsequence of the format's words in the message's words,
// weighted by each word's inverse document frequency, so that a missing rare word ("gcs") weighs
// more than a missing "to". Between two matched words of the same literal piece, every word
// skipped in the format or the message counts as an edit (a verb's value may take any number).
func lcsWords(p *pattern, mw []wordPos, buf *[]float32) lcsResult {
	fw, wt := p.wordIDs, p.weights
	var r lcsResult
	for _, w := range wt {
		r.total += float64(w)
	}
	r.missing = len(fw)
	if len(fw) > 64 || len(mw) > 256 {
		return r
	}
	cols := len(mw) + 1
	need := (len(fw) + 1) * cols
	if cap(*buf) < need {
		*buf = make([]float32, need)
	}
	dp := (*buf)[:need]
	for i := 0; i < cols; i++ { // row 0; later rows' column 0 are set below
		dp[i] = 0
	}
	for i := 1; i <= len(fw); i++ {
		dp[i*cols] = 0
		for j := 1; j <= len(mw); j++ {
			v := dp[(i-1)*cols+j]
			if u := dp[i*cols+j-1]; u > v {
				v = u
			}
			if fw[i-1] == mw[j-1].id {
				if u := dp[(i-1)*cols+j-1] + wt[i-1]; u > v {
					v = u
				}
			}
			dp[i*cols+j] = v
		}
	}
	r.matched = float64(dp[len(fw)*cols+len(mw)])
	i, j := len(fw), len(mw)
	r.first, r.last = -1, -1
	found := 0
	nextI, nextJ := -1, -1 // the matched pair after the current one (walking backwards)
	for i > 0 && j > 0 {
		switch {
		case fw[i-1] == mw[j-1].id && dp[i*cols+j] == dp[(i-1)*cols+j-1]+wt[i-1]:
			if r.last < 0 {
				r.last = j - 1
			}
			r.first = j - 1
			found++
			r.letters += len(p.words[i-1])
			if nextI >= 0 {
				gf, gm := nextI-i, nextJ-j // words skipped between the two matches
				if p.wordPiece[i-1] == p.wordPiece[nextI] {
					if gm > gf {
						gf = gm
					}
					r.edits += gf
				} else if p.slotLimit[p.wordPiece[nextI]] && gm > gf+maxNameSpaces+1 {
					r.edits += 2 // a name's verb took a whole sentence: not this format
				}
			}
			nextI, nextJ = i-1, j-1
			i--
			j--
		case dp[i*cols+j] == dp[(i-1)*cols+j]:
			i--
		default:
			j--
		}
	}
	if r.first < 0 {
		return r
	}
	r.missing = len(fw) - found
	return r
}

type kvPair struct{ key, val string }

// splitStructured splits a klog structured message: a Go-quoted message followed by key=value
// pairs (k8s.io/klog/v2 textlogger/KObj formatting: quoted strings, bare numbers and names). It
// returns the message and the values of the keys that carry errors.
func splitStructured(msg string) (head string, errs []kvPair, ok bool) {
	msg = strings.TrimSpace(msg)
	if len(msg) < 2 || msg[0] != '"' {
		return "", nil, false
	}
	q, err := strconv.QuotedPrefix(msg)
	if err != nil {
		return "", nil, false
	}
	head, err = strconv.Unquote(q)
	if err != nil {
		return "", nil, false
	}
	rest := msg[len(q):]
	for {
		rest = strings.TrimLeft(rest, " ")
		eq := strings.IndexByte(rest, '=')
		if eq <= 0 || strings.ContainsAny(rest[:eq], " \"") {
			break
		}
		key := rest[:eq]
		rest = rest[eq+1:]
		var val string
		if strings.HasPrefix(rest, `"`) {
			vq, err := strconv.QuotedPrefix(rest)
			if err != nil {
				// A value cut off (a wrapped or truncated line): take what is there.
				val, rest = strings.TrimPrefix(rest, `"`), ""
			} else {
				val, _ = strconv.Unquote(vq)
				rest = rest[len(vq):]
			}
		} else {
			sp := strings.IndexByte(rest, ' ')
			if sp < 0 {
				sp = len(rest)
			}
			val, rest = rest[:sp], rest[sp:]
		}
		if k := strings.ToLower(key); k == "err" || k == "error" || k == "errors" || k == "reason" {
			errs = append(errs, kvPair{key: key, val: val})
		}
	}
	return head, errs, true
}
