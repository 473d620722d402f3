package shquote

import (
	"os/exec"
	"testing"
)

// Every word comes back from a real shell as it went in: the shell is the oracle.
func TestQuoteRoundTrip(t *testing.T) {
	words := []string{"", "plain", "two words", "it's", `"double"`, "$HOME", "`id`", "$(id)", "a\nb", "tab\there",
		"back\\slash", "glob*?[x]", "~user", "~", "~root", "~/x", "-n", "semi;colon", "amp&", "pipe|", "é ü 日本", "'", "''", "=", "k=v w"}
	for _, w := range words {
		out, err := exec.Command("sh", "-c", "printf '%s' "+Quote(w)).Output()
		if err != nil {
			t.Fatalf("%q: %v", w, err)
		}
		if string(out) != w {
			t.Errorf("%q came back as %q (quoted %s)", w, out, Quote(w))
		}
	}
	out, err := exec.Command("sh", "-c", `for a in `+Join(words)+`; do printf '[%s]' "$a"; done`).Output()
	if err != nil {
		t.Fatal(err)
	}
	want := ""
	for _, w := range words {
		want += "[" + w + "]"
	}
	if string(out) != want {
		t.Errorf("Join: %q, want %q", out, want)
	}
}
