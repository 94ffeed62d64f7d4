// Package codex knows the OpenAI Codex CLI home directory and its config.toml (schemes.md
// §A.6, §A.8): where rollouts live ($CODEX_HOME, else ~/.codex; sessions/ and
// archived_sessions/), which MCP servers are configured ([mcp_servers.<KEY>]), which of their
// tools Codex registers (enabled, enabled_tools, disabled_tools) and how it names them today
// (non_prefixed_mcp_tool_servers, [features] non_prefixed_mcp_tool_names → the E6 allocator
// parameters of mcpname).
//
// The rollout files themselves are read and rewritten by engine/jsonl (profile CodexRollout).
// This package never writes anything and never prints a configuration value: server env,
// headers and bearer-token settings are secrets.
package codex
