package termtext

import (
	"bytes"
	"testing"
)

func TestFitLine(t *testing.T) {
	tests := []struct {
		line  string
		width int
		want  string
	}{
		{"short", 20, "short\n"},
		{"no wrapping when width is 0, however long the line is", 0, "no wrapping when width is 0, however long the line is\n"},
		{"  stopped   card brand detection done; expiry spiked", 30,
			"  stopped   card brand\n            detection done;\n            expiry spiked\n"},
		{"  - a list item that goes on and on", 20, "  - a list item that\n    goes on and on\n"},
		{"   12. a numbered item that goes on", 22, "   12. a numbered item\n       that goes on\n"},
		{"ok    hooks      all 9 registered in /a/long/path/settings.json", 40,
			"ok    hooks      all 9 registered in\n                 /a/long/path/settings.json\n"},
		{"a verylongwordthatcannotbebroken end", 10, "a\nverylongwordthatcannotbebroken\nend\n"},
		{"\x1b[1mbold\x1b[0m words here", 10, "\x1b[1mbold\x1b[0m words\nhere\n"},
		{"--workspace\tworkspace root (default: the nearest folder above)", 20, "--workspace\tworkspace root (default: the nearest folder above)\n"},
		{"note  run `CGO_ENABLED=0 go install ./cmd/ctx` to fix", 30,
			"note  run\n      `CGO_ENABLED=0 go install ./cmd/ctx`\n      to fix\n"},
		{"an `unclosed span runs to the end", 12, "an\n`unclosed span runs to the end\n"},
	}
	for _, tt := range tests {
		if got := fitLine(tt.line, tt.width); got != tt.want {
			t.Errorf("fitLine(%q, %d) =\n%q\nwant\n%q", tt.line, tt.width, got, tt.want)
		}
	}
}

func TestReflow(t *testing.T) {
	text := "A paragraph the author broke\nat a wide width, long before\nthis terminal.\n\n  ctx load 1\n  ctx load 2\n\n```\ncode line that is much too long to fit but stays\nnext code line\n```\n- item one is long enough to wrap\n- item two"
	if got := Reflow(text, 80); got != text {
		t.Errorf("Reflow at a width that fits changed the text:\n%s", got)
	}
	want := "A paragraph the author\nbroke at a wide width,\nlong before this\nterminal.\n\n  ctx load 1\n  ctx load 2\n\n```\ncode line that is much too long to fit but stays\nnext code line\n```\n- item one is long enough\n  to wrap\n- item two"
	if got := Reflow(text, 25); got != want {
		t.Errorf("Reflow(25) =\n%s\nwant\n%s", got, want)
	}
}

func TestFitWriterPartialLines(t *testing.T) {
	var b bytes.Buffer
	f := NewWriter(&b, 10)
	// A question without its newline shows at once, whole.
	if _, err := f.Write([]byte("Remove 12 snapshot sets? [y/N] ")); err != nil {
		t.Fatal(err)
	}
	if b.String() != "Remove 12 snapshot sets? [y/N] " {
		t.Fatalf("a partial line was held back: %q", b.String())
	}
	if _, err := f.Write([]byte("yes\nthree short words\n")); err != nil {
		t.Fatal(err)
	}
	want := "Remove 12 snapshot sets? [y/N] yes\nthree\nshort\nwords\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}
