//go:build torture

package torture

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// injectFaults damages the workspace after the load the way a broken ctx would, one
// fault per check, and returns for each a piece of the violation that must report it.
// A fault needs what the load made (an acknowledged save, an archived journal); the
// load of TestTortureCheckerCatches always makes them, and a missing one fails it.
func (w *world) injectFaults() []string {
	var want []string
	fault := func(format string, args ...any) { want = append(want, fmt.Sprintf(format, args...)) }
	broken := func(what string, err error) {
		w.t.Errorf("inject %s: %v", what, err)
	}

	var saves []*result
	for _, r := range w.results {
		if r.op.kind == kindSave && r.exit == 0 && !r.killed {
			saves = append(saves, r)
		}
	}
	if len(saves) < 2 {
		w.t.Fatalf("inject: the load acknowledged %d saves; the faults need two", len(saves))
	}

	// A decision written twice.
	first := saves[0]
	path := w.resumePath(first.op.target)
	if data, err := os.ReadFile(path); err != nil {
		broken("a doubled decision", err)
	} else {
		re := regexp.MustCompile(`(?m)^.*` + regexp.QuoteMeta(first.op.decision) + `\n`)
		line := re.Find(data)
		if line == nil {
			broken("a doubled decision", fmt.Errorf("%s is not in %s", first.op.decision, path))
		} else if err := os.WriteFile(path, bytes.Replace(data, line, append(line, line...), 1), 0o644); err != nil {
			broken("a doubled decision", err)
		}
		fault("decision %s, acknowledged by op #%d", first.op.decision, first.op.seq)
	}

	// A set an acknowledged save named, without its JSON file.
	var out saveJSON
	last := saves[len(saves)-1]
	if err := json.Unmarshal([]byte(last.stdout), &out); err != nil {
		broken("a set cut short", err)
	} else if err := os.Remove(filepath.Join(w.ws, ".ctx", "sessions", out.SnapshotID+".json")); err != nil {
		broken("a set cut short", err)
	} else {
		fault("snapshot set %s, named by op #%d", out.SnapshotID, last.op.seq)
	}

	// A line that is not JSON in the middle of a journal, archived if one is.
	sessions := filepath.Join(w.ws, ".ctx", "sessions")
	entries, _ := os.ReadDir(sessions)
	archived := ""
	for _, e := range entries {
		if archiveRE.MatchString(e.Name()) || (archived == "" && activeRE.MatchString(e.Name())) {
			archived = e.Name()
		}
	}
	if archived == "" {
		broken("a garbage journal line", fmt.Errorf("no journal in %s", sessions))
	} else {
		p := filepath.Join(sessions, archived)
		data, err := os.ReadFile(p)
		if err == nil {
			i := bytes.IndexByte(data, '\n') + 1
			data = append(data[:i:i], append([]byte("{\"type\":\"tool_call\",\"timest\n"), data[i:]...)...)
			err = os.WriteFile(p, data, 0o644)
		}
		if err != nil {
			broken("a garbage journal line", err)
		}
		fault(".ctx/sessions/%s:2: not a journal line", archived)
	}

	// A half-made project: a folder with its overview and nothing else.
	half := fmt.Sprintf("990-torture-%s-n0", w.run)
	planning := filepath.Join(w.ws, "02-projects", half, "01-planning")
	if err := os.MkdirAll(planning, 0o755); err != nil {
		broken("a half-made project", err)
	} else if err := os.WriteFile(filepath.Join(planning, "overview.md"), []byte("---\nname: Half\n---\n"), 0o644); err != nil {
		broken("a half-made project", err)
	}
	fault("half-made project 02-projects/%s: missing 01-planning/plan.md", half)

	// A temporary file no save removes.
	other := saves[1].op.target
	working := filepath.Join(w.ws, other.rel, "03-working")
	if err := os.MkdirAll(working, 0o755); err != nil {
		broken("a temporary file", err)
	} else if err := os.WriteFile(filepath.Join(working, ".ctx-tmp-notes.md-123"), []byte("half"), 0o644); err != nil {
		broken("a temporary file", err)
	}
	fault("left in ws/%s/03-working", other.rel)

	// A lost close's count (session_count moved by hand) and a section written twice,
	// in a save point none of the faults above touched.
	var victim *target
	for _, tg := range w.targets {
		if tg != first.op.target && w.base[tg.id] != nil {
			victim = tg
			break
		}
	}
	path = w.resumePath(victim)
	rel := victim.rel + "/01-planning/_resume.md"
	data, err := os.ReadFile(path)
	if err != nil {
		broken("a wrong count", err)
		return want
	}
	count := regexp.MustCompile(`(?m)^session_count: (\d+)$`)
	m := count.FindSubmatch(data)
	if m == nil {
		broken("a wrong count", fmt.Errorf("no session_count line in %s", rel))
		return want
	}
	n, _ := strconv.Atoi(string(m[1]))
	data = count.ReplaceAll(data, []byte("session_count: "+strconv.Itoa(n+50)))
	rf, err := parseResume(data)
	if err != nil {
		broken("a doubled section", fmt.Errorf("%s: %w", rel, err))
		return want
	}
	if len(rf.h2) == 0 {
		broken("a doubled section", fmt.Errorf("%s: no level-2 heading to double", rel))
		return want
	}
	heading := rf.h2[0]
	data = append(data, []byte("\n## "+heading+"\nwritten twice\n")...)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		broken("a wrong count", err)
	}
	fault("%s: session_count went from", rel)
	fault("%s: the heading \"## %s\" is there twice", rel, strings.TrimSpace(heading))
	return want
}
