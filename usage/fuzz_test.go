package usage

import (
	"bytes"
	"testing"
)

// FuzzRead feeds arbitrary bytes to the tail reader as a transcript, read in chunks of
// every size and within scan bounds of several sizes: it must never panic, never report
// negative tokens, and always agree with a plain forward reading of the lines.
func FuzzRead(f *testing.F) {
	for _, seed := range []string{
		laterAssistant,
		laterAssistant + laterAssistant[:40],
		`{"type":"system","subtype":"compact_boundary","compactMetadata":{"trigger":"auto","preTokens":250000,"postTokens":9000}}` + "\n",
		`{"type":"system","subtype":"compact_boundary","compactMetadata":{"trigger":"manual","preTokens":1}}`,
		`{"type":"assistant","isSidechain":true,"message":{"model":"m","usage":{"input_tokens":5}}}` + "\n",
		`{"type":"assistant","isApiErrorMessage":true,"message":{"model":"<synthetic>","usage":{"input_tokens":0}}}`,
		`{"type":"assistant","message":{"usage":{"input_tokens":-9223372036854775808,"cache_read_input_tokens":9223372036854775807}}}`,
		`{"type":"assistant","message":{"usage":{"input_tokens":1e3}}}`,
		"\n\n\r\n{\"type\":\"assistant\"",
		"",
	} {
		f.Add([]byte(seed), uint8(3))
		f.Add([]byte(seed), uint8(3+32*5)) // read no further back than 5*29 bytes
	}
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8) {
		// chunk's low bits set the first chunk, its high ones the scan bound (0: none).
		lim := limits{firstChunk: 1 + int(chunk%32), maxChunk: 64, maxLine: 256, maxScan: int64(chunk/32) * 29}
		got, err := scan(bytes.NewReader(data), int64(len(data)), lim)
		if err != nil {
			t.Fatal(err)
		}
		if want := forwardWithin(data, lim.maxLine, lim.maxScan); got != want {
			t.Fatalf("backward %+v, forward %+v", got, want)
		}
		u, err := readTail(bytes.NewReader(data), int64(len(data)), Config{}, Client{}, defaultLimits)
		if err != nil {
			t.Fatal(err)
		}
		if u.TokensUsed < 0 || u.Budget <= 0 || u.PercentOfBudget < 0 {
			t.Fatalf("impossible usage %+v", *u)
		}
	})
}

// FuzzJudge checks the byte markers against a decoding of every line: a line they rule
// out must be one that decoding rules out too, however it is spaced or escaped.
func FuzzJudge(f *testing.F) {
	for _, seed := range []string{
		laterAssistant,
		`{"type": "assistant", "message": {"usage": {"input_tokens": 5}}}`,
		`{"type":"\u0061ssistant","message":{"usage":{"input_tokens":5}}}`,
		`{"\u0074ype":"assistant","message":{"\u0075sage":{"input_tokens":5}}}`,
		`{"TYPE":"assistant","Message":{"Usage":{"input_tokens":5}}}`,
		`{"type": "system", "subtype": "compact_bound\u0061ry", "compactMetadata": {"postTokens": 1}}`,
		`{"type":"user","message":{"content":"{\"type\":\"assistant\"}"}}`,
		"",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		got, gotOK := judge(line)
		want, wantOK := decide(line)
		if got != want || gotOK != wantOK {
			t.Fatalf("%q: markers give %+v, %v; decoding gives %+v, %v", line, got, gotOK, want, wantOK)
		}
	})
}
