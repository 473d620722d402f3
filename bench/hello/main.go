// Command hello is a Go hello-world: what a process of any Go program costs on this
// machine. make bench runs it after every timed run of ctx and reports each case's ratio
// to it.
package main

import "fmt"

func main() { fmt.Println("hello, world") }
