package main

import "github.com/sessionfix/sessionfix/pipeline/report"

// The report schema lives in package pipeline/report; these names keep the tests reading as
// before.
type (
	scanReport      = report.ScanReport
	problemRow      = report.ProblemRow
	storeRow        = report.StoreRow
	fixStore        = report.FixStore
	settingsRuleRow = report.SettingsRuleRow
)
