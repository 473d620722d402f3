package usage

import (
	"testing"

	"github.com/ctxtools/ctx/internal/testkit/fixture"
)

func benchmarkRead(b *testing.B, o fixture.TranscriptOptions) {
	o.FinalTokens = 131_000
	path := transcript(b, o)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		u, err := Read(path, Config{}, Client{})
		if err != nil {
			b.Fatal(err)
		}
		if u.TokensUsed != 131_000 {
			b.Fatalf("got %d tokens, want 131000", u.TokensUsed)
		}
	}
}

func BenchmarkRead1MB(b *testing.B) { benchmarkRead(b, fixture.TranscriptOptions{Bytes: 1 << 20}) }

func BenchmarkRead200MB(b *testing.B) {
	if testing.Short() {
		b.Skip("200 MB transcript: not with -short")
	}
	benchmarkRead(b, fixture.TranscriptOptions{Bytes: 200 << 20})
}

// BenchmarkReadPast5MBToolResult is the slow case of the tail reader: the line that
// counts sits behind a 5 MB tool result, read through to find where it starts.
func BenchmarkReadPast5MBToolResult(b *testing.B) {
	benchmarkRead(b, fixture.TranscriptOptions{Bytes: 8 << 20, HugeToolResultAfter: 5 << 20})
}
