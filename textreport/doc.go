// Package textreport writes the text (terminal) form of the reports of scan, fix, check and
// fix --rules: the tables, the bounded plans and summaries (at most SummaryStores stores
// listed one by one, planStoreRows rows of a store and planRows in all, checkListed rejected
// names), the problems and notes on standard error, the --all-users homes. It decides no
// finding and reads no store: its input is the report types of package pipeline (and check's
// result), written by the command, which holds the flags and prompts (issue 24 item 4).
// Every string from a store or a config goes through reports.Printable.
package textreport
