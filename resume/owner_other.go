//go:build !unix

package resume

import "os"

// ownerOf reports the owner as unknown: without Unix user and group ids (Windows
// keeps owners in ACLs), a save neither records nor restores one, and a replaced
// save point keeps the ACL its folder gives new files.
func ownerOf(os.FileInfo) (uid, gid int, ok bool) {
	return 0, 0, false
}

// mayWrite cannot ask the system beforehand here, so it does not refuse: the
// read-only attribute is already seen in the mode bits (no 0o200), and any other
// denial surfaces as the write's own error.
func mayWrite(string) bool {
	return true
}
