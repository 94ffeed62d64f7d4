package main

import (
	"strings"
	"testing"
	"time"
)

func TestRowMet(t *testing.T) {
	ok := Row{Ratio: 1.9, Target: 2, RSS: 30 << 20, RSSTarget: 64 << 20}
	if got := ok.Met(); got != "met" {
		t.Errorf("Met = %q, want met", got)
	}
	bad := Row{Ratio: 2.1, Target: 2, RSS: 64 << 20, RSSTarget: 64 << 20, Exit: 3}
	if got, want := bad.Met(), "not met (ratio, RSS, exit 3)"; got != want {
		t.Errorf("Met = %q, want %q", got, want)
	}
}

func TestPrintTable(t *testing.T) {
	var b strings.Builder
	printTable(&b, []Row{{Store: "JSONL (Qwen)", Size: "256 MiB", Work: "scan", Time: 610 * time.Millisecond, Floor: "cat|wc -l",
		FloorTime: 300 * time.Millisecond, Ratio: 2.03, Target: 2, RSS: 21 << 20, RSSTarget: 64 << 20, Note: "2 pairs"}})
	want := "| store | size | work | sessionfix | floor | floor time | ratio | target | peak RSS | RSS target | met |\n" +
		"| --- | --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | --- |\n" +
		"| JSONL (Qwen) | 256 MiB | scan | 0.61 s | cat\\|wc -l | 0.30 s | 2.03× | ≤ 2.0× | 21 MiB | < 64 MiB | not met (ratio); 2 pairs |\n"
	if b.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{{[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5}, {nil, 0}} {
		if got := median(c.in); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}
