//go:build linux || darwin

package main

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// faultPages is how many fresh anonymous pages the page-fault probe touches.
const faultPages = 4096

// pageFaultCost touches faultPages fresh anonymous pages once each and returns the mean
// time a touch took: the cost of one minor page fault on this machine. The bench runs
// it in a child process (-fault-probe), so the harness's own peak memory, which Linux
// hands on to every child it starts, stays small.
func pageFaultCost() (time.Duration, error) {
	size := faultPages * os.Getpagesize()
	mem, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return 0, err
	}
	defer func() { _ = syscall.Munmap(mem) }()
	start := time.Now()
	for i := 0; i < size; i += os.Getpagesize() {
		mem[i] = 1
	}
	return time.Since(start) / faultPages, nil
}

// probeFaults prints pageFaultCost in nanoseconds (the child's side of faultCost).
func probeFaults() error {
	d, err := pageFaultCost()
	if err != nil {
		return err
	}
	fmt.Println(d.Nanoseconds())
	return nil
}

// faultCost runs the probe in a child process, three times, and returns the median.
func faultCost() (time.Duration, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, err
	}
	var costs []time.Duration
	for range 3 {
		out, err := exec.Command(self, "-fault-probe").Output()
		if err != nil {
			return 0, fmt.Errorf("page-fault probe: %w", err)
		}
		ns, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("page-fault probe: %w", err)
		}
		costs = append(costs, time.Duration(ns))
	}
	return medianOf(costs), nil
}
