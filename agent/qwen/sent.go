package qwen

import (
	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/mcpname"
)

// SentAs is what the Qwen Code release that resumes the sessions sends for a stored call name
// (check --qwen-version RELEASE): from mcpname.QwenNormalizingRelease on, its OpenAI- and
// Anthropic-compatible converters send normalizeMcp of every stored MCP call name
// (recorded with 0.24.4 against fake_openai.py STRICT=1: see mcpname.QwenNormalizingRelease); its
// requests to Google's API are not normalized, so that provider receives the stored name. Earlier releases send the
// stored bytes (nil Sending). A release that does not parse is an error.
func SentAs(release string) (*agent.Sending, error) {
	n, err := mcpname.QwenSendsNormalized(release)
	if err != nil || !n {
		return nil, err
	}
	return &agent.Sending{Sent: sentNormalized, Verbatim: []string{"gemini"}}, nil
}

// sentNormalized is normalizeMcp of an mcp__ name (of its exact units when it holds a lone
// surrogate); ok is false when the name is sent as stored.
func sentNormalized(name string, units []uint16) (string, bool) {
	if !mcpname.HasPrefix(name) {
		return "", false
	}
	sent := mcpname.NormalizeMcp(name)
	if units != nil {
		sent = mcpname.NormalizeMcpUnits(units)
	}
	if sent != name || units != nil {
		return sent, true
	}
	return "", false
}
