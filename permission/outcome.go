package permission

// Mode is Qwen Code's approval mode (ApprovalMode).
type Mode string

// Approval modes. Only default and yolo are exercised by the real-CLI matrix
// (qwen-reference.md §3.1); plan and auto-edit follow §2.2.
const (
	ModeDefault  Mode = "default"
	ModeYolo     Mode = "yolo"
	ModePlan     Mode = "plan"
	ModeAutoEdit Mode = "auto-edit"
)

// Verdict is what happens to one MCP tool call (qwen-reference.md §3.1).
type Verdict string

// Verdicts of the real-CLI matrix.
const (
	// VerdictRan: the MCP server executed the call.
	VerdictRan Verdict = "ran"
	// VerdictAsk: a confirmation was required (a headless run declines it).
	VerdictAsk Verdict = "ask"
	// VerdictBlock: denied by a rule, disabled, or hidden from the subagent.
	VerdictBlock Verdict = "block"
)

// Reason says which layer produced a verdict.
type Reason string

// Reasons, in the order the layers are checked.
const (
	// ReasonDisabled: the caller removed the tool at registration (tools.disabled,
	// includeTools/excludeTools, mcp.allowed/excluded); see Call.Disabled.
	ReasonDisabled Reason = "disabled"
	// ReasonDisallowed: a subagent disallowedTools entry hides the tool.
	ReasonDisallowed Reason = "disallowed"
	// ReasonDenyRule: a deny rule matched (L1 registration status and L5 both block).
	ReasonDenyRule Reason = "deny-rule"
	// ReasonYolo: YOLO mode ran a call that would otherwise have needed confirmation.
	ReasonYolo Reason = "yolo"
	// ReasonAllowRule: an allow rule granted the call.
	ReasonAllowRule Reason = "allow-rule"
	// ReasonAskRule: an ask rule required confirmation.
	ReasonAskRule Reason = "ask-rule"
	// ReasonTrusted: no rule applied and the trusted server's default permission is allow.
	ReasonTrusted Reason = "trusted"
	// ReasonDefault: no rule applied and the default permission is ask.
	ReasonDefault Reason = "default"
)

// DefaultPermission is the L3 default permission of an MCP tool invocation
// (qwen-reference.md §2.2): allow when its server has "trust": true AND the workspace folder
// is trusted (or folder trust is disabled, as in the §3.1 runs), else ask. trusted is that
// conjunction, computed by the caller.
func DefaultPermission(trusted bool) Decision {
	if trusted {
		return DecisionAllow
	}
	return DecisionAsk
}

// Call is everything Decide needs about one MCP tool call.
type Call struct {
	// Context is the permission-check context; real calls use Tool.Context(ContextProducer).
	Context Context
	// Trusted is "server trust: true and folder trusted" (DefaultPermission).
	Trusted bool
	// Mode is the approval mode; "" is treated as ModeDefault.
	Mode Mode
	// Rules are the session's parsed allow/ask/deny lists.
	Rules Rules
	// Registry is the live session registry's MCP identities (nil = no registry, guard off).
	// Servers declared only in a subagent's own mcpServers are not in it
	// (qwen-reference.md §2.6, R26-1).
	Registry []Identity
	// Disabled says the tool never reached the registry: IsToolDisabled, a ToolFilter or
	// ServerEnabled removed it. The caller computes it because those inputs are per server.
	Disabled bool
	// DisallowedTools is the calling subagent's disallowedTools list (nil or empty outside a
	// subagent or when it has none).
	DisallowedTools []string
}

// Outcome is the result of Decide.
type Outcome struct {
	// Verdict is ran, ask or block.
	Verdict Verdict
	// Reason is the layer that decided.
	Reason Reason
	// Evaluation is the rule evaluation (zero when an L1 gate decided first).
	Evaluation Evaluation
	// Final is the permission after L3/L4: the rule decision, or DefaultPermission when no
	// rule applied ("" when an L1 gate decided first).
	Final Decision
}

// Decide runs the layers of qwen-reference.md §2.2 for one MCP call and returns the verdict
// of §3.1:
//
//	L1  Disabled → block; a disallowedTools entry (MatchesAgentToolBlocklist) → block;
//	    Evaluate == deny → block (registration status "disabled" / deny message).
//	L3  default := DefaultPermission(Trusted).
//	L4  final := Evaluate's decision unless default, else default.
//	L5  yolo → ran; final allow → ran; final ask → ask in default and auto-edit mode
//	    (AUTO_EDIT approves only edit/info confirmations, MCP ones are type "mcp"), block in
//	    plan mode (PLAN blocks confirmations that are not type "info").
//
// Not modelled: invocation.requiresUserInteraction (false for MCP tools), the
// ask_user_question exception of YOLO, and whether YOLO honours an explicit ask rule, which
// qwen-reference.md §6 leaves unverified; YOLO here runs everything not blocked, as
// permissionFlow.needsConfirmation reads.
func Decide(c Call) Outcome {
	if c.Disabled {
		return Outcome{Verdict: VerdictBlock, Reason: ReasonDisabled}
	}
	if MatchesAgentToolBlocklist(c.DisallowedTools, c.Context) {
		return Outcome{Verdict: VerdictBlock, Reason: ReasonDisallowed}
	}
	ev := Evaluate(c.Rules, c.Context, c.Registry)
	if ev.Decision == DecisionDeny {
		return Outcome{Verdict: VerdictBlock, Reason: ReasonDenyRule, Evaluation: ev, Final: DecisionDeny}
	}
	final := DefaultPermission(c.Trusted)
	reason := ReasonDefault
	if c.Trusted {
		reason = ReasonTrusted
	}
	switch ev.Decision {
	case DecisionAllow:
		final, reason = DecisionAllow, ReasonAllowRule
	case DecisionAsk:
		final, reason = DecisionAsk, ReasonAskRule
	}
	out := Outcome{Reason: reason, Evaluation: ev, Final: final}
	switch {
	case final == DecisionAllow:
		out.Verdict = VerdictRan
	case c.Mode == ModeYolo:
		out.Verdict, out.Reason = VerdictRan, ReasonYolo
	case c.Mode == ModePlan:
		out.Verdict = VerdictBlock
	default:
		out.Verdict = VerdictAsk
	}
	return out
}
