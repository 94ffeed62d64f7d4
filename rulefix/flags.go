package rulefix

import (
	"slices"
	"strings"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/internal/usage"
)

// Agent is the agent whose rule migration fix --rules runs with --agent id ("": Default), or
// a *usage.Error naming the rules migrated (For).
func Agent(id string) (agent.Agent, error) {
	a, names := For(id)
	if a != nil || id == "" {
		return a, nil
	}
	return nil, usage.Errorf("--rules migrates %s; --agent %s has no rule migration (nothing was changed)", andList(names), id)
}

// CheckFlags refuses, before anything is read, a flag of fix given (isSet) that does not go
// with --rules of a (NotTaken: it has no plan file, no --fail-on and reads no MCP config)
// when rules is set, or a migration's own flag (OnlyFlags) without --rules; a *usage.Error
// naming the migrations that declare it (Declaring).
func CheckFlags(a agent.Agent, rules bool, isSet func(string) bool) error {
	if !rules {
		for _, f := range OnlyFlags() {
			if isSet(f) {
				return usage.Errorf("--%s goes with --rules (%s)", f, andList(Declaring(f)))
			}
		}
		return nil
	}
	for _, f := range NotTaken(a) {
		if !isSet(f) {
			continue
		}
		if slices.Contains(OnlyFlags(), f) {
			return usage.Errorf("--%s does not go with --rules of %s (it is a flag of %s; nothing was changed)", f, all.RuleFixOf(a).Rules, andList(Declaring(f)))
		}
		return usage.Errorf("--%s does not go with --rules (%s; nothing was changed)", f, all.RuleFixOf(a).What)
	}
	return nil
}

// CheckOptions refuses a fix --rules run of a without --inventory (the raw server keys and tool
// names the rules are about), or with a naming flag or agent option it does not take
// (Refused; naming: --discover, --keep-truncated or --rewrite-lossy given): a *usage.Error.
func CheckOptions(a agent.Agent, inventory string, naming bool, vals agent.Values) error {
	refused, refusedSet := Refused(a, naming, vals)
	switch {
	case inventory == "":
		return usage.Errorf("fix --rules needs --inventory FILE (the raw server keys and tool names the rules are about)")
	case refusedSet:
		return usage.Errorf("--rules migrates %s only: %s do not go with it", all.RuleFixOf(a).Rules, andList(refused))
	}
	return nil
}

// andList is "a, b and c".
func andList(parts []string) string {
	if len(parts) < 2 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}
