package main

import (
	"context"
	"math"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

func TestParseByteSize(t *testing.T) {
	for in, want := range map[string]int64{
		"512MiB": 512 << 20, "1GiB": 1 << 30, "64KiB": 64 << 10, "100B": 100, "300000000": 300000000, "0": 0, " 2 GiB ": 2 << 30,
	} {
		if got, err := parseByteSize(in); err != nil || got != want {
			t.Errorf("parseByteSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "lots", "-5MiB", "1.5GiB", "12XB", "MiB", "9999999999GiB"} {
		if got, err := parseByteSize(in); err == nil || !strings.Contains(err.Error(), "not a size") {
			t.Errorf("parseByteSize(%q) = %d, %v; want an error", in, got, err)
		}
	}
}

// The policy sets Go's memory limit with the growth trigger off, puts both
// back, and leaves the runtime alone at limit 0.
func TestGCPolicyApply(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	restore := (&gcPolicy{limit: 256 << 20}).apply()
	if got := debug.SetMemoryLimit(-1); got != 256<<20 {
		t.Errorf("memory limit %d, want 256 MiB", got)
	}
	if got := debug.SetGCPercent(-1); got != -1 {
		t.Errorf("GC percent %d while applied, want -1 (off)", got)
	}
	restore()
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("memory limit %d after restore, want %d", got, before)
	}
	pct := debug.SetGCPercent(100)
	debug.SetGCPercent(pct)
	if pct < 0 {
		t.Errorf("GC percent still off after restore")
	}
	(&gcPolicy{}).apply()()
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("limit 0 changed the memory limit to %d", got)
	}
}

func TestGCPolicyRaise(t *testing.T) {
	p := &gcPolicy{limit: 512 << 20}
	for live, want := range map[int64]int64{0: 512 << 20, 256 << 20: 512 << 20, 300 << 20: 600 << 20, 1 << 30: 2 << 30} {
		if got := p.raise(live); got != want {
			t.Errorf("raise(%d) = %d, want %d", live, got, want)
		}
	}
}

// A live heap over half the limit gets the limit raised to twice it: a
// limit of 64 KiB is under any test binary's live heap.
func TestGCPolicyWatchRaises(t *testing.T) {
	p := &gcPolicy{limit: 64 << 10}
	restore := p.apply()
	defer restore()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); p.watch(ctx, 10*time.Millisecond) }()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) && debug.SetMemoryLimit(-1) == 64<<10 {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
	if got := debug.SetMemoryLimit(-1); got <= 64<<10 || got == math.MaxInt64 {
		t.Errorf("memory limit %d after watching a live heap over half of 64 KiB, want it raised", got)
	}
}

func TestByteSizeString(t *testing.T) {
	for n, want := range map[int64]string{1 << 30: "1GiB", 512 << 20: "512MiB", 3 << 10: "3KiB", 1000: "1000", 0: "0"} {
		b := byteSize(n)
		if got := b.String(); got != want {
			t.Errorf("byteSize(%d) = %q, want %q", n, got, want)
		}
		var back byteSize
		if err := back.Set(want); err != nil || back != b {
			t.Errorf("Set(%q) = %d, %v; want %d", want, back, err, n)
		}
	}
}

// GOGC or GOMEMLIMIT in the environment win over the default, not over a
// --memory-limit given on the command line; stop puts Go's limit back.
func TestStartGCEnvironment(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Setenv("GOGC", "200")
	stop := startGC(context.Background(), 256<<20, false, nil)
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("with GOGC set and no --memory-limit: limit %d, want %d untouched", got, before)
	}
	stop()
	stop = startGC(context.Background(), 256<<20, true, nil)
	if got := debug.SetMemoryLimit(-1); got != 256<<20 {
		t.Errorf("with --memory-limit given: limit %d, want 256 MiB", got)
	}
	stop()
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("after stop: limit %d, want %d", got, before)
	}
}
