package loader

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io/fs"
	"math"
	"sync"

	"github.com/ctxtools/ctx/markdown"
)

// The index file's encoding (and the folder and steps caches', foldercache.go and
// stepscache.go): a magic line, then unsigned varints and length-prefixed strings in the
// order of the fields below, then a CRC-32C of all of it, so that a byte changed
// anywhere (a bad disk, a stray write) makes the file no index rather than an index
// that says something else. It is written by this file's encoder and read by its
// decoder only, so it needs no schema; a file that does not decode to the end, exactly,
// is no index (and is rebuilt). It replaced encoding/gob, whose package start-up every
// ctx process paid, hooks included, for a file only listings read.

// indexMagic opens every index file; the version follows it.
const indexMagic = "ctx project index\n"

var errIndexCorrupt = errors.New("project index: corrupt")

func encodeIndex(idx *projectIndex) []byte {
	e := indexEncoder{buf: make([]byte, 0, 256*len(idx.Entries)+64)}
	e.buf = append(e.buf, indexMagic...)
	e.int(int64(idx.Version))
	e.str(idx.Key)
	e.uint(uint64(len(idx.Entries)))
	for dir, en := range idx.Entries {
		e.str(dir)
		e.uint(uint64(len(en.Stamps)))
		for _, s := range en.Stamps {
			e.stamp(s)
		}
		for _, s := range []string{en.Name, en.Status, en.Description} {
			e.str(s)
		}
		e.progress(en.Progress)
		e.uint(uint64(len(en.Problems)))
		for _, s := range en.Problems {
			e.str(s)
		}
		for _, s := range []string{en.Overview, en.Plan, en.Steps, en.StepsProblem} {
			e.str(s)
		}
	}
	return e.finish()
}

type indexEncoder struct{ buf []byte }

// crcTable is built at first use, like everything in ctx that is not needed by every
// process (docs/architecture.md, "Start-up cost").
var crcTable = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// finish appends the checksum newDecoder checks and returns the file's bytes.
func (e *indexEncoder) finish() []byte {
	return binary.LittleEndian.AppendUint32(e.buf, crc32.Checksum(e.buf, crcTable()))
}

func (e *indexEncoder) uint(n uint64) { e.buf = binary.AppendUvarint(e.buf, n) }
func (e *indexEncoder) int(n int64)   { e.buf = binary.AppendVarint(e.buf, n) }
func (e *indexEncoder) str(s string)  { e.uint(uint64(len(s))); e.buf = append(e.buf, s...) }
func (e *indexEncoder) stamp(s fileStamp) {
	e.str(s.Path)
	e.int(s.Size)
	e.int(s.ModTime)
	e.int(s.Ctime)
	e.uint(s.Ino)
	e.uint(uint64(s.Mode))
	e.bool(s.Link)
	e.bool(s.Missing)
}

func (e *indexEncoder) progress(p markdown.Progress) {
	for _, n := range []int{p.TasksTotal, p.TasksCompleted, p.Percent, p.CurrentTaskNumber, p.CurrentSectionNumber} {
		e.int(int64(n))
	}
	e.str(p.CurrentTask)
	e.str(p.CurrentSection)
}

func (e *indexEncoder) bool(b bool) {
	if b {
		e.buf = append(e.buf, 1)
	} else {
		e.buf = append(e.buf, 0)
	}
}

// decodeIndex reads what encodeIndex wrote. Every length is checked against the bytes
// left, so a damaged or hostile file costs at most its own size.
func decodeIndex(data []byte) (*projectIndex, error) {
	d, ok := newDecoder(data, indexMagic)
	if !ok {
		return nil, errIndexCorrupt
	}
	idx := &projectIndex{Version: d.smallInt(), Key: d.str()}
	n := d.count(8) // the smallest entry is more than 8 bytes
	idx.Entries = make(map[string]indexEntry, n)
	for range n {
		dir := d.str()
		var en indexEntry
		en.Stamps = make([]fileStamp, d.count(6))
		for i := range en.Stamps {
			en.Stamps[i] = d.stamp()
		}
		en.Name, en.Status, en.Description = d.str(), d.str(), d.str()
		en.Progress = d.progress()
		en.Problems = make([]string, d.count(1))
		for i := range en.Problems {
			en.Problems[i] = d.str()
		}
		en.Overview, en.Plan, en.Steps, en.StepsProblem = d.str(), d.str(), d.str(), d.str()
		if d.err != nil {
			return nil, d.err
		}
		idx.Entries[dir] = en
	}
	if !d.done() {
		return nil, errIndexCorrupt
	}
	return idx, nil
}

