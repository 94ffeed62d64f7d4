package kilo

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/tailscale/hujson"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/internal/secret"
	"github.com/sessionfix/sessionfix/mcpconfig"
	permkilo "github.com/sessionfix/sessionfix/permission/kilo"
	"github.com/sessionfix/sessionfix/store"
)

// Server is one entry of a Kilo config's "mcp" object: its launch description (for
// --discover; values are secrets), whether it is enabled, and the file that defines it.
type Server struct {
	agent.Server
	Enabled bool
	File    string
}

// Config is what Kilo's config files say, merged in reading order (ReadConfigs): servers by
// key (a later file's entry replaces an earlier one in its place, as a deep merge of the
// objects does), permission keys likewise, then read as rules (permission/kilo.FromConfig).
type Config struct {
	// Files are the files read, in order.
	Files []string
	// Servers are the "mcp" entries, in merged key order.
	Servers []Server
	// Rules are the merged "permission" object's rules; RuleFile names, per permission key,
	// the file whose value it holds.
	Rules    []permkilo.Rule
	RuleFile map[string]string
}

// Keys are the configured server keys, in order.
func (c *Config) Keys() []string {
	out := make([]string, len(c.Servers))
	for i, s := range c.Servers {
		out[i] = s.Key
	}
	return out
}

// ReadConfigs reads the config files that exist among paths, in order, and merges them. A
// missing file is skipped; a file that cannot be read or parsed, or whose "permission" Kilo
// would refuse, is a problem (warning: that file is left out, the others are read) — its
// text is never quoted. Warnings of the reading (a repeated key, a member of the wrong type)
// are problems too.
func ReadConfigs(paths []string) (*Config, []agent.Problem) {
	c := &Config{RuleFile: map[string]string{}}
	var probs []agent.Problem
	var permKeys []string
	permVals := map[string][]byte{}
	at := map[string]int{}
	for _, p := range paths {
		// Read as any config a user may control (mcpconfig.ReadFile): its servers carry who owns
		// it, and --discover starts none from a file another user owns or can write (issue 30
		// finding 1).
		data, origin, err := mcpconfig.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			probs = append(probs, agent.Problem{Path: p, Severity: store.SevWarning, Reason: "Kilo config not read: " + err.Error()})
			continue
		}
		d, err := mcpconfig.ParseDoc(p, data, mcpconfig.Options{Agent: "Kilo Code CLI"})
		if err != nil {
			probs = append(probs, agent.Problem{Path: p, Severity: store.SevWarning, Reason: "Kilo config not read: " + err.Error()})
			continue
		}
		servers := readServers(d)
		keys, vals, perr := permissionMembers(d)
		for _, w := range d.Warnings {
			probs = append(probs, agent.Problem{Path: p, Severity: store.SevWarning, Reason: w.String()})
		}
		if perr != nil {
			probs = append(probs, agent.Problem{Path: p, Severity: store.SevWarning, Reason: "Kilo config: permission: " + perr.Error() + "; the file's rules are left out"})
			keys = nil
		}
		c.Files = append(c.Files, p)
		for _, s := range servers {
			s.File = p
			s.Origin = origin
			if i, ok := at[s.Key]; ok {
				c.Servers[i] = s
				continue
			}
			at[s.Key] = len(c.Servers)
			c.Servers = append(c.Servers, s)
		}
		for _, k := range keys {
			if _, ok := permVals[k]; !ok {
				permKeys = append(permKeys, k)
			}
			permVals[k] = vals[k]
			c.RuleFile[k] = p
		}
	}
	if len(permKeys) > 0 {
		var b strings.Builder
		b.WriteByte('{')
		for i, k := range permKeys {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%q:%s", k, permVals[k])
		}
		b.WriteByte('}')
		rules, err := permkilo.FromConfig([]byte(b.String()))
		if err != nil {
			probs = append(probs, agent.Problem{Path: c.Files[len(c.Files)-1], Severity: store.SevWarning, Reason: "Kilo config: permission: " + err.Error()})
		}
		c.Rules = rules
	}
	return c, probs
}

