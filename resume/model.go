package resume

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/ctxtools/ctx/markdown"
)

// A save parses the save point once and then edits it in place: each edit shifts the
// offsets the model holds (sections, code blocks, header lines, the frontmatter's YAML
// positions) instead of parsing the new bytes. An edit whose effect on that structure
// is not certain from its own text and its neighbours is refused with errNeedsParse;
// the save then starts again with a parse after every edit. verify checks the model
// against one parse of the edited bytes before anything is written.

// errNeedsParse refuses an in-place edit that could change the structure the model
// records in a way it does not follow.
var errNeedsParse = errors.New("the edit needs a parse of the new bytes")

// headerAt is where a header line was found (markdown.Document.Label).
type headerAt struct {
	markdown.Label
	ok bool
}

// structure reads the body's structure from the parse, once.
func (d *Document) structure() {
	if d.structured {
		return
	}
	d.structured = true
	md := d.Markdown()
	d.sections = md.Sections()
	d.code = md.CodeBlocks()
	for i, name := range headerLabels {
		d.labels[i].Label, d.labels[i].ok = md.Label(name, SectionQuickContext)
	}
}

// editedInPlace returns a copy of d whose edits update its model in place.
func (d *Document) editedInPlace() *Document {
	d.structure()
	nd := *d
	nd.inPlace = true
	return &nd
}

// successor is the document out with d's model, before the edit's own changes to it.
func (d *Document) successor(out []byte) *Document {
	return &Document{
		src: out, eol: eolOf(out),
		hasFM: d.hasFM, fmContentStart: d.fmContentStart, fmContentEnd: d.fmContentEnd, fmEnd: d.fmEnd, fmOpenEnd: d.fmOpenEnd,
		mapping: d.mapping, values: d.values,
		structured: true, labels: d.labels,
		inPlace: true,
	}
}

// shiftBody moves every body offset at or after end by delta; a section's BodyStart
// stays when it is at start (text inserted at the top of a body belongs to it).
func (nd *Document) shiftBody(d *Document, start, end, delta int) {
	pos := func(x int) int {
		if x >= end {
			return x + delta
		}
		return x
	}
	nd.sections = make([]markdown.Section, len(d.sections))
	for i, s := range d.sections {
		body := s.BodyStart
		if body > start {
			body += delta
		}
		nd.sections[i] = markdown.Section{Level: s.Level, Title: s.Title, Start: pos(s.Start), BodyStart: body, End: pos(s.End)}
	}
	nd.code = make([][2]int, len(d.code))
	for i, c := range d.code {
		nd.code[i] = [2]int{pos(c[0]), pos(c[1])}
	}
	for i, l := range d.labels {
		if l.ok && l.Start >= end {
			l.Start, l.NameStart, l.NameEnd, l.ValueStart, l.ValueEnd = l.Start+delta, l.NameStart+delta, l.NameEnd+delta, l.ValueStart+delta, l.ValueEnd+delta
		}
		nd.labels[i] = l
	}
}

// emptyHeading reports whether the document has a heading without text ("#", "# #"):
// markdown.Sections finds its line by a search whose result an edit elsewhere can
// move, so such a document is edited with a parse after every edit.
func (d *Document) emptyHeading() bool {
	for _, s := range d.sections {
		if s.Title == "" || s.Start < d.fmEnd {
			return true
		}
	}
	return false
}

// finishSections sorts the sections and sets each End as markdown.Sections does: the
// next heading of the same or a higher level, else the end of the document.
func finishSections(sections []markdown.Section, size int) {
	slices.SortStableFunc(sections, func(a, b markdown.Section) int { return a.Start - b.Start })
	for i := range sections {
		sections[i].End = size
		for j := i + 1; j < len(sections); j++ {
			if sections[j].Level <= sections[i].Level {
				sections[i].End = sections[j].Start
				break
			}
		}
		sections[i].End = max(sections[i].End, sections[i].BodyStart)
	}
}

