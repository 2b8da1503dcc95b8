//go:build linux

// Command loadbench measures pitchtank's pages under load: it seeds a
// database at 1x, 10x and 100x the demo tournament, starts the real
// `web serve` on it, and measures each page closed-loop (N connections,
// each sending its next request when the last is answered) and open-loop
// (a fixed offered rate, each request timed from when it was due), always
// next to /healthz in the same run; then an overload pass, on a server of
// its own started with --no-page-cache (-overload-cache keeps the cache),
// measures a page's capacity closed-loop, offers three times it and
// reports goodput and how fast the excess is refused. Without the cache a
// page's capacity is set by the server's work; with it, by what this
// generator can send from the same cores, and three times that is more
// than it can offer.
//
// Usage, from the repository root (it builds ./cmd/web unless -web names a
// binary):
//
//	go run ./dev/loadbench [-scales 1,10,100] [-d 10s] [-conns 16] [-rate 300] \
//	    [-repeat 1] [-modes closed,open,overload] [-overload round,pitch,standings] \
//	    [-overload-cache] [-pages round,pitch] [-login viewer] [-serve-args '--max-inflight 8'] [-keep DIR] \
//	    [-server-cpus 0] [-overload-repeat 3] [-cpuprofile gen.prof]
//
// -server-cpus pins every server it starts to those CPUs (taskset -c; the
// server's GOMAXPROCS and default in-flight limit follow). Run the generator
// pinned to the others (taskset -c 1 bin/loadbench ... -server-cpus 0) and
// the two stop competing for the same cores: the nearest this one machine
// comes to a generator on another host.
//
// The report is Markdown on stdout; progress goes to stderr. docs/BENCHMARKS.md
// ("Pages under load") has the figures and the exact command. Copy k of the
// demo's rounds is numbered like its original plus 10k, so round 1's copies
// are 11, 21, ...; the pages measured are always the originals' (the round
// page of round 1 and of round 6, the largest, pitch 1, round 1's
// standings), while /runs, /calibration and the home page see every copy.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pitchtank/pitchtank/internal/httpserver"
)

type options struct {
	web       string
	scales    []int
	d         time.Duration
	conns     int
	rate      float64
	repeat    int
	modes     map[string]bool
	overload  []string
	login     string
	serveArgs []string
	keep      string
	only      map[string]bool

	overloadNoCache bool
	writeEvery      time.Duration
	serverCPUs      string
	overloadRepeat  int
	tick            time.Duration
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("loadbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	web := fs.String("web", "", "web binary to serve with (default: go build ./cmd/web into a temporary folder)")
	scales := fs.String("scales", "1,10,100", "database sizes, in multiples of the demo tournament")
	d := fs.Duration("d", 10*time.Second, "length of each measuring pass")
	conns := fs.Int("conns", 16, "closed loop: connections")
	rate := fs.Float64("rate", 300, "open loop: requests per second offered")
	repeat := fs.Int("repeat", 1, "closed loop: passes per page (the median is reported)")
	modes := fs.String("modes", "closed,mixed,open,overload", "what to measure: closed, mixed (closed loop with a write every -write-every), open, overload")
	writeEvery := fs.Duration("write-every", time.Second, "mixed pass: time between two writes")
	overload := fs.String("overload", "round,pitch,standings", "overload pass: the pages offered three times their capacity")
	only := fs.String("pages", "", "measure only these pages (names as in the report, comma-separated; /healthz always)")
	overloadCache := fs.Bool("overload-cache", false, "overload pass: keep the page cache on (by default its server runs with --no-page-cache)")
	login := fs.String("login", "viewer", "demo login whose session and token the requests carry")
	serveArgs := fs.String("serve-args", "", "extra flags for web serve, space-separated (e.g. --max-inflight 8)")
	keep := fs.String("keep", "", "keep the seeded databases in this folder (default: a temporary one, removed)")
	overloadRepeat := fs.Int("overload-repeat", 1, "overload pass: passes per page, each offering three times the capacity measured just before it and taking its ratio to the mean of the capacities just before and after (the machine's speed drifts; the median ratio is reported)")
	serverCPUs := fs.String("server-cpus", "", "pin the servers to these CPUs with taskset -c (e.g. 0); run the generator itself under taskset on the others")
	cpuProfile := fs.String("cpuprofile", "", "write the generator's own CPU profile (pprof) to this file")
	tick := fs.Duration("tick", 200*time.Microsecond, "open loop: wake once per tick to send what is due and read what has come (each latency still timed from its due time, so a tick adds at most its length to it); 0 wakes for every due time and every answer")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintf(stderr, "loadbench: -cpuprofile: %v\n", err)
			return 2
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(stderr, "loadbench: -cpuprofile: %v\n", err)
			return 2
		}
		defer pprof.StopCPUProfile()
	}
	o := options{web: *web, d: *d, conns: *conns, rate: *rate, repeat: max(1, *repeat), login: *login,
		serveArgs: strings.Fields(*serveArgs), keep: *keep, modes: set(*modes), overload: strings.Split(*overload, ","), overloadNoCache: !*overloadCache, writeEvery: *writeEvery, serverCPUs: *serverCPUs, overloadRepeat: max(1, *overloadRepeat), tick: max(0, *tick)}
	if *only != "" {
		o.only = set(*only)
	}
	for _, s := range strings.Split(*scales, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			fmt.Fprintf(stderr, "loadbench: -scales: %q is not a positive whole number\n", s)
			return 2
		}
		o.scales = append(o.scales, n)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := bench(ctx, o, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "loadbench: %v\n", err)
		return 1
	}
	return 0
}

