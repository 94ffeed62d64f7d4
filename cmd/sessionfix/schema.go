package main

import (
	"github.com/sessionfix/sessionfix/pipeline"
	"github.com/sessionfix/sessionfix/reports"
)

// The report schema and the run summary live in package pipeline; these names keep the
// commands' code (and its tests) reading as before.
type (
	aggregate       = pipeline.Summary
	scanReport      = pipeline.ScanReport
	problemRow      = pipeline.ProblemRow
	storeRow        = pipeline.StoreRow
	fixStore        = pipeline.FixStore
	settingsRuleRow = pipeline.SettingsRuleRow
)

func plural(n int, what string) string { return reports.Plural(n, what) }
