// Package opencodebench builds large opencode databases for the SQLite benchmarks (make bench,
// BenchmarkScan1M and BenchmarkApply1M): the real opencode 1.18.33 schema, filled with sessions,
// messages, parts and message.part.updated events in the shapes of fixtures/opencode-real, where
// one tool part in ten carries a legacy name (dotted, over-long or non-ASCII) also copied in its
// events.
package opencodebench

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"strings"

	"github.com/sessionfix/sessionfix/engine/sqlite/sqlitetest"
)

//go:embed schema.sql
var schema string

// Shape of the generated history: per assistant message a step-start, a text, ToolsPerMessage
// tool parts and a step-finish; two message.part.updated events per tool part.
const (
	PartsPerSession = 240
	ToolsPerMessage = 3
	partsPerMessage = ToolsPerMessage + 3
	eventsPerTool   = 2
	legacyEvery     = 10 // one tool part in legacyEvery has a legacy name
)

// toolNames are the names opencode 1.18 wrote for the fixture's MCP tools (provider-safe).
var toolNames = []string{"foo_bar_deploy_prod", "foo_bar_get_data", "lit_____", "lit_get_data",
	"lit_get_data_for_a_specific_location_and_date_range_extended", "lit_literature_search_pubmed", "lit_ok_tool", "bash", "read", "edit"}

// legacyNames are names older versions stored unsanitized: a provider rejects each.
var legacyNames = []string{"lit_literature.search_pubmed", "foo.bar_deploy.prod",
	"lit_get_data_for_a_specific_location_and_date_range_extended_with_history", "lit_搜索文献"}

// Stats describes a generated database.
type Stats struct {
	Sessions, Messages, Parts, Events int
	// Legacy counts the name sites (parts and events) holding a legacy name.
	Legacy int
	// Bytes is the size of the database file.
	Bytes int64
}

