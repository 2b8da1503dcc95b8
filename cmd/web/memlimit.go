package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"time"
)

// The server's garbage collection (issue 13). Go collects each time the
// heap has grown by the live heap since the last collection (GOGC=100). The
// server's live heap is small (tens of MB), so under load it collects
// several times a second: on this 2-core machine the collector's workers
// took 7% of the server's CPU in the standings overload pass, and a
// refused request's parse allocates as much as a served one's. With the
// collector deferred until the heap nears a memory limit, the standings
// page kept 88-98% of its capacity at three times it offered, against 82%
// in the same minutes, and the pitch page's capacity rose by a fifth
// (docs/BENCHMARKS.md section 12, eleventh session).

// defaultMemoryLimit is --memory-limit's default: the heap may grow to this
// before it is collected.
const defaultMemoryLimit = 1 << 30

// byteSize is a flag holding a size in bytes, written as a count with an
// optional unit: B, KiB, MiB or GiB (GOMEMLIMIT's units).
type byteSize int64

// sizeUnits are byteSize's units, largest first (so "B" is tried last as
// a suffix, and String picks the largest that divides).
var sizeUnits = []struct {
	suffix string
	scale  int64
}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}}

func (b *byteSize) String() string {
	n := int64(*b)
	for _, u := range sizeUnits[:len(sizeUnits)-1] {
		if n != 0 && n%u.scale == 0 {
			return strconv.FormatInt(n/u.scale, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

func (b *byteSize) Set(s string) error {
	n, err := parseByteSize(s)
	if err != nil {
		return err
	}
	*b = byteSize(n)
	return nil
}

// parseByteSize reads "512MiB", "1GiB", "300000000" or "0".
func parseByteSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	unit := int64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, unit = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.scale
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/unit {
		return 0, fmt.Errorf("%q is not a size: want a whole number of bytes, optionally with B, KiB, MiB or GiB (e.g. 512MiB)", s)
	}
	return n * unit, nil
}

// gcPolicy defers collection to a soft memory limit: the heap grows to
// limit before it is collected (Go's memory limit, with the growth trigger
// off). A live heap that reached half the limit would make the collector
// run ever more often as it approached it, so watch raises the limit to
// twice the live heap when that happens. limit <= 0 leaves Go's defaults
// (and the GOGC and GOMEMLIMIT environment variables) alone.
type gcPolicy struct {
	limit int64
	log   *slog.Logger
}

// apply sets the policy; the returned func puts back what was there
// before (for tests, which share the process).
func (p *gcPolicy) apply() (restore func()) {
	if p.limit <= 0 {
		return func() {}
	}
	oldLimit := debug.SetMemoryLimit(p.limit)
	oldPercent := debug.SetGCPercent(-1)
	return func() {
		debug.SetGCPercent(oldPercent)
		debug.SetMemoryLimit(oldLimit)
	}
}

// raise returns the limit the policy should have for a live heap of live
// bytes: twice the live heap once it reaches half the limit, else the same.
func (p *gcPolicy) raise(live int64) int64 {
	if live > p.limit/2 {
		return 2 * live
	}
	return p.limit
}

// watch checks the live heap every interval until ctx ends, raising the
// limit where raise says so.
func (p *gcPolicy) watch(ctx context.Context, interval time.Duration) {
	if p.limit <= 0 {
		return
	}
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return // not reported by this runtime: keep the limit
		}
		live := int64(sample[0].Value.Uint64())
		if next := p.raise(live); next != p.limit {
			if p.log != nil {
				p.log.Warn("live heap reached half the memory limit; raising the limit", "live_bytes", live, "old_limit", p.limit, "new_limit", next)
			}
			p.limit = next
			debug.SetMemoryLimit(next)
		}
	}
}

// startGC applies the policy for --memory-limit's value (explicit: given
// on the command line; if not, GOGC or GOMEMLIMIT in the environment win)
// and watches the live heap until stop, which puts Go's settings back.
func startGC(ctx context.Context, limit int64, explicit bool, log *slog.Logger) (stop func()) {
	p := &gcPolicy{limit: limit, log: log}
	if !explicit && (os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "") {
		p.limit = 0 // the operator's own settings
	}
	restore := p.apply()
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); p.watch(ctx, 10*time.Second) }()
	return func() { cancel(); <-done; restore() }
}

// flagSet reports whether name was given on fs's command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