// permissionMembers reads the "permission" member: its keys in first-seen order and each
// key's value as standard JSON (a string value "allow" stands for {"*": "allow"}). The
// values are checked with permission/kilo.FromConfig.
func permissionMembers(d *mcpconfig.Doc) ([]string, map[string][]byte, error) {
	v := d.Member(d.Root, "permission", "permission")
	if v == nil {
		return nil, nil, nil
	}
	if s, ok := mcpconfig.Str(v); ok {
		if _, err := permkilo.FromConfig([]byte(fmt.Sprintf("%q", s))); err != nil {
			return nil, nil, err
		}
		return []string{"*"}, map[string][]byte{"*": []byte(fmt.Sprintf("%q", s))}, nil
	}
	o, ok := v.Value.(*hujson.Object)
	if !ok {
		return nil, nil, fmt.Errorf("not a string or an object")
	}
	var keys []string
	vals := map[string][]byte{}
	for i := range o.Members {
		m := &o.Members[i]
		k, _ := mcpconfig.Str(&m.Name)
		b, err := hujson.Standardize(m.Value.Pack())
		if err != nil {
			return nil, nil, fmt.Errorf("%q: %v", k, err)
		}
		if _, seen := vals[k]; !seen {
			keys = append(keys, k)
		}
		vals[k] = b
	}
	one := func(k string) []byte {
		return []byte(fmt.Sprintf("{%q:%s}", k, vals[k]))
	}
	for _, k := range keys {
		if _, err := permkilo.FromConfig(one(k)); err != nil {
			return nil, nil, err
		}
	}
	return keys, vals, nil
}

// readServers reads the "mcp" object: {"type": "local", "command": [argv…], "environment":
// {…}, "enabled": bool} or {"type": "remote", "url": …, "headers": {…}}. An entry that is not
// an object is skipped with a warning; a repeated key keeps its first place and its last value.
func readServers(d *mcpconfig.Doc) []Server {
	o := d.Object(d.Member(d.Root, "mcp", "mcp"), "mcp")
	if o == nil {
		return nil
	}
	var out []Server
	at := map[string]int{}
	for i := range o.Members {
		m := &o.Members[i]
		key, _ := mcpconfig.Str(&m.Name)
		kp := "mcp." + key
		e, ok := m.Value.Value.(*hujson.Object)
		if !ok {
			d.Warn(m.Value.StartOffset, "%s: not an object; ignored", kp)
			continue
		}
		s := Server{Enabled: true}
		s.Key, s.Pos = key, d.PosOf(&m.Name)
		s.Type = d.String(e, "type", kp+".type")
		if b := d.Bool(e, "enabled", kp+".enabled"); b != nil {
			s.Enabled = *b
		}
		switch s.Type {
		case "remote":
			s.URL, s.URLKey = d.String(e, "url", kp+".url"), "url"
			s.Transport = agent.TransportHTTP
			s.Headers = secretMap(d, d.Member(e, "headers", kp+".headers"), kp+".headers")
		default:
			argv := secretList(d, d.Member(e, "command", kp+".command"), kp+".command")
			if len(argv) > 0 {
				s.Command, s.Args = argv[0].Reveal(), argv[1:]
				s.Transport = agent.TransportStdio
			}
			s.Env = secretMap(d, d.Member(e, "environment", kp+".environment"), kp+".environment")
		}
		if j, dup := at[key]; dup {
			d.Warn(m.Name.StartOffset, "%s: server key appears more than once; Kilo uses the last one", kp)
			out[j] = s
			continue
		}
		at[key] = len(out)
		out = append(out, s)
	}
	return out
}

func secretList(d *mcpconfig.Doc, v *hujson.Value, kp string) []secret.Secret {
	if v == nil {
		return nil
	}
	arr, ok := v.Value.(*hujson.Array)
	if !ok {
		d.Warn(v.StartOffset, "%s: not an array; ignored", kp)
		return nil
	}
	var out []secret.Secret
	for i := range arr.Elements {
		s, ok := mcpconfig.Str(&arr.Elements[i])
		if !ok {
			d.Warn(arr.Elements[i].StartOffset, "%s[%d]: not a string; ignored", kp, i)
			continue
		}
		out = append(out, secret.NewSecret(s))
	}
	return out
}

func secretMap(d *mcpconfig.Doc, v *hujson.Value, kp string) map[string]secret.Secret {
	o := d.Object(v, kp)
	if o == nil {
		return nil
	}
	out := map[string]secret.Secret{}
	for i := range o.Members {
		m := &o.Members[i]
		k, _ := mcpconfig.Str(&m.Name)
		s, ok := mcpconfig.Str(&m.Value)
		if !ok {
			d.Warn(m.Value.StartOffset, "%s.%s: not a string; ignored", kp, k)
			continue
		}
		out[k] = secret.NewSecret(s)
	}
	return out
}

// enabledServers are the launch descriptions of the enabled servers (for --discover).
func (c *Config) enabledServers() []agent.Server {
	var out []agent.Server
	for _, s := range c.Servers {
		if s.Enabled && slices.Contains([]agent.Transport{agent.TransportStdio, agent.TransportHTTP}, s.Transport) {
			out = append(out, s.Server)
		}
	}
	return out
}
