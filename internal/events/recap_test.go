package events

import (
	"strings"
	"testing"
	"time"
)

func TestRecapText(t *testing.T) {
	saved := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	if got := (Recap{}).Text(saved); got != "" {
		t.Errorf("an empty recap says %q", got)
	}
	r := Recap{Compacted: true, Files: []string{"a.md"}, Actions: []string{"Bash: make test"}, ActionsAt: saved.Add(time.Hour)}
	got := r.Text(saved)
	for _, want := range []string{"just compacted", "newer than the save point", "Files changed: a.md", "- Bash: make test"} {
		if !strings.Contains(got, want) {
			t.Errorf("recap lacks %q:\n%s", want, got)
		}
	}
	r.ActionsAt = saved.Add(-time.Hour)
	if got := r.Text(saved); !strings.Contains(got, "older than the save point") {
		t.Errorf("recap of older actions:\n%s", got)
	}
}
