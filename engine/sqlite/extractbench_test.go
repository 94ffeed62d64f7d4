package sqlite

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkExtractRows runs the batch extractor (sfx_batch) on 500 rows shaped like an
// agent's parts and events (tool calls with input and output, step markers, an event wrapping a
// part), with the paths of a tool-call site (name, type, call id); bytes/s counts the values.
func BenchmarkExtractRows(b *testing.B) {
	shapes := []string{
		`{"type":"tool","tool":"foo_bar_deploy_prod","callID":"call_00000001f4","state":{"status":"completed","input":{"query":"kinase inhibitors 500"},"output":"3 results for {\"query\": \"kinase inhibitors\"}","metadata":{"truncated":false},"title":"","time":{"start":1796064469516,"end":1796064469527}}}`,
		`{"reason":"tool-calls","snapshot":"4b825dc642cb6eb9a060e54bf8d69288fbee4904","type":"step-finish","tokens":{"total":15,"input":10,"output":5,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0}`,
		`{"snapshot":"4b825dc642cb6eb9a060e54bf8d69288fbee4904","type":"step-start"}`,
		`{"type":"text","text":"Here are the results of the search. The first paper describes a kinase inhibitor with \u00e9 and the second one a review of the field, 2019-2024.","time":{"start":1796064469516}}`,
	}
	const n = 500
	rb := newRowBatch(2, n)
	rb.buf = rb.buf[:0]
	for i := range n {
		v := shapes[i%len(shapes)]
		if i%4 == 0 {
			v = fmt.Sprintf(`{"type":"message.part.updated","part":%s}`, v)
		}
		c := &rb.cols[i*2+1]
		c.kind = kindText
		setNum(&c.off, len(rb.buf))
		setNum(&c.n, len(v))
		rb.buf = append(rb.buf, v...)
	}
	rb.n = n
	spec := specOf([]string{"$.tool", "$.type", "$.callID"})
	b.SetBytes(int64(len(rb.buf)))
	for b.Loop() {
		if err := extractRows(rb, spec); err != nil {
			b.Fatal(err)
		}
	}
}

// TestExtractStringsAtEveryPosition: a string value of 0 to 40 bytes is read 16 bytes at a time
// where the machine can (sfx_string) and byte by byte at its tail: wherever in it a quote, a
// backslash or a control byte stands, the extractor decides as for the same byte elsewhere —
// an escape or a plain byte (space, DEL, UTF-8) keeps the value accepted with the token at the
// same offset and length, a raw control byte (0x00, 0x01, 0x1f) or a lone quote rejects it.
func TestExtractStringsAtEveryPosition(t *testing.T) {
	paths := []string{"$.tool", "$.type"}
	for n := 0; n <= 40; n++ {
		for at := 0; at <= n; at++ {
			for _, c := range []struct {
				ins    string
				accept bool
			}{{`\"`, true}, {`\\`, true}, {`\u0041`, true}, {`\n`, true}, {" ", true}, {"\x7f", true}, {"é", true},
				{"\x00", false}, {"\x01", false}, {"\x1f", false}, {`"`, false}, {`\x`, false}, {`\`, false}} {
				if at == n && c.ins == " " && n == 0 {
					continue
				}
				body := strings.Repeat("a", at) + c.ins + strings.Repeat("c", n-at)
				v := `{"type":"x","tool":"` + body + `","z":1}`
				got := extractOne(t, []byte(v), paths)
				if !c.accept {
					require.Zero(t, got[0], "%q rejected", v)
					continue
				}
				require.Equal(t, int64(1), got[0], "%q accepted", v)
				require.Equal(t, []int64{19, int64(len(body) + 2), 8, 3}, got[1:], "%q: tokens", v)
			}
		}
	}
}
