package jsonscan

import (
	"bytes"
	"errors"
	"unicode/utf16"
	"unicode/utf8"
)

// Value is a decoded JSON string.
type Value struct {
	// Str is the decoded text; a lone surrogate (an unpaired "\ud800" escape) becomes U+FFFD
	// and invalid UTF-8 bytes are kept as they are.
	Str string
	// Units holds the exact UTF-16 code units, set only when the string has a lone surrogate
	// (Go strings cannot hold one; JavaScript strings can).
	Units []uint16
}

// Lone reports whether the string holds a lone surrogate (Units is then authoritative).
func (v Value) Lone() bool { return v.Units != nil }

// ErrBadString is returned by Unquote for a token that is not a valid JSON string.
var ErrBadString = errors.New("invalid JSON string")

// Unquote decodes a JSON string token (quotes included), exactly as JSON.parse does, keeping
// lone surrogates in Value.Units.
func Unquote(tok []byte) (Value, error) {
	if len(tok) < 2 || tok[0] != '"' || tok[len(tok)-1] != '"' {
		return Value{}, ErrBadString
	}
	body := tok[1 : len(tok)-1]
	if bytes.IndexByte(body, '\\') < 0 {
		return Value{Str: string(body)}, nil
	}
	var units []uint16 // built lazily, only for lone surrogates
	out := make([]byte, 0, len(body))
	lone := false
	for i := 0; i < len(body); {
		c := body[i]
		if c != '\\' {
			out = append(out, c)
			i++
			continue
		}
		if i+1 >= len(body) {
			return Value{}, ErrBadString
		}
		e := body[i+1]
		i += 2
		if c, ok := simpleEscape(e); ok {
			out = append(out, c)
			continue
		}
		switch e {
		case 'u':
			r, ok := hex4(body, i)
			if !ok {
				return Value{}, ErrBadString
			}
			i += 4
			if utf16.IsSurrogate(rune(r)) {
				if r < 0xdc00 && i+6 <= len(body) && body[i] == '\\' && body[i+1] == 'u' {
					if r2, ok := hex4(body, i+2); ok && r2 >= 0xdc00 && r2 <= 0xdfff {
						out = utf8.AppendRune(out, utf16.DecodeRune(rune(r), rune(r2)))
						i += 6
						continue
					}
				}
				lone = true
				out = utf8.AppendRune(out, utf8.RuneError)
				continue
			}
			out = utf8.AppendRune(out, rune(r))
		default:
			return Value{}, ErrBadString
		}
	}
	v := Value{Str: string(out)}
	if lone {
		units = unitsOf(body)
		v.Units = units
	}
	return v, nil
}

// unitsOf decodes a valid JSON string body into exact UTF-16 code units.
func unitsOf(body []byte) []uint16 {
	u := make([]uint16, 0, len(body))
	for i := 0; i < len(body); {
		c := body[i]
		if c == '\\' {
			e := body[i+1]
			i += 2
			if c, ok := simpleEscape(e); ok {
				u = append(u, uint16(c))
			} else { // \uXXXX (the body is valid)
				r, _ := hex4(body, i)
				u = append(u, r)
				i += 4
			}
			continue
		}
		r, size := utf8.DecodeRune(body[i:])
		i += size
		u = utf16.AppendRune(u, r)
	}
	return u
}

// simpleEscape decodes the one-character JSON escapes (\" \\ \/ \b \f \n \r \t).
func simpleEscape(e byte) (byte, bool) {
	switch e {
	case '"', '\\', '/':
		return e, true
	case 'b':
		return '\b', true
	case 'f':
		return '\f', true
	case 'n':
		return '\n', true
	case 'r':
		return '\r', true
	case 't':
		return '\t', true
	}
	return 0, false
}

func hex4(b []byte, i int) (uint16, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var v uint16
	for _, c := range b[i : i+4] {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		v = v<<4 | uint16(d)
	}
	return v, true
}

const hexDigits = "0123456789abcdef"

// AppendQuote appends s as a JSON string token the way JSON.stringify writes it: '"' and '\\'
// escaped, control characters as \b \f \n \r \t or \u00XX, everything else (non-ASCII, '<',
// '>', '&', '/') raw. Invalid UTF-8 bytes are written as U+FFFD.
func AppendQuote(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		// A run of bytes written as they are (printable ASCII but '"' and '\\': every byte of
		// a provider-safe name) is appended at once.
		j := i
		for j < len(s) && s[j] >= 0x20 && s[j] < utf8.RuneSelf && s[j] != '"' && s[j] != '\\' {
			j++
		}
		if j > i {
			dst = append(dst, s[i:j]...)
			if i = j; i == len(s) {
				break
			}
		}
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			dst = utf8.AppendRune(dst, r)
			i += size
			continue
		}
		dst = appendASCII(dst, c)
		i++
	}
	return append(dst, '"')
}

// AppendQuoteUnits appends UTF-16 units as a JSON string token; a lone surrogate is written as
// a \uXXXX escape so the exact units survive (as JSON.stringify does since ES2019).
func AppendQuoteUnits(dst []byte, u []uint16) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(u); i++ {
		c := u[i]
		switch {
		case c < utf8.RuneSelf:
			dst = appendASCII(dst, byte(c))
		case utf16.IsSurrogate(rune(c)):
			if c < 0xdc00 && i+1 < len(u) && u[i+1] >= 0xdc00 && u[i+1] <= 0xdfff {
				dst = utf8.AppendRune(dst, utf16.DecodeRune(rune(c), rune(u[i+1])))
				i++
				continue
			}
			dst = append(dst, '\\', 'u', hexDigits[c>>12], hexDigits[c>>8&0xf], hexDigits[c>>4&0xf], hexDigits[c&0xf])
		default:
			dst = utf8.AppendRune(dst, rune(c))
		}
	}
	return append(dst, '"')
}

func appendASCII(dst []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(dst, '\\', c)
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	}
	if c < 0x20 {
		return append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
	}
	return append(dst, c)
}

func indexByte(b []byte, c byte) int { return bytes.IndexByte(b, c) }