// reshape is the model of out, which is d's bytes with src[start:end] replaced by
// text, for an edit of the body: a header line's value, a heading line, or whole lines.
func (d *Document) reshape(out []byte, start, end int, text string) (*Document, error) {
	d.structure()
	if start < d.fmEnd || d.emptyHeading() {
		return nil, errNeedsParse
	}
	removed := string(d.src[start:end])
	var nd *Document
	var err error
	if !strings.Contains(removed, "\n") && !strings.Contains(text, "\n") {
		nd, err = d.reshapeInline(out, start, end, text)
	} else {
		nd, err = d.reshapeLines(out, start, end, text)
	}
	if err != nil {
		return nil, err
	}
	if !sameRegions(d, nd, start, end, len(text)-(end-start)) {
		return nil, errNeedsParse
	}
	return nd, nil
}

// reshapeInline follows an edit inside one line: the value of a header line, or an ATX
// heading line rewritten at the same level.
func (d *Document) reshapeInline(out []byte, start, end int, text string) (*Document, error) {
	ls := lineStart(d.src, start)
	le := contentEnd(d.src, ls, lineEnd(d.src, ls))
	if end > le || d.nearCode(ls, lineEnd(d.src, ls)) {
		return nil, errNeedsParse
	}
	delta := len(text) - (end - start)
	nd := d.successor(out)
	nd.shiftBody(d, start, end, delta)
	newLine := out[ls : le+delta]
	for i, s := range d.sections {
		if s.Start < ls && ls < s.BodyStart {
			return nil, errNeedsParse // a line of a setext heading
		}
		if s.Start != ls {
			continue
		}
		level, title, ok := atxHeading(string(newLine))
		if !ok || level != s.Level || !isATXLine(d.src[ls:le]) {
			return nil, errNeedsParse
		}
		nd.sections[i].Title = title
		finishSections(nd.sections, len(out))
		return nd, nil
	}
	for i, l := range d.labels {
		if !l.ok || l.ValueStart != start || l.ValueEnd != end {
			continue
		}
		// A '>' could end an HTML block the line sits in; a value that starts with
		// what the label's separator may hold would be read as part of it.
		if strings.ContainsRune(text, '>') || strings.ContainsRune(d.lineText(start, end), '>') ||
			(text != "" && strings.ContainsRune(" \t:*", rune(text[0]))) {
			return nil, errNeedsParse
		}
		l.ValueEnd = le + delta
		// "**Name: value**": markdown.FindLabel leaves the closing bold out of the value.
		if bytes.Contains(out[l.Start:l.NameStart], []byte("**")) && !bytes.Contains(out[l.NameEnd:l.ValueStart], []byte("**")) {
			v := bytes.TrimRight(out[l.ValueStart:l.ValueEnd], " \t")
			if bytes.HasSuffix(v, []byte("**")) {
				l.ValueEnd = l.ValueStart + len(v) - 2
			}
		}
		nd.labels[i] = l
		finishSections(nd.sections, len(out))
		return nd, nil
	}
	return nil, errNeedsParse
}

func (d *Document) lineText(start, end int) string { return string(d.src[start:end]) }

