-- A crush database (.crush/crush.db) built from the schema of crush's migrations as summarized
-- in stores.md §3.1 (sessions, messages with later provider/is_summary_message columns, files,
-- and the triggers that keep counts and bump updated_at), with rows in the shapes crush writes.
-- MCP tools are named mcp_<server>_<tool>; older crush versions did not sanitize them.
-- Hand-written, not recorded.
PRAGMA foreign_keys=ON;
CREATE TABLE goose_db_version (id INTEGER PRIMARY KEY AUTOINCREMENT, version_id INTEGER NOT NULL, is_applied INTEGER NOT NULL, tstamp TIMESTAMP DEFAULT (datetime('now')));
INSERT INTO goose_db_version (version_id, is_applied, tstamp) VALUES (0, 1, '2025-06-01 10:00:00');
INSERT INTO goose_db_version (version_id, is_applied, tstamp) VALUES (20250424200609, 1, '2025-06-01 10:00:00');
INSERT INTO goose_db_version (version_id, is_applied, tstamp) VALUES (20250515105448, 1, '2025-06-01 10:00:00');
CREATE TABLE sessions (id TEXT PRIMARY KEY, parent_session_id TEXT, title TEXT NOT NULL,
  message_count INTEGER NOT NULL DEFAULT 0 CHECK (message_count >= 0), prompt_tokens INTEGER NOT NULL DEFAULT 0,
  completion_tokens INTEGER NOT NULL DEFAULT 0, cost REAL NOT NULL DEFAULT 0.0,
  updated_at INTEGER NOT NULL, created_at INTEGER NOT NULL, summary_message_id TEXT);
CREATE TABLE files (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, path TEXT NOT NULL, content TEXT NOT NULL,
  version INTEGER NOT NULL DEFAULT 0, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
  FOREIGN KEY (session_id) REFERENCES sessions (id) ON DELETE CASCADE, UNIQUE(path, session_id, version));
CREATE TABLE messages (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, role TEXT NOT NULL,
  parts TEXT NOT NULL DEFAULT '[]', model TEXT, created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL, finished_at INTEGER, provider TEXT, is_summary_message INTEGER DEFAULT 0 NOT NULL,
  FOREIGN KEY (session_id) REFERENCES sessions (id) ON DELETE CASCADE);
CREATE INDEX idx_files_session_id ON files (session_id);
CREATE INDEX idx_files_path ON files (path);
CREATE INDEX idx_messages_session_id ON messages (session_id);
CREATE TRIGGER update_sessions_updated_at AFTER UPDATE ON sessions BEGIN
  UPDATE sessions SET updated_at = strftime('%s', 'now') WHERE id = new.id; END;
CREATE TRIGGER update_files_updated_at AFTER UPDATE ON files BEGIN
  UPDATE files SET updated_at = strftime('%s', 'now') WHERE id = new.id; END;
CREATE TRIGGER update_messages_updated_at AFTER UPDATE ON messages BEGIN
  UPDATE messages SET updated_at = strftime('%s', 'now') WHERE id = new.id; END;
CREATE TRIGGER update_session_message_count_on_insert AFTER INSERT ON messages BEGIN
  UPDATE sessions SET message_count = message_count + 1 WHERE id = new.session_id; END;
CREATE TRIGGER update_session_message_count_on_delete AFTER DELETE ON messages BEGIN
  UPDATE sessions SET message_count = message_count - 1 WHERE id = old.session_id; END;

INSERT INTO sessions (id, title, prompt_tokens, completion_tokens, cost, updated_at, created_at)
  VALUES ('8d7e5a2c-0b1f-4c1e-9e57-4f6c1f0a9b11', 'Search pubmed for kinase inhibitors', 1200, 340, 0.0123, 1748772000, 1748771900);
INSERT INTO sessions (id, title, updated_at, created_at)
  VALUES ('2b1c7d9e-5a3f-4e2d-8c6b-0a9f8e7d6c54', 'Deploy', 1748775000, 1748774900);
INSERT INTO messages (id, session_id, role, parts, model, created_at, updated_at, finished_at, provider) VALUES
 ('m-0001', '8d7e5a2c-0b1f-4c1e-9e57-4f6c1f0a9b11', 'user', '[{"type":"text","data":{"text":"search pubmed for kinase inhibitors"}}]', NULL, 1748771900, 1748771900, NULL, NULL),
 ('m-0002', '8d7e5a2c-0b1f-4c1e-9e57-4f6c1f0a9b11', 'assistant', '[{"type":"text","data":{"text":"Searching."}},{"type":"tool_call","data":{"id":"call_01","name":"mcp_lit_literature.search_pubmed","input":"{\"query\":\"kinase inhibitors\"}","type":"function","finished":true}},{"type":"tool_call","data":{"id":"call_02","name":"mcp_lit_get+data","input":"{}","type":"function","finished":true}},{"type":"finish","data":{"reason":"tool_use","time":1748771950}}]', 'gpt-4.1', 1748771940, 1748771950, 1748771950, 'openai'),
 ('m-0003', '8d7e5a2c-0b1f-4c1e-9e57-4f6c1f0a9b11', 'tool', '[{"type":"tool_result","data":{"tool_call_id":"call_01","name":"mcp_lit_literature.search_pubmed","content":"3 results for {\"query\": \"kinase inhibitors\"}","metadata":"","is_error":false}},{"type":"tool_result","data":{"tool_call_id":"call_02","name":"mcp_lit_get+data","content":"ok","metadata":"","is_error":false}}]', NULL, 1748771951, 1748771951, NULL, NULL),
 ('m-0004', '8d7e5a2c-0b1f-4c1e-9e57-4f6c1f0a9b11', 'assistant', '[{"type":"tool_call","data":{"id":"call_03","name":"view","input":"{\"file_path\":\"README.md\"}","type":"function","finished":true}},{"type":"tool_call","data":{"id":"call_04","name":"mcp_lit_ok_tool","input":"{}","type":"function","finished":true}}]', 'gpt-4.1', 1748771960, 1748771961, 1748771961, 'openai'),
 ('m-0005', '8d7e5a2c-0b1f-4c1e-9e57-4f6c1f0a9b11', 'tool', '[{"type":"tool_result","data":{"tool_call_id":"call_03","name":"view","content":"# README","metadata":"","is_error":false}},{"type":"tool_result","data":{"tool_call_id":"call_04","name":"mcp_lit_ok_tool","content":"ok","metadata":"","is_error":false}}]', NULL, 1748771962, 1748771962, NULL, NULL),
 ('m-0006', '2b1c7d9e-5a3f-4e2d-8c6b-0a9f8e7d6c54', 'assistant', '[{"type":"reasoning","data":{"thinking":"deploy it","signature":""}},{"type":"tool_call","data":{"id":"call_01","name":"mcp_foo.bar_deploy.prod","input":"{\"env\":\"prod\"}","type":"function","finished":true}}]', 'claude-sonnet-4', 1748774950, 1748774960, 1748774960, 'anthropic'),
 ('m-0007', '2b1c7d9e-5a3f-4e2d-8c6b-0a9f8e7d6c54', 'tool', '[{"type":"tool_result","data":{"tool_call_id":"call_01","name":"mcp_foo.bar_deploy.prod","content":"deployed","metadata":"","is_error":false}}]', NULL, 1748774961, 1748774961, NULL, NULL);
INSERT INTO files (id, session_id, path, content, version, created_at, updated_at)
  VALUES ('f-0001', '8d7e5a2c-0b1f-4c1e-9e57-4f6c1f0a9b11', '/home/demo/src/lab/README.md', '# README', 0, 1748771962, 1748771962);
