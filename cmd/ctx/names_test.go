package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNamesNotUTF8: a project folder and a working file whose names are not UTF-8 are
// shown escaped, as problems, never with replacement characters or as readable files.
func TestNamesNotUTF8(t *testing.T) {
	bin := ctxBinary(t)
	ws := procWorkspace(t)
	must(t, os.MkdirAll(filepath.Join(ws, "02-projects", "07-caf\xe9", "01-planning"), 0o755))
	working := filepath.Join(ws, "02-projects", "01-alpha", "03-working")
	must(t, os.MkdirAll(working, 0o755))
	must(t, os.WriteFile(filepath.Join(working, "notes-\xff.md"), []byte("notes\n"), 0o644))

	r := startCtx(t, bin, ws, "", "projects", "--json")
	r.mustSucceed(t)
	out := r.stdout.String()
	if strings.Contains(out, "\ufffd") || strings.Contains(out, `\ufffd`) {
		t.Errorf("a replacement character stands for a name:\n%s", out)
	}
	var listed struct {
		Projects []struct {
			ID       string   `json:"id"`
			Problems []string `json:"problems"`
		} `json:"projects"`
	}
	must(t, json.Unmarshal(r.stdout.Bytes(), &listed))
	found := false
	for _, p := range listed.Projects {
		if p.ID == `07-caf\xe9` {
			found = true
			if len(p.Problems) == 0 || !strings.Contains(p.Problems[0], "not UTF-8") {
				t.Errorf("problems %q", p.Problems)
			}
		}
	}
	if !found {
		t.Errorf("the folder is not listed escaped:\n%s", out)
	}

	l := startCtx(t, bin, ws, "", "load", "1", "--json")
	l.mustSucceed(t)
	var loaded struct {
		Project struct {
			Problems []string `json:"problems"`
		} `json:"project"`
		Reads []struct {
			Path string `json:"path"`
		} `json:"recommended_reads"`
	}
	must(t, json.Unmarshal(l.stdout.Bytes(), &loaded))
	for _, rd := range loaded.Reads {
		if strings.Contains(rd.Path, "notes-") {
			t.Errorf("the file with a bad name is a read: %q", rd.Path)
		}
	}
	if !strings.Contains(strings.Join(loaded.Project.Problems, "\n"), `notes-\xff.md: the name is not UTF-8`) {
		t.Errorf("problems %q", loaded.Project.Problems)
	}
}