func set(csv string) map[string]bool {
	m := map[string]bool{}
	for _, s := range strings.Split(csv, ",") {
		if s = strings.TrimSpace(s); s != "" {
			m[s] = true
		}
	}
	return m
}

func bench(ctx context.Context, o options, stdout, stderr io.Writer) error {
	dir := o.keep
	if dir == "" {
		tmp, err := os.MkdirTemp("", "loadbench")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	web := o.web
	if web == "" {
		web = filepath.Join(dir, "web")
		fmt.Fprintln(stderr, "building ./cmd/web ...")
		cmd := exec.CommandContext(ctx, "go", "build", "-o", web, "./cmd/web")
		cmd.Stdout, cmd.Stderr = stderr, stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("go build ./cmd/web: %w", err)
		}
	}
	fmt.Fprintf(stdout, "loadbench %s: closed loop %d connections, %s per pass, median of %d; open loop %.0f rps offered for %s; login %s\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), o.conns, o.d, o.repeat, o.rate, o.d, o.login)
	for _, scale := range o.scales {
		if err := benchScale(ctx, o, web, dir, scale, stdout, stderr); err != nil {
			return fmt.Errorf("%dx: %w", scale, err)
		}
	}
	return nil
}

func benchScale(ctx context.Context, o options, web, dir string, scale int, stdout, stderr io.Writer) error {
	path := filepath.Join(dir, fmt.Sprintf("demo-%dx.db", scale))
	for _, suffix := range []string{"", "-wal", "-shm"} {
		_ = os.Remove(path + suffix)
	}
	fmt.Fprintf(stderr, "%dx: seeding %s ...\n", scale, filepath.Base(path))
	t0 := time.Now()
	session, token, err := seed(ctx, path, scale, o.login)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "%dx: seeded in %s\n", scale, time.Since(t0).Round(time.Millisecond))

	base, stop, _, err := startServer(ctx, o.serverCmd(web), path, "", o.serveArgs)
	if err != nil {
		return err
	}
	defer stop()

	cookie := http.Header{"Cookie": {"pitchtank_session=" + session}}
	bearer := http.Header{"Authorization": {"Bearer " + token}}
	targets := []target{
		{name: "/healthz", path: "/healthz"},
		{name: "round", path: "/rounds/1", header: cookie},
		{name: "round6", path: "/rounds/6", header: cookie},
		{name: "pitch", path: "/pitches/1", header: cookie},
		{name: "standings", path: "/api/rounds/1/standings", header: bearer},
		{name: "calibration", path: "/calibration", header: cookie},
		{name: "runs", path: "/runs", header: cookie},
		{name: "home", path: "/", header: cookie},
	}
	if o.only != nil {
		targets = slices.DeleteFunc(targets, func(t target) bool { return t.name != "/healthz" && !o.only[t.name] })
	}
	// Every page must answer 200 before it is measured: a page that
	// answers an error fast would measure nothing useful.
	c := newClient(10 * time.Second)
	for _, t := range targets {
		if st := do(ctx, c, base, t); st != http.StatusOK {
			return fmt.Errorf("%s (%s) answers %d before any load", t.name, t.path, st)
		}
	}

	fmt.Fprintf(stdout, "## %dx the demo\n\n", scale)
	if o.modes["closed"] {
		fmt.Fprintf(stdout, "Closed loop, %d connections:\n\n", o.conns)
		fmt.Fprintln(stdout, "| page | path | throughput (rps) | ratio to /healthz | p50 (ms) | p90 (ms) | p99 (ms) | non-2xx |")
		fmt.Fprintln(stdout, "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
		ratios := map[string][]float64{}
		rps := map[string][]float64{}
		last := map[string]*result{}
		for rep := 0; rep < o.repeat; rep++ {
			var health float64
			for _, t := range targets {
				fmt.Fprintf(stderr, "%dx: closed loop %s (pass %d)\n", scale, t.name, rep+1)
				r := closedLoop(ctx, c, base, t, o.conns, o.d)
				if t.name == "/healthz" {
					health = r.goodput()
				}
				rps[t.name] = append(rps[t.name], r.goodput())
				ratios[t.name] = append(ratios[t.name], r.goodput()/health)
				last[t.name] = r
			}
		}
		for _, t := range targets {
			r := last[t.name]
			p := r.percentiles(isOK, 0.5, 0.9, 0.99)
			fmt.Fprintf(stdout, "| %s | `%s` | %.0f | %.3f | %s | %s | %s | %d |\n", t.name, t.path,
				median(rps[t.name]), median(ratios[t.name]), ms(p[0]), ms(p[1]), ms(p[2]), len(r.samples)-r.count(isOK))
		}
		fmt.Fprintln(stdout)
	}
	if o.modes["mixed"] {
		fmt.Fprintf(stdout, "Closed loop, %d connections, while %s casts a vote in round 5 every %s (each write empties the page cache):\n\n", o.conns, writerLogin, o.writeEvery)
		fmt.Fprintln(stdout, "| page | throughput (rps) | ratio to /healthz | p50 (ms) | p90 (ms) | p99 (ms) | max (ms) | writes |")
		fmt.Fprintln(stdout, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
		var health float64
		for _, t := range targets {
			fmt.Fprintf(stderr, "%dx: mixed %s\n", scale, t.name)
			r, writes, err := mixedLoop(ctx, c, base, t, o.conns, o.d, o.writeEvery)
			if err != nil {
				return err
			}
			if t.name == "/healthz" {
				health = r.goodput()
			}
			p := r.percentiles(isOK, 0.5, 0.9, 0.99, 1)
			fmt.Fprintf(stdout, "| %s | %.0f | %.3f | %s | %s | %s | %s | %d |\n", t.name, r.goodput(), r.goodput()/health,
				ms(p[0]), ms(p[1]), ms(p[2]), ms(p[3]), writes)
		}
		fmt.Fprintln(stdout)
	}
	if o.modes["open"] {
		fmt.Fprintf(stdout, "Open loop, %.0f rps offered:\n\n", o.rate)
		fmt.Fprintln(stdout, "| page | served (rps) | p50 (ms) | p90 (ms) | p99 (ms) | refused (503) | failed | not sent |")
		fmt.Fprintln(stdout, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
		for _, t := range targets {
			fmt.Fprintf(stderr, "%dx: open loop %s\n", scale, t.name)
			r := openLoop(ctx, c, base, t, o.rate, o.d, 1024, o.tick)
			p := r.percentiles(isOK, 0.5, 0.9, 0.99)
			refused := r.count(isRefused)
			fmt.Fprintf(stdout, "| %s | %.0f | %s | %s | %s | %d | %d | %d |\n", t.name, r.goodput(), ms(p[0]), ms(p[1]), ms(p[2]),
				refused, len(r.samples)-r.count(isOK)-refused, r.late)
		}
		fmt.Fprintln(stdout)
	}
	if o.modes["overload"] {
		// The overload pass runs on a server of its own: without the page
		// cache by default, so that its capacity is set by the server's
		// work and three times it is a rate this generator, on the same
		// cores, can offer.
		stop()
		args, what := o.serveArgs, "page cache on"
		if o.overloadNoCache {
			args, what = append([]string{"--no-page-cache"}, o.serveArgs...), "--no-page-cache"
		}
		obase, ostop, opid, err := startServer(ctx, o.serverCmd(web), path, ".overload", args)
		if err != nil {
			return err
		}
		defer ostop()
		if o.serverCPUs != "" {
			what += ", pinned to CPUs " + o.serverCPUs
		}
		limit := inFlight(o.serveArgs, o.serverCPUs)
		fmt.Fprintf(stdout, "Overload (server %s). For each page: the closed loop at %v connections (-conns, the server's in-flight limit and twice that) that serves the most is chosen; then, in turn, that closed loop measures capacity, three times it is offered open loop, and the closed loop measures capacity again. A pass's capacity is the mean of the closed loops just before and just after it, so a drift in the machine's speed between passes cancels, and the chosen loop's own best-of-three is not used as a measurement. The last two columns are the CPU each request cost the server (from /proc) and this generator (getrusage), in the capacity loop before the pass and in the pass itself, in microseconds per request answered:\n\n", what, capacityConns(o.conns, limit))
		fmt.Fprintln(stdout, "| page | capacity before / after (rps) | offered (rps) | goodput (rps) | goodput / capacity | served p50 / p99 (ms) | refused | refused p50 / p99 (ms) | generator lag p50 / p99 (ms) | failed or not sent | CPU per request, capacity loop before: server / generator (us) | CPU per request, overload: server / generator (us) |")
		fmt.Fprintln(stdout, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
		for _, name := range o.overload {
			var t target
			for _, x := range targets {
				if x.name == name {
					t = x
				}
			}
			if t.name == "" {
				continue
			}
			overloadPage(ctx, o, c, obase, opid, t, limit, scale, stdout, stderr)
		}
		fmt.Fprintln(stdout)
	}
	return nil
}

// startServer starts web serve on the database at path and waits until
// it answers /healthz; stop ends it (once, however often it is called).
// serverCmd is the command line that starts web: under taskset with
// -server-cpus.
func (o options) serverCmd(web string) []string {
	if o.serverCPUs == "" {
		return []string{web}
	}
	return []string{"taskset", "-c", o.serverCPUs, web}
}

func startServer(ctx context.Context, cmd []string, path, logSuffix string, extra []string) (base string, stop func(), pid int, err error) {
	addr, err := freeAddr()
	if err != nil {
		return "", nil, 0, err
	}
	args := append(append(slices.Clone(cmd[1:]), "serve", "--addr", addr, "--db", path, "--no-demo", "--devices", "cpu"), extra...)
	srv := exec.Command(cmd[0], args...)
	logf, err := os.Create(path + logSuffix + ".log")
	if err != nil {
		return "", nil, 0, err
	}
	srv.Stdout, srv.Stderr = logf, logf
	if err := srv.Start(); err != nil {
		logf.Close()
		return "", nil, 0, fmt.Errorf("start web serve: %w", err)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			_ = srv.Process.Signal(os.Interrupt)
			done := make(chan struct{})
			go func() { _ = srv.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				_ = srv.Process.Kill()
				<-done
			}
			logf.Close()
		})
	}
	base = "http://" + addr
	if err := waitHealthy(ctx, base, 30*time.Second); err != nil {
		stop()
		return "", nil, 0, err
	}
	// With -server-cpus the command is taskset, which execs web in place:
	// the same process.
	return base, stop, srv.Process.Pid, nil
}

// overloadPage measures one page's goodput at three times its capacity,
// o.overloadRepeat times. Capacity is a closed loop's goodput at the
// connection count that served the most (16 connections refuse some
// requests, which costs CPU; as many as the server admits leave an idle
// gap between an answer and the next request); each pass is bracketed by
// a closed loop before and after it, and its ratio is taken to their mean.
func overloadPage(ctx context.Context, o options, c *client, base string, pid int, t target, limit, scale int, stdout, stderr io.Writer) {
	best, n := 0.0, 0
	for _, k := range capacityConns(o.conns, limit) {
		g := closedLoop(ctx, c, base, t, k, o.d).goodput()
		fmt.Fprintf(stderr, "%dx: overload %s: choosing the capacity loop: %.0f rps at %d connections\n", scale, t.name, g, k)
		if g > best {
			best, n = g, k
		}
	}
	if best == 0 {
		fmt.Fprintf(stdout, "| %s | 0 | | | | | | | | | | |\n", t.name)
		return
	}
	// capCPU is the CPU per request of the last capacity loop.
	var capCPU string
	capacity := func() float64 {
		m := startCPU(pid)
		r := closedLoop(ctx, c, base, t, n, o.d)
		capCPU = usPair(m.perRequest(len(r.samples)))
		g := r.goodput()
		fmt.Fprintf(stderr, "%dx: overload %s: capacity %.0f rps at %d connections\n", scale, t.name, g, n)
		return g
	}
	var ratios, refP99 []float64
	before := capacity()
	for pass := 1; pass <= o.overloadRepeat && ctx.Err() == nil; pass++ {
		label := t.name
		if o.overloadRepeat > 1 {
			label = fmt.Sprintf("%s (pass %d)", t.name, pass)
		}
		offered := 3 * before
		fmt.Fprintf(stderr, "%dx: overload %s at %.0f rps\n", scale, label, offered)
		cpuBefore := capCPU
		m := startCPU(pid)
		r := openLoop(ctx, c, base, t, offered, o.d, 1024, o.tick)
		openCPU := usPair(m.perRequest(len(r.samples)))
		after := capacity()
		mean := (before + after) / 2
		ok := r.percentiles(isOK, 0.5, 0.99)
		ref := r.percentiles(isRefused, 0.5, 0.99)
		refused := r.count(isRefused)
		lag := r.lagPercentiles(0.5, 0.99)
		if mean > 0 {
			ratios = append(ratios, r.goodput()/mean)
		}
		refP99 = append(refP99, float64(ref[1])/1e6)
		fmt.Fprintf(stdout, "| %s | %.0f / %.0f | %.0f | %.0f | %.0f%% | %s / %s | %d | %s / %s | %s / %s | %d | %s | %s |\n", label, before, after, offered,
			r.goodput(), 100*r.goodput()/mean, ms(ok[0]), ms(ok[1]), refused, ms(ref[0]), ms(ref[1]), ms(lag[0]), ms(lag[1]),
			len(r.samples)-r.count(isOK)-refused+r.late, cpuBefore, openCPU)
		before = after
	}
	if len(ratios) > 1 {
		fmt.Fprintf(stdout, "| **%s, median of %d** | | | | **%.0f%%** | | | / %.1f | | | | |\n", t.name, len(ratios), 100*median(ratios), median(refP99))
	}
}

func ms(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 1, 64) }

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 0 {
		return (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return s[len(s)/2]
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func waitHealthy(ctx context.Context, base string, limit time.Duration) error {
	c := newClient(time.Second)
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if do(ctx, c, base, target{path: "/healthz"}) == http.StatusOK {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("web serve did not answer /healthz within %s", limit)
}

// capacityConns are the connection counts the overload pass measures
// capacity at: conns, the server's in-flight limit and twice it.
func capacityConns(conns, limit int) []int {
	out := []int{conns}
	for _, n := range []int{limit, 2 * limit} {
		if n > 0 && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// inFlight is the server's in-flight limit: --max-inflight in args, else
// the default for the CPUs it runs on (cpus, a taskset list; "" for this
// process's own).
func inFlight(args []string, cpus string) int {
	for i, a := range args {
		v, ok := strings.CutPrefix(a, "--max-inflight=")
		if !ok && a == "--max-inflight" && i+1 < len(args) {
			v, ok = args[i+1], true
		}
		if ok {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return 0
			}
			return n
		}
	}
	if n := cpuCount(cpus); n > 0 {
		return httpserver.MaxInFlightFor(n)
	}
	return httpserver.DefaultMaxInFlight()
}

// cpuCount counts the CPUs of a taskset list such as "0", "0,2" or "0-3";
// 0 for "" or a list it cannot read.
func cpuCount(list string) int {
	n := 0
	for _, part := range strings.Split(list, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return 0
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return 0
			}
		}
		n += b - a + 1
	}
	return n
}
