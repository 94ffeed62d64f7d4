package main

import (
	"github.com/sessionfix/sessionfix/pipeline"
	"github.com/sessionfix/sessionfix/reports"
)

// The report schema and the run summary live in package engine; these names keep the
// commands' code (and its tests) reading as before.
type (
	aggregate       = pipeline.Summary
	scanReport      = pipeline.ScanReport
	problemRow      = pipeline.ProblemRow
	storeRow        = pipeline.StoreRow
	renameRow       = pipeline.RenameRow
	decisionRow     = pipeline.DecisionRow
	storeOutcome    = pipeline.StoreOutcome
	fixStore        = pipeline.FixStore
	skippedRow      = pipeline.SkippedRow
	fixTail         = pipeline.FixTail
	settingsRuleRow = pipeline.SettingsRuleRow
	codexInfo       = pipeline.CodexInfo
)

// codexFromPath is codexInfo.ConfigFrom for a home found from PATH (codex.HomeOf).
const codexFromPath = pipeline.CodexFromPath

func plural(n int, what string) string { return reports.Plural(n, what) }
