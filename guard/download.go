package guard

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// downloaders fetch a URL, printing it to stdout when told to (or, for curl, by
// default). Their output fed to a shell runs code that nobody has read.
var downloaders = map[string]bool{
	"curl": true, "wget": true, "wget2": true, "fetch": true, "http": true, "https": true,
	"xh": true, "curlie": true, "aria2c": true,
}

// interpreters run a program read from stdin when given no program file, as shells do.
var interpreters = map[string]bool{
	"python": true, "python3": true, "python2": true, "perl": true, "ruby": true, "node": true, "php": true,
	"deno": true, "bun": true,
}

// downloads reports whether a command or process substitution runs a downloader, so
// that its text is a download: "$(curl URL)", <(wget -qO- URL). Answers are kept per
// node, so nested substitutions are walked once each however often their words are
// resolved.
func (c *checker) downloads(n syntax.Node) unseen {
	if d, ok := c.downloaded[n]; ok {
		return d
	}
	var found unseen
	syntax.Walk(n, func(m syntax.Node) bool {
		if found == unseenDownload {
			return false
		}
		switch m := m.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst:
			if m != n {
				found = max(found, c.downloads(m))
				return false
			}
		case *syntax.CallExpr:
			found = max(found, c.downloaderCall(m))
		}
		return found != unseenDownload
	})
	if c.downloaded == nil {
		c.downloaded = map[syntax.Node]unseen{}
	}
	c.downloaded[n] = found
	return found
}

// downloaderCall reports whether call runs a downloader, through any wrappers, judging
// by its literal words only: resolving its words could walk nested substitutions again.
func (c *checker) downloaderCall(call *syntax.CallExpr) unseen {
	args := make([]arg, 0, len(call.Args))
	for _, w := range call.Args {
		s, ok := plainWord(w, false)
		args = append(args, arg{s: s, known: ok})
	}
	return producer(c.unwrap(args, &scope{}).args)
}

// unseen says where code nobody has read comes from: a download, or text a decoder
// produces at run time (base64 -d and the like), which the guard cannot read either.
type unseen uint8

const (
	unseenNone unseen = iota
	unseenDecoded
	unseenDownload
)

// producer reports whether the command args runs prints code nobody has read.
func producer(args []arg) unseen {
	if len(args) == 0 || !args[0].known {
		return unseenNone
	}
	name := commandName(args[0].s)
	switch {
	case downloaders[name]:
		return unseenDownload
	case decodes(name, args[1:]):
		return unseenDecoded
	}
	return unseenNone
}

// decodes reports whether the command turns encoded text back into what it encodes:
// base64 -d, base32 -d, xxd -r, openssl's decoders, uudecode, and the decompressors.
func decodes(name string, args []arg) bool {
	has := func(opts ...string) bool {
		for _, a := range args {
			for _, o := range opts {
				if a.known && (a.s == o || len(o) == 2 && o[0] == '-' && len(a.s) > 2 && a.s[0] == '-' && a.s[1] != '-' && strings.IndexByte(a.s[1:], o[1]) >= 0) {
					return true
				}
			}
		}
		return false
	}
	switch name {
	case "base64", "base32", "basenc", "gbase64":
		return has("-d", "--decode", "-D")
	case "xxd":
		return has("-r", "-revert")
	case "openssl":
		return has("-d", "-base64", "-a") || len(args) > 0 && args[0].known && (args[0].s == "base64" || args[0].s == "enc") && has("-d")
	case "uudecode", "zcat", "gunzip", "bunzip2", "xzcat", "unxz", "zstdcat", "unzstd", "bzcat", "lzcat":
		return true
	case "gzip", "bzip2", "xz", "zstd", "lz4":
		return has("-d", "--decompress")
	}
	return false
}

// what names the source of unseen code in a refusal.
func (u unseen) what() string {
	if u == unseenDecoded {
		return "text decoded at run time"
	}
	return "a download"
}

func (c *checker) denyPipeToShell(text, how string) {
	c.deny(rulePipeToShell, "Refused "+text+": it "+how+", running code straight from the network that nobody has read; download it to a file with `curl -fsSL -o install.sh URL`, read it, and ask the user to run it.")
}

// denyUnseen refuses running code nobody has read: a download (pipe-to-shell), or text
// decoded at run time, which the guard cannot judge (unjudgeable). how says what the
// command does with it, "{}" standing for where it comes from.
func (c *checker) denyUnseen(u unseen, text, how string) {
	how = strings.ReplaceAll(how, "{}", u.what())
	if u == unseenDownload {
		c.denyPipeToShell(text, how)
		return
	}
	c.deny(ruleUnjudgeable, "Refused "+text+": it "+how+", so the guard cannot know what it runs; decode it to a file, read it, and run the commands you mean by name.")
}
