//go:build !unix

package main

import (
	"os"
	"time"
)

// readFileWithin is the poll(2) reader of Unix systems; elsewhere stdin is read by a
// goroutine with a timer (the caller's fallback).
func readFileWithin(*os.File, int64, time.Duration) (data []byte, handled bool, err error) {
	return nil, false, nil
}
