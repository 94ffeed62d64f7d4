package reports

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
)

// SARIFFingerprint is the first 16 bytes of the SHA-256 of the parts (NUL-separated), in hex:
// the partialFingerprints "sessionfix/v1" of a result (scan, check and audit build theirs from
// what identifies a finding, never its line).
func SARIFFingerprint(parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(h[:16])
}

// SARIFRuleName is a rule's PascalCase name from its id parts split at '-' and '_'
// ("openai-chat", "pattern" → "OpenaiChatPattern").
func SARIFRuleName(id, rule string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(id+"-"+rule, func(r rune) bool { return r == '-' || r == '_' }) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

// SARIFPath is a file path as a SARIF artifact URI: relative to the working directory when
// it lies under it (so code scanning resolves it in the checkout), else as given, always with
// forward slashes; "" stays "".
func SARIFPath(p string) string {
	if p == "" {
		return ""
	}
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, p); err == nil && !strings.HasPrefix(rel, "..") && !filepath.IsAbs(rel) {
			return filepath.ToSlash(rel)
		}
	}
	return filepath.ToSlash(p)
}

// PrintableTable builds a Table whose cells are made printable (Printable: control and bidi
// characters as \uXXXX): CSV and HTML reports show names, they do not reproduce hostile bytes.
func PrintableTable(columns []string, rows [][]string) *Table {
	t := &Table{Columns: columns}
	for _, r := range rows {
		cells := make([]string, len(r))
		for i, c := range r {
			cells[i] = Printable(c)
		}
		t.Add(cells...)
	}
	return t
}