// reshapeLines follows an edit that replaces whole lines with whole lines, such as an
// item appended to a list, a marked block or a section added from the template.
func (d *Document) reshapeLines(out []byte, start, end int, text string) (*Document, error) {
	removed := string(d.src[start:end])
	if !atLineStart(d.src, start) || !atLineStart(d.src, end) || (text != "" && !strings.HasSuffix(text, "\n")) {
		return nil, errNeedsParse
	}
	added, ok := classifyLines(text)
	if !ok || mentionsHeader(text) {
		return nil, errNeedsParse
	}
	if gone, ok := classifyLines(removed); !ok || len(gone) > 0 || mentionsHeader(removed) {
		return nil, errNeedsParse
	}
	if end < len(d.src) && !safeNextLine(d.src[end:lineEnd(d.src, end)]) {
		return nil, errNeedsParse
	}
	for _, s := range d.sections {
		inHeading := func(x int) bool { return s.Start < x && x < s.BodyStart }
		if inHeading(start) || inHeading(end) || (start < s.Start && s.Start < end) ||
			(s.Start == end && !isATXLine(d.src[end:lineEnd(d.src, end)])) {
			return nil, errNeedsParse
		}
	}
	if d.nearCode(start, end) || d.opensAbove(start) {
		return nil, errNeedsParse
	}
	delta := len(text) - (end - start)
	nd := d.successor(out)
	nd.shiftBody(d, start, end, delta)
	for _, h := range added {
		nd.sections = append(nd.sections, markdown.Section{Level: h.level, Title: h.title, Start: start + h.start, BodyStart: start + h.end})
	}
	finishSections(nd.sections, len(out))
	return nd, nil
}

func atLineStart(src []byte, off int) bool { return off == 0 || src[off-1] == '\n' }

// nearCode reports whether [start, end] touches a code block, its closing fence line
// included.
func (d *Document) nearCode(start, end int) bool {
	for _, c := range d.code {
		last := lineEnd(d.src, max(c[1]-1, c[0]))
		if start <= last && end >= c[0] {
			return true
		}
	}
	return false
}

// opensAbove reports whether a construct that can run past a blank line and swallow
// what follows (a fence, an HTML block) opens between the last heading before off and
// off. A fenced block the parse closed before off is skipped.
func (d *Document) opensAbove(off int) bool {
	from := d.fmEnd
	for _, s := range d.sections {
		if s.BodyStart <= off {
			from = max(from, s.BodyStart)
		}
	}
	for pos := from; pos < off; {
		next := lineEnd(d.src, pos)
		line := strings.TrimRight(string(d.src[pos:next]), "\r\n")
		s := stripContainers(line)
		switch {
		case strings.HasPrefix(s, "```") || strings.HasPrefix(s, "~~~"):
			closed := -1
			for _, c := range d.code {
				if lineEnd(d.src, pos) == lineStart(d.src, c[0]) {
					closing := lineEnd(d.src, max(c[1]-1, c[0]))
					if cl := stripContainers(string(d.src[closing:lineEnd(d.src, closing)])); strings.HasPrefix(cl, s[:3]) {
						closed = lineEnd(d.src, closing)
					}
				}
			}
			if closed < 0 || closed > off {
				return true
			}
			next = closed
		case strings.HasPrefix(s, "<") && !oneLineComment(s):
			return true
		}
		pos = next
	}
	return false
}

func oneLineComment(s string) bool {
	return strings.HasPrefix(s, "<!--") && strings.Contains(s[4:], "-->")
}

// stripContainers drops the indentation, quote markers and list markers before a
// line's content.
func stripContainers(line string) string {
	for {
		t := strings.TrimLeft(line, " \t>")
		if len(t) >= 2 && strings.ContainsRune("-*+", rune(t[0])) && (t[1] == ' ' || t[1] == '\t') {
			t = t[1:]
		} else if i := strings.IndexFunc(t, func(r rune) bool { return r < '0' || r > '9' }); i > 0 && i+1 < len(t) && (t[i] == '.' || t[i] == ')') && (t[i+1] == ' ' || t[i+1] == '\t') {
			t = t[i+1:]
		}
		if t == line {
			return t
		}
		line = t
	}
}

type addedHeading struct {
	start, end, level int
	title             string
}

// classifyLines reads the lines an edit adds or removes: blank lines, text, list
// items, quotes and one-line comments are safe, and ATX headings written from column 0
// are returned. Anything that could open a block reaching past its line (a fence, an
// HTML block, indented code) or turn a neighbour into a heading is not.
func classifyLines(text string) ([]addedHeading, bool) {
	var out []addedHeading
	for off := 0; off < len(text); {
		next := len(text)
		if i := strings.IndexByte(text[off:], '\n'); i >= 0 {
			next = off + i + 1
		}
		line := strings.TrimRight(text[off:next], "\r\n")
		if level, title, ok := atxHeading(line); ok {
			out = append(out, addedHeading{start: off, end: next, level: level, title: title})
		} else if !safeLine(line) {
			return nil, false
		}
		off = next
	}
	return out, true
}

