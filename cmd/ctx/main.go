// Command ctx keeps an AI coding agent's work continuous across context compaction,
// session ends and interruptions.
package main

import "os"

func main() { os.Exit(Main(os.Args[1:], SystemStreams(), os.Getenv)) }
