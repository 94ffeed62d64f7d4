package rewrite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
)

// PlanMember declares one agent option's member of a plan file's "options": its room's
// agent.Option (Plan, Bool, Repeatable, File, PlanAfter; pipeline builds the list from
// agent/all). It says how the value is written, where, and how ReadPlanFile checks it.
type PlanMember struct {
	// Key is the member's name ("acme_config"); it is none of PlanGenericMembers.
	Key string
	// Bool: the member is true or absent (a false is read as not given); Repeatable: an array
	// of strings, at most MaxPlanValues; neither: one string, absent when empty.
	Bool, Repeatable bool
	// File: every value is a path, checked absolute and clean.
	File bool
	// After is the generic member (PlanGenericMembers) the member is written right after, so
	// a plan keeps the byte layout older releases wrote; "" or none of them: after all of
	// them. Members with the same After are written in the order of the declared list.
	After string
}

// PlanValue is one agent option a plan records: its member and its values (a bool set is
// ["true"], a single-valued option its one value).
type PlanValue struct {
	PlanMember
	Values []string
}

// set reports whether the value is written (a bool true, a non-empty string or list).
func (v PlanValue) set() bool {
	switch {
	case len(v.Values) == 0:
		return false
	case v.Bool:
		return v.Values[len(v.Values)-1] == "true"
	case v.Repeatable:
		return true
	}
	return v.Values[len(v.Values)-1] != ""
}

// PlanOptionError is a member of a plan's "options" that does not read: given twice, of the
// wrong JSON type, unknown, or (CheckAgents) a value that is not allowed. Member is its name
// ("" for the object itself), Index the position of a list's value (-1: the member).
type PlanOptionError struct {
	Member string
	Index  int
	Reason string
}

func (e *PlanOptionError) Error() string { return "options" + e.at() + ": " + e.Reason }

// at is where in "options" e is: "", ".member" or ".member[i]".
func (e *PlanOptionError) at() string {
	switch {
	case e.Member == "":
		return ""
	case e.Index >= 0:
		return fmt.Sprintf(".%s[%d]", e.Member, e.Index)
	}
	return "." + e.Member
}

// PlanGenericMembers are the members of "options" every plan has (PlanOptions' fields), in the
// order MarshalJSON writes them.
func PlanGenericMembers() []string {
	return []string{"keep_truncated", "rewrite_lossy", "inventory", "agent", "discover", "profile", "busy_timeout"}
}

// generic are PlanOptions' fields by member, in PlanGenericMembers' order (a pointer to a bool
// or a string field).
func (o *PlanOptions) generic() []any {
	return []any{&o.KeepTruncated, &o.RewriteLossy, &o.Inventory, &o.Agent, &o.Discover, &o.Profile, &o.BusyTimeout}
}

