package resume

import (
	"slices"
)

// Span is the byte range one planned round replaced: old[Start:End] became
// new[Start:Start+Len]; a test checks that nothing outside it changed.
type Span struct {
	Start, End, Len int
}

// runOne plans one edit with f against d, runs the plan, and returns the result and
// the span it changed.
func runOne(d *Document, f func(p *plan) error) (*Document, Span, error) {
	p := newPlan(d)
	if err := f(p); err != nil {
		return nil, Span{}, err
	}
	if p.empty() {
		return d, Span{}, nil
	}
	nd, err := p.run()
	if err != nil {
		return nil, Span{}, err
	}
	edits := slices.Clone(p.edits)
	slices.SortFunc(edits, func(a, b Edit) int { return a.Start - b.Start })
	s := Span{Start: edits[0].Start, End: edits[len(edits)-1].End}
	s.Len = len(nd.src) - (len(d.src) - (s.End - s.Start))
	return nd, s, nil
}

func (d *Document) SetField(key string, value any) (*Document, Span, error) {
	return runOne(d, func(p *plan) error { p.setField(key, value); return nil })
}

func (d *Document) SetHeader(label, value string) (*Document, Span, error) {
	return runOne(d, func(p *plan) error { p.setHeaders([]headerValue{{label, value}}); return nil })
}

func (d *Document) AppendItem(item string, path ...string) (*Document, Span, error) {
	return runOne(d, func(p *plan) error { return p.appendItem(item, path...) })
}

func (d *Document) ReplaceBlock(title, name, content string) (*Document, Span, error) {
	return runOne(d, func(p *plan) error { return p.replaceBlock(title, name, content) })
}

func (d *Document) SetSessionEntry(key, heading, item string, closing bool) (*Document, error) {
	nd, _, err := runOne(d, func(p *plan) error { return p.setSessionEntry(key, heading, item, closing) })
	return nd, err
}

func (d *Document) EnsureSections(tmpl func() ([]byte, error), titles ...string) (*Document, []string, error) {
	var missing []string
	for _, t := range titles {
		if _, ok := d.findSection(t); !ok {
			missing = append(missing, t)
		}
	}
	if len(missing) == 0 {
		return d, nil, nil
	}
	src, err := tmpl()
	if err != nil {
		return nil, nil, err
	}
	var added []string
	nd, _, err := runOne(d, func(p *plan) error {
		added = p.ensureSections(src, missing)
		return nil
	})
	return nd, added, err
}

// parseEditable is Parse for a document a save may edit.
func parseEditable(src []byte) (*Document, error) {
	d := Parse(src)
	if err := d.editable(); err != nil {
		return nil, err
	}
	return d, nil
}