func safeLine(line string) bool {
	if strings.TrimSpace(line) == "" {
		return true
	}
	if strings.HasPrefix(line, "\t") || strings.HasPrefix(line, "    ") {
		return false
	}
	t := strings.TrimLeft(line, " ")
	if n := len(t) - len(strings.TrimLeft(t, "#")); n > 0 && n <= 6 && (n == len(t) || t[n] == ' ' || t[n] == '\t') {
		return false // a heading not written from column 0
	}
	if strings.Trim(t, "=-*_+ \t") == "" {
		return false // a setext underline, a thematic break, an empty list item
	}
	// Content indented four columns past a list or quote marker is indented code.
	if hasWideGap(t) {
		return false
	}
	s := stripContainers(t)
	if strings.HasPrefix(s, "```") || strings.HasPrefix(s, "~~~") || (strings.HasPrefix(s, "<") && !oneLineComment(s)) {
		return false
	}
	return true
}

// hasWideGap reports whether a marker is followed by more than four spaces or a tab.
func hasWideGap(t string) bool {
	for i := 0; i+1 < len(t); i++ {
		if strings.ContainsRune(">-*+.)", rune(t[i])) && (strings.HasPrefix(t[i+1:], "     ") || (t[i+1] == '\t')) {
			return true
		}
	}
	return false
}

// safeNextLine: the line after an edit keeps its meaning whatever the edit puts before
// it (a paragraph line or a blank line).
func safeNextLine(b []byte) bool {
	line := strings.TrimRight(string(b), "\r\n")
	if strings.TrimSpace(line) == "" {
		return true
	}
	if strings.HasPrefix(line, "\t") || strings.HasPrefix(line, "    ") {
		return false
	}
	t := strings.TrimLeft(line, " ")
	// A one-line comment starts an HTML block that may interrupt a paragraph and ends
	// on its line; other HTML may not interrupt one.
	if strings.Trim(t, "=-*_+ \t") == "" || (strings.HasPrefix(t, "<") && !oneLineComment(t)) || hasWideGap(t) {
		return false
	}
	if i := strings.IndexFunc(t, func(r rune) bool { return r < '0' || r > '9' }); i > 0 && (t[i] == '.' || t[i] == ')') {
		return false // an ordered list that may not interrupt a paragraph
	}
	s := stripContainers(t)
	return !strings.HasPrefix(s, "```") && !strings.HasPrefix(s, "~~~")
}

// atxHeading reads "## Title" written from column 0, as goldmark gives its title. A
// closing run of '#' is not followed.
func atxHeading(line string) (int, string, bool) {
	n := len(line) - len(strings.TrimLeft(line, "#"))
	if n == 0 || n > 6 || n == len(line) || (line[n] != ' ' && line[n] != '\t') {
		return 0, "", false
	}
	title := strings.TrimSpace(line[n:])
	if title == "" || strings.HasSuffix(title, "#") {
		return 0, "", false
	}
	return n, title, true
}

func isATXLine(line []byte) bool { return bytes.HasPrefix(bytes.TrimLeft(line, " "), []byte("#")) }

// mentionsHeader reports whether a line of text could be read as a header line.
func mentionsHeader(text string) bool {
	for _, line := range strings.Split(text, "\n") {
		s := strings.ToLower(strings.TrimLeft(line, " \t>-*+"))
		for _, name := range headerLabels {
			if strings.HasPrefix(s, strings.ToLower(name)) {
				return true
			}
		}
	}
	return false
}

