package permission

import (
	"slices"
	"strings"

	"github.com/sessionfix/sessionfix/mcpname"
)

// IsMcpAllowAmbiguous is Qwen Code's isMcpAllowAmbiguous (permission-manager.ts,
// qwen-reference.md §2.5): whether an allow rule whose tool name is pattern, already matched
// by the grant predicate, must be refused for the tool with producer identity id because
// another live producer claims the same spelling.
//
// registry is the session registry's MCP identities (getMcpToolIdentities: the
// model-visible and App-only tools, de-duplicated by pair). A nil registry means "no
// registry" and turns the guard off, as does a nil id. An empty registry is equivalent: every
// branch of HasAmbiguousMcpGrant needs some registered tool to refuse.
func IsMcpAllowAmbiguous(pattern string, id *Identity, registry []Identity) bool {
	if id == nil || registry == nil {
		return false
	}
	return HasAmbiguousMcpGrant(pattern, *id, registry)
}

// HasAmbiguousMcpGrant is Qwen Code's hasAmbiguousMcpGrant (qwen-reference.md §2.5). With
// registry the live identities (the tool itself normally among them) it refuses:
//   - the exact registered name only when another tool registers the same name;
//   - never the exact raw identity;
//   - "mcp__<raw key>" when it equals another tool's raw, registered or legacy full name;
//   - any other exact or bare-server spelling claimed by another tool's full names or, for a
//     different server, by "mcp__" + a SEG spelling of its key;
//   - a wildcard whose server boundary is resolved against every live producer: the exact
//     raw whole-server form selects its owner; claims from different underscore runs are
//     ambiguous; an explicit raw server segment selects its owner; a prefix of the tool's own
//     raw name stays broad; otherwise any other producer's spelling sharing the prefix
//     (same-server siblings only through the tool's own spellings, or when no boundary was
//     claimed) refuses it.
func HasAmbiguousMcpGrant(pattern string, id Identity, registry []Identity) bool {
	rawName := id.Raw()
	registeredName := mcpname.NormalizeMcp(rawName)
	var others []Identity
	for _, o := range registry {
		if o != id {
			others = append(others, o)
		}
	}

	if pattern == registeredName {
		for _, o := range others {
			if mcpname.NormalizeMcp(o.Raw()) == pattern {
				return true
			}
		}
		return false
	}
	if pattern == rawName {
		return false
	}
	if pattern == mcpname.Prefix+id.Server {
		for _, o := range others {
			if slices.Contains(spellingsOf(o), pattern) {
				return true
			}
		}
		return false
	}
	prefix, wildcard := strings.CutSuffix(pattern, "*")
	if !wildcard {
		for _, o := range others {
			if slices.Contains(spellingsOf(o), pattern) {
				return true
			}
			if o.Server != id.Server {
				for _, x := range seg(o.Server) {
					if pattern == mcpname.Prefix+x {
						return true
					}
				}
			}
		}
		return false
	}

	type claim struct{ server, boundary string }
	var claims []claim
	for _, o := range registry {
		for _, x := range seg(o.Server) {
			if b := mcpname.Prefix + x + "__"; strings.HasPrefix(prefix, b) {
				claims = append(claims, claim{o.Server, b})
			}
		}
	}
	for _, o := range registry {
		if prefix == mcpname.Prefix+o.Server+"__" {
			return o.Server != id.Server
		}
	}
	runs := map[string]bool{}
	for _, c := range claims {
		runs[strings.TrimRight(c.boundary, "_")] = true
	}
	if len(runs) > 1 {
		return true // boundaries in different separator runs
	}
	explicit, hasExplicit := "", false
	if parts := strings.Split(prefix, "__"); len(parts) > 1 {
		explicit, hasExplicit = parts[1], true
	}
	rawOwner := -1
	for i, c := range claims {
		if hasExplicit && c.server == explicit {
			rawOwner = i
			break
		}
	}
	if rawOwner >= 0 {
		if claims[rawOwner].server != id.Server {
			return true
		}
	} else {
		for _, c := range claims {
			if c.server != id.Server {
				return true
			}
		}
	}
	if strings.HasPrefix(rawName, prefix) {
		return false // a deliberate raw prefix (mcp__foo*) stays broad
	}
	own := spellingsOf(id)
	for _, o := range others {
		for _, s := range spellingsOf(o) {
			if strings.HasPrefix(s, prefix) && (o.Server != id.Server || len(claims) == 0 || slices.Contains(own, s)) {
				return true
			}
		}
	}
	return false
}

// spellingsOf returns the full-name spellings of an identity the guard compares:
// raw, registered (NormalizeMcp of raw) and legacy (Legacy of raw).
func spellingsOf(o Identity) []string {
	raw := o.Raw()
	return []string{raw, mcpname.NormalizeMcp(raw), mcpname.Legacy(raw)}
}
