package diagnose

// normalizeKey turns an error message into a grouping key so that lines differing only in ids,
// numbers, addresses and durations share it: UUIDs and alphanumeric tokens made of hex digits
// with at least one decimal digit (or 12 or more hex letters) become H, digit runs inside other tokens
// become N ("web-12" -> "web-N", "12s" -> "Ns"), and placeholders joined by '.', '-' or ':'
// collapse into one (IPs, UUIDs, times). Only the first maxKey bytes are considered.
func normalizeKey(b []byte) string { return string(appendNormalized(nil, b)) }

// appendNormalized appends the grouping key of b to out (see normalizeKey).
func appendNormalized(out, b []byte) []byte {
	const maxKey = 240
	if len(b) > maxKey {
		b = b[:maxKey]
	}
	base := len(out)
	lastPH := -1 // index in out of the last placeholder (>= base)
	put := func(sym byte) {
		n := len(out)
		if lastPH >= base && lastPH == n-2 && (out[n-1] == '.' || out[n-1] == '-' || out[n-1] == ':') {
			if sym == 'H' {
				out[lastPH] = 'H'
			}
			out = out[:n-1]
			return
		}
		if lastPH >= base && lastPH == n-1 {
			if sym == 'H' {
				out[lastPH] = 'H'
			}
			return
		}
		lastPH = len(out)
		out = append(out, sym)
	}
	for i := 0; i < len(b); {
		c := b[i]
		if !isAlnum(c) {
			out = append(out, c)
			i++
			continue
		}
		if n := uuidAt(b[i:]); n > 0 && (i == 0 || !isAlnum(b[i-1])) {
			put('H')
			i += n
			continue
		}
		j := i
		digits, hex := 0, true
		for j < len(b) && isAlnum(b[j]) {
			if isDigit(b[j]) {
				digits++
			} else if !isHexLetter(b[j]) {
				hex = false
			}
			j++
		}
		tok := b[i:j]
		switch {
		case digits == len(tok):
			put('N')
		case hex && (digits > 0 || len(tok) >= 12):
			put('H')
		case digits == 0:
			out = append(out, tok...)
		default:
			for k := 0; k < len(tok); {
				if isDigit(tok[k]) {
					for k < len(tok) && isDigit(tok[k]) {
						k++
					}
					put('N')
					continue
				}
				out = append(out, tok[k])
				k++
			}
		}
		i = j
	}
	return out
}

// uuidAt returns 36 if b starts with a UUID (8-4-4-4-12 hex digits), else 0.
func uuidAt(b []byte) int {
	if len(b) < 36 {
		return 0
	}
	for k := 0; k < 36; k++ {
		switch k {
		case 8, 13, 18, 23:
			if b[k] != '-' {
				return 0
			}
		default:
			if !isDigit(b[k]) && !isHexLetter(b[k]) {
				return 0
			}
		}
	}
	if len(b) > 36 && isAlnum(b[36]) {
		return 0
	}
	return 36
}

func isAlnum(c byte) bool {
	return isDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isHexLetter(c byte) bool { return (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') }
