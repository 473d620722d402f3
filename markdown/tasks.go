package markdown

import (
	"bytes"
	"strings"
	"sync"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// Task is one checkbox item of a steps file.
type Task struct {
	Number  int    // 1-based ordinal among all tasks of the file
	Line    int    // 1-based line in the file
	Text    string // the item's first line, without the checkbox
	Done    bool
	Section Heading // the heading above the task (zero when there is none)
}

// Heading names the section a task sits in. Number counts the level-2 headings
// of the file up to it.
type Heading struct {
	Number int
	Name   string
}

// taskParser reads the one checkbox grammar of ctx: list items (-, *, + or 1.) opening
// with [ ], [x] or [X], as Markdown structure, so a checkbox in a code block is not a task.
// It is goldmark's CommonMark parser with goldmark's task-list node; the checkbox parser
// is the few lines below rather than goldmark's extension package, whose start-up
// (compiling the regular expressions of every extension) costs each hook process half
// a millisecond. It is built on first use, so a process that reads no Markdown does not
// pay for it.
var taskParser = sync.OnceValue(func() parser.Parser {
	return goldmark.New(goldmark.WithParserOptions(
		parser.WithInlineParsers(util.Prioritized(checkboxParser{}, 0)),
		parser.WithBlockParsers(util.Prioritized(closingTagParser{}, 850)),
	)).Parser()
})

// checkboxParser recognises "[ ]", "[x]" or "[X]" opening a list item's first
// paragraph, as GitHub's task lists do.
type checkboxParser struct{}

func (checkboxParser) Trigger() []byte { return []byte{'['} }

func (checkboxParser) Parse(parent ast.Node, block text.Reader, _ parser.Context) ast.Node {
	// Only the very start of a list item's first block holds a checkbox.
	if parent.Parent() == nil || parent.Parent().FirstChild() != parent || parent.HasChildren() {
		return nil
	}
	if _, ok := parent.Parent().(*ast.ListItem); !ok {
		return nil
	}
	line, _ := block.PeekLine()
	if len(line) < 3 || line[0] != '[' || line[2] != ']' {
		return nil
	}
	var checked bool
	switch line[1] {
	case 'x', 'X':
		checked = true
	case ' ', '\t', '\n', '\r', '\f': // RE2's \s, as goldmark's own pattern uses
	default:
		return nil
	}
	n := 3
	for n < len(line) && (line[n] == ' ' || line[n] == '\t' || line[n] == '\n' || line[n] == '\r' || line[n] == '\f') {
		n++
	}
	block.Advance(n)
	return extast.NewTaskCheckBox(checked)
}

func (checkboxParser) CloseBlock(ast.Node, parser.Context) {}

// Tasks returns every checkbox task of a Markdown document, in document order.
func Tasks(src []byte) []Task {
	src = blankFrontmatter(src)
	doc := taskParser().Parse(text.NewReader(src))
	var (
		tasks   []Task
		section Heading
		h2      int
		lines   = newLineIndex(src)
	)
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Heading:
			name := strings.TrimSpace(string(blockText(n, src)))
			if n.Level == 2 {
				h2++
			}
			if n.Level >= 2 || h2 == 0 {
				section = Heading{Number: h2, Name: name}
			}
			return ast.WalkSkipChildren, nil
		case *extast.TaskCheckBox:
			block := n.Parent()
			t := Task{Number: len(tasks) + 1, Done: n.IsChecked, Section: section}
			if l := block.Lines(); l.Len() > 0 {
				seg := l.At(0)
				t.Line = lines.lineOf(seg.Start)
				t.Text = taskText(seg.Value(src))
			}
			tasks = append(tasks, t)
		case *ast.FencedCodeBlock, *ast.CodeBlock, *ast.HTMLBlock:
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	return tasks
}

// blankFrontmatter replaces a frontmatter with blank lines so that its lines are never
// read as Markdown while every offset and line number stays true to the file.
// A byte-order mark becomes three spaces for the same reason.
func blankFrontmatter(src []byte) []byte {
	if bytes.HasPrefix(src, bom) {
		src = append([]byte("   "), src[len(bom):]...)
	}
	off := FrontmatterEnd(src)
	if off == 0 {
		return src
	}
	// Keep the byte count by blanking the frontmatter instead of cutting it.
	out := make([]byte, len(src))
	for i := range off {
		if src[i] == '\n' {
			out[i] = '\n'
		} else {
			out[i] = ' '
		}
	}
	copy(out[off:], src[off:])
	return out
}

// FrontmatterEnd returns the offset just after a frontmatter block's closing "---" line,
// found by its delimiters alone, so that a block whose YAML does not parse is still
// never read as Markdown; 0 when there is no closed block.
func FrontmatterEnd(src []byte) int { return FindFrontmatter(src).End }

// Progress summarises the tasks of a project's steps file.
type Progress struct {
	TasksTotal     int    `json:"tasks_total"`
	TasksCompleted int    `json:"tasks_completed"`
	Percent        int    `json:"percent"`
	CurrentTask    string `json:"current_task"`
	CurrentSection string `json:"current_section"`
	// CurrentTaskNumber is the ordinal of the current task among all tasks and
	// CurrentSectionNumber the ordinal of its level-2 heading (0 when none).
	CurrentTaskNumber    int `json:"current_task_number"`
	CurrentSectionNumber int `json:"current_section_number"`
}

// ProgressOf computes progress from tasks: the current task is the first open one.
func ProgressOf(tasks []Task) Progress {
	p := Progress{TasksTotal: len(tasks)}
	var current *Task
	for i := range tasks {
		if tasks[i].Done {
			p.TasksCompleted++
		} else if current == nil {
			current = &tasks[i]
		}
	}
	if p.TasksTotal > 0 {
		p.Percent = p.TasksCompleted * 100 / p.TasksTotal
	}
	if current != nil {
		p.CurrentTask = current.Text
		p.CurrentTaskNumber = current.Number
		p.CurrentSection = current.Section.Name
		p.CurrentSectionNumber = current.Section.Number
	}
	return p
}

// Pending returns up to n open tasks, in order.
func Pending(tasks []Task, n int) []Task {
	var out []Task
	for _, t := range tasks {
		if len(out) == n {
			break
		}
		if !t.Done {
			out = append(out, t)
		}
	}
	return out
}

func taskText(line []byte) string {
	s := strings.TrimSpace(string(line))
	// The segment may still carry the checkbox when goldmark kept it in the line.
	if len(s) >= 3 && s[0] == '[' && s[2] == ']' {
		s = strings.TrimSpace(s[3:])
	}
	return s
}

func blockText(n ast.Node, src []byte) []byte {
	var b bytes.Buffer
	lines := n.Lines()
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		b.Write(seg.Value(src))
	}
	return b.Bytes()
}

