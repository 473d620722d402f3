package claude

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
)

// transcriptHead bounds how much of a transcript's start is read for its first
// message: it comes after a few bookkeeping lines.
const transcriptHead = 256 << 10

// FirstMessageUUID returns the uuid of the first conversation line of a transcript (a
// message, or the attachment a hook's output became), "" when its head holds none. A
// fork or a resume under a new id copies the conversation, uuids and all, so this
// uuid names the conversation a session came from.
func FirstMessageUUID(path string) string {
	sc := bufio.NewScanner(bytes.NewReader(readHead(path)))
	sc.Buffer(make([]byte, 64<<10), transcriptHead)
	for sc.Scan() {
		var e struct {
			Type        string `json:"type"`
			UUID        string `json:"uuid"`
			IsSidechain bool   `json:"isSidechain"`
		}
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.IsSidechain || e.UUID == "" {
			continue
		}
		switch e.Type {
		case "user", "assistant", "attachment", "system":
			return e.UUID
		}
	}
	return ""
}

// HoldsMessage reports whether the head of the transcript at path holds the line
// whose uuid is given: the uuid as a JSON string, however the line is spaced (a uuid
// names one line; another line quoting it, as its parentUuid, continues it).
func HoldsMessage(path, uuid string) bool {
	return uuid != "" && bytes.Contains(readHead(path), []byte(`"`+uuid+`"`))
}

func readHead(path string) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer func() { _ = f.Close() }()
	b, _ := io.ReadAll(io.LimitReader(f, transcriptHead))
	return b
}