// Generate creates the opencode database at path (it must not exist) with at least parts rows in
// part (rounded up to whole messages), in WAL mode. It is deterministic: the same parts give the
// same content.
func Generate(ctx context.Context, path string, parts int) (Stats, error) {
	var st Stats
	if parts <= 0 {
		return st, fmt.Errorf("generate %s: parts must be positive", path)
	}
	if err := sqlitetest.BuildFromSQL(ctx, path, true, strings.NewReader(schema+`
INSERT INTO project VALUES('global','/home/demo/src/lab','git',NULL,NULL,NULL,NULL,1796064468516,1796064480677,NULL,'[]',NULL);`)); err != nil {
		return st, err
	}
	messages := (parts + partsPerMessage - 1) / partsPerMessage
	msgsPerSession := PartsPerSession / partsPerMessage
	sessions := (messages + msgsPerSession - 1) / msgsPerSession
	st.Sessions, st.Messages, st.Parts = sessions, messages, messages*partsPerMessage
	const t0 = int64(1796064468516)

	err := sqlitetest.InsertRows(ctx, path, "session", []string{"id", "project_id", "slug", "directory", "path", "title", "version",
		"tokens_input", "tokens_output", "permission", "agent", "time_created", "time_updated"}, func(emit func(...any) error) error {
		for s := 0; s < sessions; s++ {
			if err := emit(sessionID(s), "global", fmt.Sprintf("bench-%d", s), "/home/demo/src/lab", "", "Done: the lookup returned results.",
				"1.18.33", 10, 5, `[{"permission":"question","pattern":"*","action":"deny"},{"permission":"plan_enter","pattern":"*","action":"deny"}]`,
				"build", t0+int64(s)*1000, t0+int64(s)*1000+999); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return st, err
	}
	err = sqlitetest.InsertRows(ctx, path, "message", []string{"id", "session_id", "time_created", "time_updated", "data"}, func(emit func(...any) error) error {
		for m := 0; m < messages; m++ {
			if err := emit(messageID(m), sessionID(m/msgsPerSession), t0+int64(m), t0+int64(m)+1,
				`{"parentID":"msg_22dc9105f0018iae0LysztquUS","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/home/demo/src/lab","root":"/home/demo/src/lab"},"cost":0,"tokens":{"total":15,"input":10,"output":5,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"fake-model","providerID":"fake","time":{"created":1796064482611,"completed":1796064484323},"finish":"tool-calls"}`); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return st, err
	}
	// tool returns the name of tool part k (0-based among tool parts) and whether it is legacy.
	tool := func(k int) (string, bool) {
		if k%legacyEvery == legacyEvery-1 {
			return legacyNames[(k/legacyEvery)%len(legacyNames)], true
		}
		return toolNames[k%len(toolNames)], false
	}
	err = sqlitetest.InsertRows(ctx, path, "part", []string{"id", "message_id", "session_id", "time_created", "time_updated", "data"}, func(emit func(...any) error) error {
		for m := 0; m < messages; m++ {
			ses := sessionID(m / msgsPerSession)
			for j := 0; j < partsPerMessage; j++ {
				p := m*partsPerMessage + j
				var data string
				switch j {
				case 0:
					data = `{"snapshot":"4b825dc642cb6eb9a060e54bf8d69288fbee4904","type":"step-start"}`
				case 1:
					data = fmt.Sprintf(`{"type":"text","text":"Searching the literature, step %d.","time":{"start":%d,"end":%d}}`, p, t0+int64(p), t0+int64(p)+7)
				case partsPerMessage - 1:
					data = `{"reason":"tool-calls","snapshot":"4b825dc642cb6eb9a060e54bf8d69288fbee4904","type":"step-finish","tokens":{"total":15,"input":10,"output":5,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0}`
				default:
					k := m*ToolsPerMessage + j - 2
					name, legacy := tool(k)
					if legacy {
						st.Legacy += 1 + eventsPerTool
					}
					data = toolPart(name, k, "completed", t0+int64(p))
				}
				if err := emit(partID(p), messageID(m), ses, t0+int64(p), t0+int64(p)+3, data); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return st, err
	}
	seqs := map[int]int{}
	err = sqlitetest.InsertRows(ctx, path, "event", []string{"id", "aggregate_id", "seq", "type", "data"}, func(emit func(...any) error) error {
		for m := 0; m < messages; m++ {
			s := m / msgsPerSession
			for j := 0; j < ToolsPerMessage; j++ {
				k := m*ToolsPerMessage + j
				name, _ := tool(k)
				p := m*partsPerMessage + 2 + j
				for e, status := range []string{"running", "completed"} {
					part := strings.Replace(toolPart(name, k, status, t0+int64(p)), "{", fmt.Sprintf(`{"id":"%s","sessionID":"%s","messageID":"%s",`, partID(p), sessionID(s), messageID(m)), 1)
					data := fmt.Sprintf(`{"sessionID":"%s","part":%s,"time":%d}`, sessionID(s), part, t0+int64(p)+int64(e))
					if err := emit(fmt.Sprintf("evt_%026d", k*eventsPerTool+e), sessionID(s), seqs[s], "message.part.updated.1", data); err != nil {
						return err
					}
					seqs[s]++
					st.Events++
				}
			}
		}
		return nil
	})
	if err != nil {
		return st, err
	}
	err = sqlitetest.InsertRows(ctx, path, "event_sequence", []string{"aggregate_id", "seq", "owner_id"}, func(emit func(...any) error) error {
		for s := 0; s < sessions; s++ {
			if err := emit(sessionID(s), seqs[s], nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return st, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return st, err
	}
	st.Bytes = fi.Size()
	if w, err := os.Stat(path + "-wal"); err == nil {
		st.Bytes += w.Size()
	}
	return st, nil
}

func sessionID(s int) string { return fmt.Sprintf("ses_bench%021d", s) }
func messageID(m int) string { return fmt.Sprintf("msg_bench%021d", m) }
func partID(p int) string    { return fmt.Sprintf("prt_bench%021d", p) }

// toolPart is the data of a tool part as opencode 1.18 writes it.
func toolPart(name string, k int, status string, start int64) string {
	return fmt.Sprintf(`{"type":"tool","tool":"%s","callID":"call_%010x","state":{"status":"%s","input":{"query":"kinase inhibitors %d"},"output":"3 results for {\"query\": \"kinase inhibitors\"}","metadata":{"truncated":false},"title":"","time":{"start":%d,"end":%d}}}`,
		name, k, status, k, start, start+11)
}