// indexDecoder reads values off rest, the file as one string: a string value is a
// slice of it, not a copy, so decoding thousands of names allocates nothing per name.
// After the first error every read gives a zero value and err stays set.
type indexDecoder struct {
	rest string
	err  error
}

// newDecoder checks that data is a whole file of the kind magic opens, by its magic
// and its checksum, and returns a decoder for what lies between them.
func newDecoder(data []byte, magic string) (indexDecoder, bool) {
	n := len(data) - 4
	if n < len(magic) || string(data[:len(magic)]) != magic ||
		crc32.Checksum(data[:n], crcTable()) != binary.LittleEndian.Uint32(data[n:]) {
		return indexDecoder{}, false
	}
	return indexDecoder{rest: string(data[len(magic):n])}, true
}

// done reports whether everything decoded and nothing is left over.
func (d *indexDecoder) done() bool { return d.err == nil && d.rest == "" }

// uint reads what binary.AppendUvarint wrote.
func (d *indexDecoder) uint() uint64 {
	if d.err != nil {
		return 0
	}
	var x uint64
	for i, shift := 0, uint(0); i < len(d.rest) && i < binary.MaxVarintLen64; i, shift = i+1, shift+7 {
		b := d.rest[i]
		if b < 0x80 {
			if i == binary.MaxVarintLen64-1 && b > 1 {
				break // overflows 64 bits
			}
			d.rest = d.rest[i+1:]
			return x | uint64(b)<<shift
		}
		x |= uint64(b&0x7f) << shift
	}
	d.err = errIndexCorrupt
	return 0
}

// int reads what binary.AppendVarint wrote (zig-zag).
func (d *indexDecoder) int() int64 {
	u := d.uint()
	x := int64(u >> 1) //nolint:gosec // zig-zag decoding
	if u&1 != 0 {
		x = ^x
	}
	return x
}

// smallInt reads a signed number that must fit in 32 bits (a count or a version).
func (d *indexDecoder) smallInt() int {
	n := d.int()
	if n > math.MaxInt32 || n < math.MinInt32 {
		d.err = errIndexCorrupt
		return 0
	}
	return int(n)
}

// count reads a number of items of at least min bytes each, refused when the bytes
// left cannot hold them.
func (d *indexDecoder) count(minBytes int) int {
	n := d.uint()
	if n > uint64(len(d.rest)/minBytes) {
		d.err = errIndexCorrupt
		return 0
	}
	return int(n) //nolint:gosec // bounded by len(d.rest)
}

func (d *indexDecoder) str() string {
	n := d.uint()
	if n > uint64(len(d.rest)) {
		d.err = errIndexCorrupt
	}
	if d.err != nil {
		return ""
	}
	s := d.rest[:n]
	d.rest = d.rest[n:]
	return s
}

func (d *indexDecoder) stamp() fileStamp {
	s := fileStamp{Path: d.str(), Size: d.int(), ModTime: d.int(), Ctime: d.int(), Ino: d.uint()}
	mode := d.uint()
	if mode > math.MaxUint32 {
		d.err = errIndexCorrupt
	}
	s.Mode, s.Link, s.Missing = fs.FileMode(mode), d.bool(), d.bool()
	return s
}

func (d *indexDecoder) progress() markdown.Progress {
	var p markdown.Progress
	for _, n := range []*int{&p.TasksTotal, &p.TasksCompleted, &p.Percent, &p.CurrentTaskNumber, &p.CurrentSectionNumber} {
		*n = d.smallInt()
	}
	p.CurrentTask, p.CurrentSection = d.str(), d.str()
	return p
}

func (d *indexDecoder) byte() byte {
	if d.err != nil {
		return 0
	}
	if d.rest == "" {
		d.err = errIndexCorrupt
		return 0
	}
	b := d.rest[0]
	d.rest = d.rest[1:]
	return b
}

func (d *indexDecoder) bool() bool {
	b := d.byte()
	if b > 1 {
		d.err = errIndexCorrupt
	}
	return b == 1
}
