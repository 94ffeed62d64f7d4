package main

import (
	"fmt"
	"strings"

	"github.com/sessionfix/sessionfix/reports"
)

// settingsTable is the text table of legacy-spelled settings rules.
func settingsTable(rows []settingsRuleRow) *reports.Table {
	t := &reports.Table{Columns: []string{"where", "key", "rule", "reason", "current name"}}
	for _, r := range rows {
		reason := r.Reason
		if r.Ignored != "" {
			reason += " (not in effect)"
		}
		current := strings.Join(r.Registered, ", ")
		if r.VarDependent {
			current = "(depends on $VAR values; not shown)"
		}
		t.Add(fmt.Sprintf("%s:%d:%d", r.File, r.Line, r.Column), fmt.Sprintf("%s[%d]", r.Key, r.Index), r.Rule, reason, current)
	}
	return t
}