// headerRegions are where markdown.FindLabel looks for a header line in any form: the
// text before the first level-2 heading and the Quick Context section.
func headerRegions(d *Document) (preambleEnd, quickStart, quickEnd int, quick bool) {
	preambleEnd = len(d.src)
	for _, s := range d.sections {
		if s.Level == 2 {
			preambleEnd = s.Start
			break
		}
	}
	if s, ok := markdown.FindEquivalent(d.sections, SectionQuickContext); ok && s.Start >= preambleEnd {
		return preambleEnd, s.BodyStart, s.End, true
	}
	return preambleEnd, 0, 0, false
}

// sameRegions reports whether an edit left the header regions as they were, but for
// the edited text itself (which holds no header line).
func sameRegions(d, nd *Document, start, end, delta int) bool {
	// A boundary at the edit may land anywhere in the new text, which holds no header.
	moved := func(old, now int) bool {
		switch {
		case old < start:
			return now == old
		case old > end:
			return now == old+delta
		}
		return start <= now && now <= end+delta
	}
	p0, qs0, qe0, q0 := headerRegions(d)
	p1, qs1, qe1, q1 := headerRegions(nd)
	if !moved(p0, p1) || q0 != q1 {
		return false
	}
	return !q0 || (moved(qs0, qs1) && moved(qe0, qe1))
}

// spliceField replaces src[start:end] of the frontmatter with text: the value of pair
// (its key's index), or, with pair < 0, a new "key: value" line.
func (d *Document) spliceField(start, end int, text string, pair int, key string) (*Document, Span, error) {
	if !d.inPlace || !d.hasFM {
		return d.splice(start, end, text)
	}
	out := make([]byte, 0, len(d.src)-(end-start)+len(text))
	out = append(out, d.src[:start]...)
	out = append(out, text...)
	out = append(out, d.src[end:]...)
	nd, err := d.reshapeField(out, start, end, text, pair, key)
	if err != nil {
		return nil, Span{}, err
	}
	return nd, Span{Start: start, End: end, Len: len(text)}, nil
}

// reshapeField follows a frontmatter edit in the YAML node: the new value is read from
// its own text, and the lines of the keys after it move.
func (d *Document) reshapeField(out []byte, start, end int, text string, pair int, key string) (*Document, error) {
	d.structure()
	if d.emptyHeading() || start < d.fmContentStart || end > d.fmContentEnd || strings.Count(text, "\n") > 1 || !plainYAML(d.mapping) {
		return nil, errNeedsParse
	}
	mapping := copyNode(d.mapping)
	line := 1 + bytes.Count(d.src[d.fmContentStart:start], []byte("\n"))
	if pair >= 0 {
		lead := len(text) - len(strings.TrimLeft(text, " "))
		val, ok := scalarNode(text[lead:])
		if !ok || strings.Contains(text, "\n") {
			return nil, errNeedsParse
		}
		val.Line, val.Column = line, column(d.src, start)+lead
		val.Anchor = mapping.Content[pair+1].Anchor
		if val.Anchor != "" {
			return nil, errNeedsParse
		}
		gone := bytes.Count(d.src[start:end], []byte("\n"))
		mapping.Content[pair+1] = val
		for _, n := range mapping.Content[pair+2:] {
			moveLines(n, 1, -gone)
		}
	} else {
		if !atLineStart(d.src, start) || start != end || !simpleKey(key) {
			return nil, errNeedsParse
		}
		body := strings.TrimRight(text, "\r\n")
		indent := len(body) - len(strings.TrimLeft(body, " "))
		if !strings.HasPrefix(body[indent:], key+": ") {
			return nil, errNeedsParse
		}
		val, ok := scalarNode(body[indent+len(key)+2:])
		if !ok {
			return nil, errNeedsParse
		}
		k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key, Line: line, Column: indent + 1}
		val.Line, val.Column = line, indent+len(key)+3
		at := len(mapping.Content)
		for i := 0; i+1 < len(mapping.Content); i += 2 {
			if mapping.Content[i].Line >= line {
				at = i
				break
			}
		}
		for _, n := range mapping.Content {
			moveLines(n, line, 1)
		}
		mapping.Content = slices.Insert(mapping.Content, at, k, val)
		if mapping.Line == 0 {
			// The first key of an empty frontmatter places its mapping.
			mapping.Line, mapping.Column = line, indent+1
		}
	}
	delta := len(text) - (end - start)
	nd := d.successor(out)
	nd.mapping, nd.values = mapping, nil
	nd.fmContentEnd, nd.fmEnd = d.fmContentEnd+delta, d.fmEnd+delta
	nd.shiftBody(d, start, end, delta)
	return nd, nil
}

