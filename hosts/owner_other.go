//go:build !unix

package hosts

import "os"

// ownedByMe cannot tell without Unix user ids; the folder's mode is checked alone.
func ownedByMe(os.FileInfo) bool { return true }
