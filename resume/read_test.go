package resume

import (
	"strings"
	"testing"
)

func TestListedPathsSkipsCode(t *testing.T) {
	body := "1. `a.md` — real\n````md\n- `fake.md`\n```\n- `also-fake.md`\n````\n- [x] `b/c.go`\n    - `nested.md`\n\nA paragraph.\n\n    - `indented-code.md`\n"
	got := strings.Join(Parse([]byte("# T\n## Files Modified\n"+body)).listedIn(SectionFilesModified, ""), ",")
	if got != "a.md,b/c.go,nested.md" {
		t.Errorf("got %s", got)
	}
}
