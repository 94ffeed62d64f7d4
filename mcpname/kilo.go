package mcpname

// Kilo Code's CLI (an opencode fork; 7.0.33 and 7.7.7 recorded, fixtures/kilo-real/README.md
// "Naming") names an MCP tool KiloSanitize(server) + "_" + KiloSanitize(tool): no hash, no
// length cap, so a long tool gives a name over 64 that strict providers reject, and raw tools
// that sanitize alike share one name (the later registration wins).

// KiloName is the model-facing name Kilo CLI 7.x gives a tool of a server (7.0.33 source:
// sanitizedClientName + "_" + sanitizedToolName).
func KiloName(server, tool string) string { return KiloSanitize(server) + "_" + KiloSanitize(tool) }

// KiloSanitize is Kilo's (and opencode's) s.replace(/[^a-zA-Z0-9_-]/g, "_"): each UTF-16
// unit outside [A-Za-z0-9_-] becomes "_" ("搜索文献" → "____", an emoji → "__").
func KiloSanitize(s string) string { return ProviderSubstitute(s) }
