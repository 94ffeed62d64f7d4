// Package plural spells counts the English way for the words sessionfix counts. It is a leaf
// (standard library only), so agent rooms and reports share one spelling.
package plural

import (
	"fmt"
	"strings"
)

// Of is n and what, pluralised the English way for the words sessionfix counts ("1 name",
// "2 names", "3 policies").
func Of(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	if strings.HasSuffix(what, "y") {
		return fmt.Sprintf("%d %sies", n, what[:len(what)-1])
	}
	return fmt.Sprintf("%d %ss", n, what)
}