// scalarNode reads one scalar value written on its own, as the YAML parser reads it in
// place.
func scalarNode(text string) (*yaml.Node, bool) {
	var doc yaml.Node
	if yaml.Unmarshal([]byte(text), &doc) != nil || doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, false
	}
	n := doc.Content[0]
	if n.Kind != yaml.ScalarNode || n.Line != 1 || n.Anchor != "" {
		return nil, false
	}
	return n, true
}

// column is the 1-based column, in characters, of off on its line.
func column(src []byte, off int) int {
	return 1 + utf8.RuneCount(src[lineStart(src, off):off])
}

func simpleKey(k string) bool {
	if k == "" {
		return false
	}
	for i, r := range k {
		letter := r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if !letter && (i == 0 || r < '0' || r > '9') {
			return false
		}
	}
	return true
}

// plainYAML reports whether no node has an anchor or is an alias: an edited value is
// then read by no other key.
func plainYAML(n *yaml.Node) bool {
	if n.Anchor != "" || n.Kind == yaml.AliasNode {
		return false
	}
	for _, c := range n.Content {
		if !plainYAML(c) {
			return false
		}
	}
	return true
}

func copyNode(n *yaml.Node) *yaml.Node {
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, child := range n.Content {
		c.Content[i] = copyNode(child)
	}
	return &c
}

// moveLines adds delta to the line of every node at or after line from.
func moveLines(n *yaml.Node, from, delta int) {
	if n.Line >= from {
		n.Line += delta
	}
	for _, c := range n.Content {
		moveLines(c, from, delta)
	}
}

// verify parses the document's bytes once and checks that the model kept in place
// while editing is the one the parse reads; it returns that parse, itself edited in
// place from now on. A difference is errNeedsParse.
func (d *Document) verify() (*Document, error) {
	nd, err := Parse(d.src)
	if err != nil {
		return nil, err
	}
	nd.structure()
	d.structure()
	if !sameModel(d, nd) {
		return nil, errNeedsParse
	}
	nd.inPlace = true
	return nd, nil
}

// sameModel reports whether two models of the same bytes agree.
func sameModel(a, b *Document) bool {
	if !bytes.Equal(a.src, b.src) || a.eol != b.eol || a.hasFM != b.hasFM ||
		a.fmContentStart != b.fmContentStart || a.fmContentEnd != b.fmContentEnd || a.fmEnd != b.fmEnd || a.fmOpenEnd != b.fmOpenEnd {
		return false
	}
	if !slices.Equal(a.sections, b.sections) || !slices.Equal(a.code, b.code) || a.labels != b.labels {
		return false
	}
	if (a.mapping == nil) != (b.mapping == nil) {
		return false
	}
	return a.mapping == nil || sameNode(a.mapping, b.mapping)
}

func sameNode(a, b *yaml.Node) bool {
	if a.Kind != b.Kind || a.Line != b.Line || a.Column != b.Column || len(a.Content) != len(b.Content) {
		return false
	}
	if a.Kind == yaml.ScalarNode && (a.Value != b.Value || a.Tag != b.Tag || a.Style != b.Style) {
		return false
	}
	for i := range a.Content {
		if !sameNode(a.Content[i], b.Content[i]) {
			return false
		}
	}
	return true
}
