//go:build !linux

package main

import "time"

// newEpollLoops: the event-loop engine needs Linux's epoll; elsewhere the
// goroutine engine runs.
func newEpollLoops(timeout time.Duration) loops { return newGoroutineLoops(16, timeout) }
