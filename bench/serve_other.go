//go:build darwin

package main

import "fmt"

// benchServe measures the dashboard from /proc, which only Linux has.
func benchServe(string) error {
	fmt.Println("\nctx serve: measured on Linux only (/proc)")
	return nil
}
