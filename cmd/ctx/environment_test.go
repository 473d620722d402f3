package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestEnvironmentDocumented: every environment variable ctx's code reads, or sets for
// the programs it starts, is named in `ctx help environment` and in
// docs/environment.md, and the help topic lists no variable the code no longer reads.
func TestEnvironmentDocumented(t *testing.T) {
	root := filepath.Join("..", "..")
	found := scanEnvironment(t, root)
	names := slices.Sorted(maps.Keys(found))
	t.Logf("%d variables: %s", len(names), strings.Join(names, " "))
	if len(found) < 10 {
		t.Fatalf("the scan found %d variables, fewer than ctx reads: is the scanner broken? %v", len(found), found)
	}
	// One variable for each way the scanner finds names. A missing one means the
	// scanner lost that way, or the code stopped reading the variable: then pick
	// another read the same way.
	for name, how := range map[string]string{
		"CTX_WORKSPACE":                   "a literal: a.Getenv(\"CTX_WORKSPACE\")",
		"CTX_AGENT_ID":                    "a constant of the same package: h.Getenv(EnvAgentID)",
		"CLAUDE_CODE_SESSION_ID":          "a constant of another package: getenv(state.EnvSessionID)",
		"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "the env helper of internal/claude's DetectClient",
		"XDG_CACHE_HOME":                  "the standard library: os.UserCacheDir()",
		"CTX_NOTIFY_TITLE":                "a variable set for a child: \"CTX_NOTIFY_TITLE=\"+title",
	} {
		if _, ok := found[name]; !ok {
			t.Errorf("the scan missed %s, read through %s", name, how)
		}
	}

	help := newHelpEnvironmentCmd().Long
	doc, err := os.ReadFile(filepath.Join(root, "docs", "environment.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if !namesVariable(help, name) {
			t.Errorf("%s (%s) is not in `ctx help environment` (cmd/ctx/cmd_help_environment.go)", name, found[name])
		}
		if !namesVariable(string(doc), name) {
			t.Errorf("%s (%s) is not in docs/environment.md", name, found[name])
		}
	}
	for _, m := range regexp.MustCompile(`(?m)^  ([A-Z][A-Z0-9_]+)  `).FindAllStringSubmatch(help, -1) {
		if _, ok := found[m[1]]; !ok {
			t.Errorf("`ctx help environment` lists %s, which no code reads or sets", m[1])
		}
	}
}

// TestEnvironmentHelpFits: the help topic fits 80 columns and the document 100, so
// that neither is reflowed on a common terminal or in a diff.
func TestEnvironmentHelpFits(t *testing.T) {
	for i, line := range strings.Split(newHelpEnvironmentCmd().Long, "\n") {
		if n := len([]rune(line)); n > 80 {
			t.Errorf("ctx help environment, line %d: %d columns: %q", i+1, n, line)
		}
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "environment.md"))
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(string(doc), "\n") {
		if n := len([]rune(line)); n > 100 {
			t.Errorf("docs/environment.md:%d: %d columns", i+1, n)
		}
	}
}

// namesVariable reports whether text names the variable name as a whole word.
func namesVariable(text, name string) bool {
	return regexp.MustCompile(`(^|[^A-Za-z0-9_])` + regexp.QuoteMeta(name) + `($|[^A-Za-z0-9_])`).MatchString(text)
}

// envReaders are the functions whose first argument names a variable ctx reads:
// os.Getenv and os.LookupEnv, the Getenv func ctx passes around (App.Getenv,
// Hook.Getenv, Agents.Getenv, a getenv parameter), and env, the helper in
// internal/claude's DetectClient that looks in the environment, then in Claude
// Code's settings.
var envReaders = map[string]bool{"Getenv": true, "LookupEnv": true, "getenv": true, "env": true}

// stdlibReaders are the standard library's functions that read a variable
// themselves, by package path and name.
var stdlibReaders = map[string]string{
	"os.UserCacheDir":  "XDG_CACHE_HOME",
	"os.UserConfigDir": "XDG_CONFIG_HOME",
	"os.UserHomeDir":   "HOME",
	"os.TempDir":       "TMPDIR",
	"os/exec.LookPath": "PATH",
}

