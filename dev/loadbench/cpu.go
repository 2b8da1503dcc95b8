//go:build linux

package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// CPU accounting for the overload pass. Where the machine is saturated at
// three times capacity, the pass's goodput / capacity is about
// (s - 3r) / (s - r), with s the machine's CPU per served request and r per
// refused one, the generator's share included (docs/BENCHMARKS.md section
// 12): the ratio says how far from 90% a page is, the CPU per request whose
// cost would have to fall. These read it directly: the server's from /proc,
// the generator's own from getrusage.

// clockTick is the unit of /proc/PID/stat's utime and stime: USER_HZ,
// which Linux fixes at 100 for user space whatever the kernel's HZ.
const clockTick = 10 * time.Millisecond

// procCPU is the user and system CPU time process pid has used, from
// /proc/PID/stat.
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("loadbench: reading the server's CPU time: %w", err)
	}
	return parseStatCPU(string(b))
}

// parseStatCPU reads utime and stime (fields 14 and 15) from a
// /proc/PID/stat line. The command name (field 2) is in parentheses and
// may hold spaces and parentheses itself, so fields are counted from the
// last ')'.
func parseStatCPU(line string) (time.Duration, error) {
	i := strings.LastIndexByte(line, ')')
	if i < 0 {
		return 0, fmt.Errorf("loadbench: a /proc stat line without a command name: %.40q", line)
	}
	f := strings.Fields(line[i+1:]) // f[0] is field 3, the state
	if len(f) < 13 {
		return 0, fmt.Errorf("loadbench: a /proc stat line with %d fields after the command name, want at least 13", len(f))
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("loadbench: a /proc stat line's CPU time %q: %w", s, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * clockTick, nil
}

// selfCPU is this process's user and system CPU time (the generator's).
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuMeter measures the server's and the generator's CPU over a span.
type cpuMeter struct {
	pid      int
	srv, gen time.Duration
	ok       bool
}

func startCPU(pid int) cpuMeter {
	s, err := procCPU(pid)
	return cpuMeter{pid: pid, srv: s, gen: selfCPU(), ok: err == nil && pid > 0}
}

// perRequest is the server's and the generator's CPU since m started,
// in microseconds per request of n; ok is false where the server's could
// not be read or n is 0.
func (m cpuMeter) perRequest(n int) (srv, gen float64, ok bool) {
	s, err := procCPU(m.pid)
	g := selfCPU()
	if !m.ok || err != nil || n == 0 {
		return 0, 0, false
	}
	return float64(s-m.srv) / 1e3 / float64(n), float64(g-m.gen) / 1e3 / float64(n), true
}

// usPair formats perRequest's figures for the report.
func usPair(srv, gen float64, ok bool) string {
	if !ok {
		return "-"
	}
	return fmt.Sprintf("%.0f / %.0f", srv, gen)
}
