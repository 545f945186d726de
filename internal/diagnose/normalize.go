package diagnose

// normalizeKey turns an error message into a grouping key: runs of digits become N, hex-looking
// tokens with a digit (ids, hashes, UUID parts) become H, and repeats collapse, so that
// "pod abc-1234 failed after 3s" and "pod abc-9 failed after 12s" share a key. Only the first
// maxKey bytes are considered; the key is valid UTF-8 only if the input is.
func normalizeKey(b []byte) string {
	const maxKey = 240
	if len(b) > maxKey {
		b = b[:maxKey]
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		c := b[i]
		if !isAlnum(c) {
			out = append(out, c)
			i++
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
			out = appendToken(out, 'N')
		case digits > 0 && hex:
			out = appendToken(out, 'H')
		default:
			out = append(out, tok...)
		}
		i = j
	}
	return string(out)
}

// appendToken appends a placeholder unless the previous token (across '.', '-', ':' separators)
// was the same placeholder, so IPs, UUIDs and times collapse to one symbol.
func appendToken(out []byte, sym byte) []byte {
	n := len(out)
	if n >= 2 && out[n-2] == sym && (out[n-1] == '.' || out[n-1] == '-' || out[n-1] == ':') {
		return out[:n-1]
	}
	if n >= 1 && out[n-1] == sym {
		return out
	}
	return append(out, sym)
}

func isAlnum(c byte) bool {
	return isDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isHexLetter(c byte) bool { return (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') }
