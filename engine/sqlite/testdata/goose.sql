-- A goose sessions.db (~/.local/share/goose/sessions/sessions.db) built from the schema of
-- stores.md §3.1 (schema_version, sessions, messages, and the v10+ threads/thread_messages),
-- with content_json in the shapes goose writes: toolRequest (toolCall.value.name),
-- toolResponse, toolConfirmationRequest and actionRequired (toolName). goose names tools
-- <extension>__<tool>. One row carries the known defect of a whole shell command stored as a tool
-- name. Hand-written, not recorded.
CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP);
INSERT INTO schema_version VALUES (10, '2025-09-01 08:00:00');
CREATE TABLE sessions (id TEXT PRIMARY KEY, name TEXT, description TEXT, working_dir TEXT NOT NULL,
  created_at TIMESTAMP, updated_at TIMESTAMP, extension_data TEXT DEFAULT '{}', provider_name TEXT);
CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id),
  role TEXT NOT NULL, content_json TEXT NOT NULL, created_timestamp INTEGER NOT NULL,
  timestamp TIMESTAMP DEFAULT CURRENT_TIMESTAMP, tokens INTEGER, metadata_json TEXT, message_id TEXT);
CREATE INDEX idx_messages_session ON messages(session_id);
CREATE TABLE threads (id TEXT PRIMARY KEY, session_id TEXT NOT NULL REFERENCES sessions(id), created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP);
CREATE TABLE thread_messages (id INTEGER PRIMARY KEY AUTOINCREMENT, thread_id TEXT NOT NULL REFERENCES threads(id),
  role TEXT NOT NULL, content_json TEXT NOT NULL, created_timestamp INTEGER NOT NULL, message_id TEXT);

INSERT INTO sessions VALUES ('20250901_1', 'kinase search', 'Search pubmed', '/home/demo/src/lab', '2025-09-01 08:01:00', '2025-09-01 08:05:00', '{"todo":{"content":""}}', 'openai');
INSERT INTO messages (session_id, role, content_json, created_timestamp, timestamp, tokens, metadata_json, message_id) VALUES
 ('20250901_1', 'user', '[{"type":"text","text":"search pubmed for kinase inhibitors"}]', 1756713660, '2025-09-01 08:01:00', 12, '{"userVisible":true,"agentVisible":true}', 'msg_u1'),
 ('20250901_1', 'assistant', '[{"type":"text","text":"Searching."},{"type":"toolRequest","id":"call_01","toolCall":{"status":"success","value":{"name":"lit__literature.search_pubmed","arguments":{"query":"kinase inhibitors"}}}}]', 1756713661, '2025-09-01 08:01:01', 40, '{"userVisible":true,"agentVisible":true}', 'msg_a1'),
 ('20250901_1', 'user', '[{"type":"toolResponse","id":"call_01","toolResult":{"status":"success","value":[{"type":"text","text":"3 results"}]}}]', 1756713662, '2025-09-01 08:01:02', NULL, '{"userVisible":true,"agentVisible":true}', 'msg_u2'),
 ('20250901_1', 'assistant', '[{"type":"toolConfirmationRequest","id":"call_02","toolName":"foo.bar__deploy.prod","arguments":{"env":"prod"},"prompt":"Allow deploy?"}]', 1756713663, '2025-09-01 08:01:03', NULL, '{"userVisible":true,"agentVisible":false}', 'msg_a2'),
 ('20250901_1', 'assistant', '[{"type":"actionRequired","data":{"actionType":"toolConfirmation","id":"call_02","toolName":"foo.bar__deploy.prod","arguments":{"env":"prod"},"prompt":null}}]', 1756713664, '2025-09-01 08:01:04', NULL, '{"userVisible":true,"agentVisible":false}', 'msg_a3'),
 ('20250901_1', 'assistant', '[{"type":"toolRequest","id":"call_03","toolCall":{"status":"success","value":{"name":"developer__shell","arguments":{"command":"ls -la"}}}},{"type":"toolRequest","id":"call_04","toolCall":{"status":"success","value":{"name":"cd /home/demo/src/lab && grep -rn \"kinase\" . | head -n 20","arguments":{}}}}]', 1756713665, '2025-09-01 08:01:05', 55, '{"userVisible":true,"agentVisible":true}', 'msg_a4'),
 ('20250901_1', 'assistant', '[{"type":"toolRequest","id":"call_05","toolCall":{"status":"error","error":"Tool not found"}},{"type":"text","text":"done: the lookup returned results"}]', 1756713666, '2025-09-01 08:01:06', 20, NULL, 'msg_a5');
INSERT INTO threads VALUES ('thr_1', '20250901_1', '2025-09-01 08:02:00');
INSERT INTO thread_messages (thread_id, role, content_json, created_timestamp, message_id) VALUES
 ('thr_1', 'assistant', '[{"type":"toolRequest","id":"call_01","toolCall":{"status":"success","value":{"name":"lit__literature.search_pubmed","arguments":{"query":"kinase inhibitors"}}}}]', 1756713661, 'msg_a1'),
 ('thr_1', 'assistant', '[{"type":"frontendToolRequest","id":"call_06","toolCall":{"status":"success","value":{"name":"ui__show.chart","arguments":{}}}}]', 1756713667, 'msg_a6');
