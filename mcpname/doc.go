// Package mcpname holds the naming schemes of MCP tool names as pure functions: Qwen Code's
// provider-safe normalization (Normalize, NormalizeMcp), its legacy registration (Legacy, with
// middle truncation), the FNV-1a hash, and Classify, which tells what a stored name is
// (naming.md §1). All lengths, slices and character tests count UTF-16 code units, as JavaScript
// does; the *Units variants take the units directly so lone surrogates stay exact.
//
// A leaf (internal/layering TestLeavesImportNothingOfTheModule): every other package may use it.
package mcpname
