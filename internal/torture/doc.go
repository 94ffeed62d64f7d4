// Package torture holds the long fault tests of `make torture` (torture_test.go, run with
// SESSIONFIX_TORTURE=1): the sessionfix binary is built and run as a subprocess, killed at
// random instants, and raced by concurrent writers; every trial checks that each file is old
// or new (never mixed), that no appended byte is lost, that undo is exact and that exit codes
// are the documented ones. Add a scenario by appending to scenarios in torture_test.go (or, as
// untrusted_test.go and sqlitewal_test.go do for the SQLite kills, the tampered runs and the
// SQLite writer, from an init function).
package torture