// lineIndex maps byte offsets to 1-based line numbers.
type lineIndex []int

func newLineIndex(src []byte) lineIndex {
	idx := lineIndex{0}
	for i, c := range src {
		if c == '\n' {
			idx = append(idx, i+1)
		}
	}
	return idx
}

func (idx lineIndex) lineOf(off int) int {
	lo, hi := 0, len(idx)
	for lo+1 < hi {
		mid := (lo + hi) / 2
		if idx[mid] <= off {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo + 1
}

// closingTagParser reads a line holding only the closing tag of pre, script, style or
// textarea as CommonMark does: an HTML block (type 7), which goldmark's own HTML block
// parser leaves to a paragraph, so that a header-like line after it is HTML too.
type closingTagParser struct{}

func (closingTagParser) Trigger() []byte { return []byte{'<'} }

func (closingTagParser) Open(_ ast.Node, reader text.Reader, pc parser.Context) (ast.Node, parser.State) {
	if ast.IsParagraph(pc.LastOpenedBlock().Node) {
		return nil, parser.NoChildren // a type 7 block cannot interrupt a paragraph
	}
	line, segment := reader.PeekLine()
	if !isClosingRawTag(line) {
		return nil, parser.NoChildren
	}
	node := ast.NewHTMLBlock(ast.HTMLBlockType7)
	node.Lines().Append(segment)
	reader.AdvanceToEOL()
	return node, parser.NoChildren
}

func (closingTagParser) Continue(node ast.Node, reader text.Reader, _ parser.Context) parser.State {
	line, segment := reader.PeekLine()
	if util.IsBlank(line) {
		return parser.Close
	}
	node.Lines().Append(segment)
	reader.AdvanceToEOL()
	return parser.Continue | parser.NoChildren
}

func (closingTagParser) Close(ast.Node, text.Reader, parser.Context) {}
func (closingTagParser) CanInterruptParagraph() bool                 { return false }
func (closingTagParser) CanAcceptIndentedLine() bool                 { return false }

// isClosingRawTag reports whether line is "</pre>", "</script>", "</style>" or
// "</textarea>" (any case, space before the ">") and nothing but space after it.
func isClosingRawTag(line []byte) bool {
	t := bytes.TrimLeft(line, " ")
	if len(line)-len(t) > 3 || !bytes.HasPrefix(t, []byte("</")) {
		return false
	}
	t = t[2:]
	for _, name := range []string{"pre", "script", "style", "textarea"} {
		if len(t) >= len(name) && bytes.EqualFold(t[:len(name)], []byte(name)) {
			rest := bytes.TrimLeft(t[len(name):], " \t\r\n")
			return len(rest) > 0 && rest[0] == '>' && len(bytes.TrimSpace(rest[1:])) == 0 && (len(t) == len(name) || !isTagNameByte(t[len(name)]))
		}
	}
	return false
}

func isTagNameByte(c byte) bool {
	return c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