// MarshalJSON writes the generic members (false and "" left out) in PlanGenericMembers'
// order, each agent member right after its After, the agent members with no known After
// last; no HTML escaping (a path's & stays &).
func (o PlanOptions) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	n := 0
	member := func(key string, v any) error {
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		if err := enc.Encode(key); err != nil {
			return err
		}
		b.Truncate(b.Len() - 1) // Encode's newline
		b.WriteByte(':')
		if err := enc.Encode(v); err != nil {
			return err
		}
		b.Truncate(b.Len() - 1)
		return nil
	}
	agents := func(at func(after string) bool) error {
		for _, v := range o.Agents {
			if !v.set() || !at(v.After) {
				continue
			}
			var val any = v.Values[len(v.Values)-1]
			switch {
			case v.Bool:
				val = true
			case v.Repeatable:
				val = v.Values
			}
			if err := member(v.Key, val); err != nil {
				return err
			}
		}
		return nil
	}
	b.WriteByte('{')
	keys := PlanGenericMembers()
	for i, f := range o.generic() {
		switch f := f.(type) {
		case *bool:
			if *f {
				if err := member(keys[i], true); err != nil {
					return nil, err
				}
			}
		case *string:
			if *f != "" {
				if err := member(keys[i], *f); err != nil {
					return nil, err
				}
			}
		}
		if err := agents(func(after string) bool { return after == keys[i] }); err != nil {
			return nil, err
		}
	}
	if err := agents(func(after string) bool { return !slices.Contains(keys, after) }); err != nil {
		return nil, err
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads an "options" object strictly: every member once (else a
// *PlanOptionError "given twice"), a generic member of its field's JSON type (a boolean, a
// string; null leaves it unset), any other member kept in Agents as written: a boolean (Bool),
// a string, or an array of strings (Repeatable); a member of another type is an error. Which
// agent members are known is ReadPlanFile's check (CheckAgents).
func (o *PlanOptions) UnmarshalJSON(b []byte) error {
	*o = PlanOptions{}
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return &PlanOptionError{Index: -1, Reason: "not an object"}
	}
	keys := PlanGenericMembers()
	fields := o.generic()
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		if seen[key] {
			return &PlanOptionError{Member: key, Index: -1, Reason: "given twice"}
		}
		seen[key] = true
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		bad := func(want string) error {
			return &PlanOptionError{Member: key, Index: -1, Reason: "not " + want + ": " + jsonKind(raw)}
		}
		if i := slices.Index(keys, key); i >= 0 {
			switch f := fields[i].(type) {
			case *bool:
				if json.Unmarshal(raw, f) != nil {
					return bad("a boolean")
				}
			case *string:
				if json.Unmarshal(raw, f) != nil {
					return bad("a string")
				}
			}
			continue
		}
		v := PlanValue{PlanMember: PlanMember{Key: key}}
		var flag bool
		var one string
		switch {
		case json.Unmarshal(raw, &flag) == nil && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")):
			v.Bool = true
			if flag {
				v.Values = []string{"true"}
			}
		case json.Unmarshal(raw, &one) == nil && bytes.HasPrefix(bytes.TrimSpace(raw), []byte(`"`)):
			v.Values = []string{one}
		case bytes.HasPrefix(bytes.TrimSpace(raw), []byte("[")):
			v.Repeatable = true
			if json.Unmarshal(raw, &v.Values) != nil {
				return bad("a list of strings")
			}
		default:
			return bad("a boolean, a string or a list of strings")
		}
		o.Agents = append(o.Agents, v)
	}
	if _, err := dec.Token(); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return &PlanOptionError{Index: -1, Reason: "data after the object"}
	}
	return nil
}

// jsonKind names the JSON type of raw for an error ("a string", "null", …).
func jsonKind(raw json.RawMessage) string {
	s := bytes.TrimSpace(raw)
	if len(s) == 0 {
		return "nothing"
	}
	switch s[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// CheckAgents checks the agent members read (UnmarshalJSON) against the declared members:
// each one declared, of its kind (a boolean, a string, a list of strings), at most
// MaxPlanValues values, every File value an absolute clean path; then gives each its
// declaration (File, After) and puts them in the declared order, so the options marshal to
// the bytes they were read from. The error says which member (and value) and why.
func (o *PlanOptions) CheckAgents(members []PlanMember) *PlanOptionError {
	for i, v := range o.Agents {
		at := slices.IndexFunc(members, func(m PlanMember) bool { return m.Key == v.Key })
		if at < 0 {
			return &PlanOptionError{Member: v.Key, Index: -1, Reason: "unknown member (no option of sessionfix records it)"}
		}
		m := members[at]
		kind := func(m PlanMember) string {
			switch {
			case m.Bool:
				return "a boolean"
			case m.Repeatable:
				return "a list of strings"
			}
			return "a string"
		}
		if m.Bool != v.Bool || m.Repeatable != v.Repeatable {
			return &PlanOptionError{Member: v.Key, Index: -1, Reason: "not " + kind(m) + ": " + kind(v.PlanMember)}
		}
		if len(v.Values) > MaxPlanValues {
			what := "values"
			if m.File {
				what = "files"
			}
			return &PlanOptionError{Member: v.Key, Index: -1, Reason: fmt.Sprintf("more than %d %s", MaxPlanValues, what)}
		}
		for j, f := range v.Values {
			if !m.File || !m.Repeatable && f == "" {
				continue
			}
			if err := checkPlanPath(f); err != nil {
				idx := j
				if !m.Repeatable {
					idx = -1
				}
				return &PlanOptionError{Member: v.Key, Index: idx, Reason: err.Error()}
			}
		}
		o.Agents[i].PlanMember = m
	}
	slices.SortStableFunc(o.Agents, func(a, b PlanValue) int {
		return slices.IndexFunc(members, func(m PlanMember) bool { return m.Key == a.Key }) -
			slices.IndexFunc(members, func(m PlanMember) bool { return m.Key == b.Key })
	})
	return nil
}