// childVariable matches a CTX_ variable ctx sets for a program it starts:
// "CTX_EVENT="+event.
var childVariable = regexp.MustCompile(`^(CTX_[A-Z0-9_]+)=`)

// variableName is what an environment variable's name looks like.
var variableName = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

// scanEnvironment parses the module's Go files under root, tests, test support,
// benchmarks and end-to-end tests aside, and returns each variable the code reads or
// sets for a child, with the first place that does.
func scanEnvironment(t *testing.T, root string) map[string]string {
	t.Helper()
	module := modulePath(t, root)
	fset := token.NewFileSet()
	type parsed struct {
		pkg  string // import path
		file *ast.File
	}
	var files []parsed
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			switch {
			case rel != "." && strings.HasPrefix(d.Name(), "."),
				d.Name() == "testdata", d.Name() == "vendor",
				rel == "bench", rel == "e2e", rel == "internal/testkit":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		pkg := module
		if dir := filepath.ToSlash(filepath.Dir(rel)); dir != "." {
			pkg += "/" + dir
		}
		files = append(files, parsed{pkg, f})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	// String constants by import path and name, so that getenv(state.EnvSessionID)
	// resolves.
	consts := map[string]string{}
	for _, p := range files {
		ast.Inspect(p.file, func(n ast.Node) bool {
			if d, ok := n.(*ast.GenDecl); ok && d.Tok == token.CONST {
				for _, spec := range d.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, name := range vs.Names {
						if i < len(vs.Values) {
							if s, ok := stringLiteral(vs.Values[i]); ok {
								consts[p.pkg+"."+name.Name] = s
							}
						}
					}
				}
			}
			return true
		})
	}

	found := map[string]string{}
	note := func(name string, pos token.Pos) {
		if _, seen := found[name]; !seen {
			p := fset.Position(pos)
			rel, _ := filepath.Rel(root, p.Filename)
			found[name] = filepath.ToSlash(rel) + ":" + strconv.Itoa(p.Line)
		}
	}
	for _, p := range files {
		imports := importNames(p.file)
		resolve := func(e ast.Expr) (string, bool) {
			switch e := e.(type) {
			case *ast.BasicLit:
				return stringLiteral(e)
			case *ast.Ident:
				s, ok := consts[p.pkg+"."+e.Name]
				return s, ok
			case *ast.SelectorExpr:
				if x, ok := e.X.(*ast.Ident); ok && imports[x.Name] != "" {
					s, ok := consts[imports[x.Name]+"."+e.Sel.Name]
					return s, ok
				}
			}
			return "", false
		}
		ast.Inspect(p.file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				var name string
				switch fun := n.Fun.(type) {
				case *ast.Ident:
					name = fun.Name
				case *ast.SelectorExpr:
					name = fun.Sel.Name
					if x, ok := fun.X.(*ast.Ident); ok && imports[x.Name] != "" {
						if v, ok := stdlibReaders[imports[x.Name]+"."+name]; ok {
							note(v, n.Pos())
						}
					}
				}
				if envReaders[name] && len(n.Args) > 0 {
					if s, ok := resolve(n.Args[0]); ok && variableName.MatchString(s) {
						note(s, n.Pos())
					}
				}
			case *ast.BasicLit:
				if s, ok := stringLiteral(n); ok {
					if m := childVariable.FindStringSubmatch(s); m != nil {
						note(m[1], n.Pos())
					}
				}
			}
			return true
		})
	}
	return found
}

// stringLiteral returns the value of e when it is a string literal.
func stringLiteral(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

// importNames maps the names f refers to its imports by to their paths.
func importNames(f *ast.File) map[string]string {
	out := map[string]string{}
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		name := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		out[name] = path
	}
	return out
}

// modulePath reads the module's path from root's go.mod.
func modulePath(t *testing.T, root string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if m, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.TrimSpace(m)
		}
	}
	t.Fatal("go.mod names no module")
	return ""
}
