package main

// sqliteRows measures scan and fix --apply of an opencode database of parts parts against the
// sqlite3 shell. Owned by helper sqlitefast (see /work/notes/jsonlfast.md for the Row format);
// a stub until then.
func sqliteRows(cfg config, parts int64) ([]Row, error) {
	_ = cfg
	_ = parts
	return nil, nil
}
