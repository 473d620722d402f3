//go:build !unix

package state

import "os"

// checkPrivate cannot tell here and does not refuse. On Windows the mode bits are made
// up from the read-only attribute (a folder reads 0777) and there are no user ids:
// who may enter a folder is its ACL's business, and the default runtime folder, under
// the user's own %TEMP%, is private through the ACL it inherits.
func checkPrivate(string, os.FileInfo) error {
	return nil
}
