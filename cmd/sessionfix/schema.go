package main

import "github.com/sessionfix/sessionfix/reports"

func plural(n int, what string) string { return reports.Plural(n, what) }
