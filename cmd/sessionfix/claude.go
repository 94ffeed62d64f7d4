package main

import (
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// claudeFlags are the flags scan and fix take for Claude Code sessions.
func claudeFlags() []cli.Flag {
	return []cli.Flag{
		&cli.GenericFlag{Name: "mcp-config", Value: &repeatable{}, Usage: "Claude Code MCP config file ({\"mcpServers\": {…}}, the format of claude --mcp-config and .mcp.json; repeatable): its server keys are raw identities of Claude Code names (with --discover its servers are listed)", TakesFile: true},
		&cli.BoolFlag{Name: "allow-shared", Usage: "Claude Code: also rewrite a stored name whose current spelling is shared by two raw tools (only the first of them can be called; always reported); with fix --rules, also an allow rule whose new spelling is such a name (it then grants both)"},
	}
}

// repeatable is a string flag that may be given several times (each value kept, in order). A
// cli.StringSliceFlag would also split values at commas, and a path may hold one.
type repeatable struct{ values []string }

func (r *repeatable) Set(v string) error { r.values = append(r.values, v); return nil }
func (r *repeatable) String() string     { return strings.Join(r.values, ", ") }

// repeated returns the values of a repeatable flag.
func repeated(c *cli.Context, name string) []string {
	if r, ok := c.Generic(name).(*repeatable); ok && r != nil {
		return slices.Clone(r.values)
	}
	return nil
}
