// Command web is pitchtank's single binary: the web app, its admin CLI and
// the bench harness.
//
//	web                         same as "web serve"
//	web serve [--addr HOST:PORT] [--db PATH] [--no-demo] [--secure-cookies] [--trusted-origin URL]...
//	          [--devices 0,1,cpu] [--run-timeout 15m] [--slurm-config slurm.json]
//	web user add --db PATH --name LOGIN --role ROLE [--display NAME]   (password on stdin)
//	web token create --db PATH --user LOGIN [--label TEXT]
//	web backup --db PATH --to FILE
//	web bench ...               (see README, "Benchmarks")
//	web kernel check [--problem NAME] [--json] PATH   (docs/kernel-contract.md)
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pitchtank/pitchtank/internal/demo"
	"github.com/pitchtank/pitchtank/internal/gpu"
	"github.com/pitchtank/pitchtank/internal/httpserver"
	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
	"github.com/pitchtank/pitchtank/internal/sqlite"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usage = `usage:
  web                        run the web app (same as "web serve")
  web serve [--addr HOST:PORT] [--db PATH] [--no-demo] [--secure-cookies] [--trusted-origin URL]...
            [--public-closed-rounds] [--devices 0,1,cpu] [--run-timeout 15m] [--slurm-config slurm.json]
  web user add --db PATH --name LOGIN --role admin|shark|contestant|viewer [--display NAME]
                             (reads the password from stdin)
  web user deactivate|reactivate --db PATH --name LOGIN
  web token create --db PATH --user LOGIN [--label TEXT]
  web backup --db PATH --to FILE
  web bench ...              run the kernel benchmark harness
  web kernel check [--problem NAME] [--json] PATH
                             compile a submitted kernel for every architecture the local NVRTC supports
`

// Exit codes: 0 done, 1 the command failed, 2 it was called wrongly.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

// run is the whole CLI; ctx is cancelled on SIGINT/SIGTERM.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return serve(ctx, nil, stdout, stderr)
	}
	switch args[0] {
	case "serve":
		return serve(ctx, args[1:], stdout, stderr)
	case "bench":
		return runBench(args[1:])
	case "kernel":
		return kernelCmd(args[1:], stdout, stderr)
	case "user":
		if len(args) >= 2 && (args[1] == "deactivate" || args[1] == "reactivate") {
			return userSetActive(ctx, args[1], args[2:], stdout, stderr)
		}
		if len(args) < 2 || args[1] != "add" {
			return usageError(stderr, "web user: the subcommands are \"add\", \"deactivate\" and \"reactivate\"")
		}
		return userAdd(ctx, args[2:], stdin, stdout, stderr)
	case "token":
		if len(args) < 2 || args[1] != "create" {
			return usageError(stderr, "web token: the only subcommand is \"create\"")
		}
		return tokenCreate(ctx, args[2:], stdout, stderr)
	case "backup":
		return backup(ctx, args[1:], stdout, stderr)
	case "help", "-h", "--help", "-help":
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	return usageError(stderr, fmt.Sprintf("web: unknown command %q", args[0]))
}

func usageError(stderr io.Writer, msg string) int {
	fmt.Fprintf(stderr, "%s\n\n%s", msg, usage)
	return exitUsage
}

// parseFlags parses a subcommand's flags; a parse error or a stray
// argument is a usage error.
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer) bool {
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "web %s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		return false
	}
	return true
}

// openExisting opens a database that must already exist: the admin
// commands never create an empty file by mistake (a typo in --db).
func openExisting(path string) (*sqlite.DB, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("database %s: %w", path, err)
	}
	return sqlite.Open(path)
}

// describe turns an error into one line for people: a domain error's
// message (with its field), anything else as it is.
func describe(err error) string {
	var e *pitches.Error
	if errors.As(err, &e) {
		if e.Field != "" {
			return e.Field + ": " + e.Message
		}
		return e.Message
	}
	return err.Error()
}

// cpuProcs is the processor count Go chose for this machine's CPUs, read
// before serve adds its spare one (serve may run more than once in a test).
var cpuProcs = runtime.GOMAXPROCS(0)

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on, HOST:PORT")
	dbPath := fs.String("db", "./pitchtank.db", "SQLite database file (created if missing)")
	noDemo := fs.Bool("no-demo", false, "do not load the demo tournament into an empty database")
	secure := fs.Bool("secure-cookies", false, "mark session cookies Secure (set this behind a TLS proxy)")
	publicClosed := fs.Bool("public-closed-rounds", false, "let visitors who are not logged in read closed rounds")
	var trusted originList
	fs.Var(&trusted, "trusted-origin", "an origin (scheme://host[:port]) allowed to post cross-origin, e.g. a proxy's public URL; repeatable")
	devicesFlag := fs.String("devices", "", "devices runs may use, comma-separated GPU ordinals and/or cpu (default: every GPU found, plus cpu)")
	runTimeout := fs.Duration("run-timeout", runner.DefaultTimeLimit, "the most one run may take before its process group is killed")
	slurmConfig := fs.String("slurm-config", "", "JSON file naming Slurm targets that join the devices (docs/scale.md)")
	maxInFlight := fs.Int("max-inflight", 0, "requests served at once before the excess gets 503 + Retry-After (default 1 per CPU; -1: no limit)")
	queueWait := fs.Duration("queue-wait", 0, "how long a request beyond --max-inflight may wait for a slot before its 503 (default 5ms; -1ns: refuse at once)")
	spareProc := fs.Bool("spare-proc", true, "run Go's scheduler with one processor more than --max-inflight, so arriving requests are read (and the excess refused) while every slot is busy")
	noPageCache := fs.Bool("no-page-cache", false, "compute every page per request (the page cache keeps pages per viewer until the next write)")
	reqTimeout := fs.Duration("request-timeout", 10*time.Second, "the most one request may take before it gets a 503 (event streams exempt; 0: no timeout)")
	memLimit := byteSize(defaultMemoryLimit)
	fs.Var(&memLimit, "memory-limit", "collect garbage when the heap nears this size (B, KiB, MiB, GiB) rather than each time it doubles; raised to twice the live heap if that reaches half of it (0: Go's default, or GOGC and GOMEMLIMIT when set)")
	smtp := addSMTPFlags(fs)
	if !parseFlags(fs, args, stderr) {
		return exitUsage
	}
	if *runTimeout <= 0 {
		return usageError(stderr, "web serve: --run-timeout must be positive")
	}
	if *maxInFlight < -1 {
		return usageError(stderr, "web serve: --max-inflight must be positive, 0 (the default) or -1 (no limit)")
	}
	if *queueWait < -1 {
		return usageError(stderr, "web serve: --queue-wait must be positive, 0 (the default) or -1ns (no wait)")
	}
	if *reqTimeout < 0 {
		return usageError(stderr, "web serve: --request-timeout must not be negative")
	}
	if *reqTimeout == 0 {
		*reqTimeout = -1 // Config's zero means the default
	}
	if *maxInFlight == 0 {
		*maxInFlight = httpserver.MaxInFlightFor(cpuProcs) // per CPU, not per processor (see below)
	}
	if *spareProc && *maxInFlight > 0 {
		// Go's scheduler looks at the network when a processor runs out of
		// work, or from its monitor about every 10 ms. With one page per
		// processor, none runs out under overload, so an arriving request,
		// even one about to be refused, waits unread for that poll:
		// refusals took 15-22 ms at p99. One processor more than the pages
		// served at once stays parked in the network poller, reads each
		// request as it arrives and refuses the excess at once (on 2 CPUs:
		// refused p99 10.2-10.4 ms on the round and pitch pages where 3
		// processors served 2 at once, docs/BENCHMARKS.md section 12); it
		// costs a thread that is asleep unless there is network work.
		runtime.GOMAXPROCS(max(cpuProcs, *maxInFlight+1))
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	defer startGC(ctx, int64(memLimit), flagSet(fs, "memory-limit"), log)()
	devices, err := serveDevices(*devicesFlag, log)
	if err != nil {
		return usageError(stderr, "web serve: "+err.Error())
	}
	remotes, err := slurmRemotes(*slurmConfig, log)
	if err != nil {
		return usageError(stderr, "web serve: --slurm-config: "+err.Error())
	}
	mail, err := smtp.mailer()
	if err != nil {
		return usageError(stderr, "web serve: "+err.Error())
	}

	db, err := sqlite.Open(*dbPath)
	if err != nil {
		fmt.Fprintf(stderr, "web serve: %v\n", err)
		return exitFail
	}
	defer db.Close()

	if !*noDemo {
		empty, err := demo.IsEmpty(ctx, db)
		if err != nil {
			fmt.Fprintf(stderr, "web serve: %v\n", err)
			return exitFail
		}
		if empty {
			logins, err := demo.Load(ctx, db)
			if err != nil {
				fmt.Fprintf(stderr, "web serve: load demo: %s\n", describe(err))
				return exitFail
			}
			fmt.Fprintf(stdout, "Loaded the demo tournament into %s. Demo logins (DEMO ONLY - public passwords, do not use for real data):\n", *dbPath)
			for _, l := range logins {
				fmt.Fprintf(stdout, "  %-12s %-18s %-11s %s\n", l.Login, l.Password, l.Role, l.DisplayName)
			}
		}
	}
	// The landing page mentions the demo's logins only where they work:
	// one bcrypt check of a demo password at start (an admin may have
	// changed it, or there is no demo).
	_, demoErr := db.Authenticate(ctx, demo.Logins[len(demo.Logins)-2].Login, demo.Logins[len(demo.Logins)-2].Password)
	demoLogins := demoErr == nil

	// Finished runs reach the tracker (regressions, provenance, webhooks)
	// through the runner's store; deliveries end after the runner, before
	// the database closes.
	tracker, stopTracking := serveTracking(db, mail, log, stderr)
	defer stopTracking()
	runs, err := runner.New(runner.Config{Store: tracker.WrapStore(db), Catalog: runner.KernelsCatalog{}, Devices: devices, TimeLimit: *runTimeout, Logger: log, Remote: remotes, Kernels: db})
	if err != nil {
		fmt.Fprintf(stderr, "web serve: %v\n", err)
		return exitUsage
	}
	// Runs left "running" by a server that died are marked interrupted here,
	// before anything is served.
	if err := runs.Start(ctx); err != nil {
		fmt.Fprintf(stderr, "web serve: start runner: %v\n", err)
		return exitFail
	}
	// On shutdown (deferred, so before db.Close): running children are
	// cancelled and their runs recorded.
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := runs.Close(cctx); err != nil {
			fmt.Fprintf(stderr, "web serve: stop runner: %v\n", err)
		}
	}()
	streams, endStreams := context.WithCancel(context.Background())
	defer endStreams()

	h, err := httpserver.New(httpserver.Config{SecureCookies: *secure, PublicClosedRounds: *publicClosed, DemoLogins: demoLogins, TrustedOrigins: trusted, Logger: log, Runner: runs, Streams: streams,
		Kernels: kernelChecker(devices, log), MaxInFlight: *maxInFlight, QueueWait: *queueWait, RequestTimeout: *reqTimeout, Tracker: tracker, NoPageCache: *noPageCache}, db)
	if err != nil {
		fmt.Fprintf(stderr, "web serve: %v\n", err)
		return exitUsage
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "web serve: listen on %s: %v\n", *addr, err)
		return exitFail
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	srv.RegisterOnShutdown(endStreams)
	fmt.Fprintf(stdout, "pitchtank listening on http://%s (devices: %s)\n", ln.Addr(), strings.Join(runs.Devices(), ", "))

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		fmt.Fprintf(stderr, "web serve: %v\n", err)
		return exitFail
	case <-ctx.Done():
	}
	// Finish the requests in flight, then stop; a stuck one gets 10s.
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		fmt.Fprintf(stderr, "web serve: shutdown: %v\n", err)
		return exitFail
	}
	fmt.Fprintln(stdout, "pitchtank stopped")
	return exitOK
}

// checkOrdinals refuses GPU ordinals the driver does not report, at start:
// otherwise the server runs, and every run queued on the missing GPU fails
// later with a CUDA error nobody connects to the flag.
func checkOrdinals(devices []string) error {
	top := -1
	for _, d := range devices {
		if n, err := strconv.Atoi(d); err == nil && n > top {
			top = n
		}
	}
	if top < 0 {
		return nil // cpu only
	}
	n, err := gpu.DeviceCount()
	switch {
	case err != nil:
		return fmt.Errorf("--devices: GPU %d named, but no GPU is available here (%v); use --devices cpu", top, err)
	case n == 0:
		return fmt.Errorf("--devices: GPU %d named, but the driver reports no GPU; use --devices cpu", top)
	case top >= n:
		return fmt.Errorf("--devices: GPU %d named, but the driver reports %d GPU(s) (ordinals 0 to %d)", top, n, n-1)
	}
	return nil
}

// serveDevices is the runner's device list: --devices when given, else
// every GPU the driver reports plus "cpu" (just "cpu" where the GPU or its
// driver is unavailable).
func serveDevices(flagValue string, log *slog.Logger) ([]string, error) {
	if strings.TrimSpace(flagValue) != "" {
		var out []string
		seen := map[string]bool{}
		for _, d := range strings.Split(flagValue, ",") {
			d = strings.TrimSpace(d)
			if d == "" {
				continue
			}
			if d != "cpu" {
				if n, err := strconv.Atoi(d); err != nil || n < 0 || strconv.Itoa(n) != d {
					return nil, fmt.Errorf("--devices: %q is neither a GPU ordinal (0, 1, ...) nor cpu", d)
				}
			}
			if seen[d] {
				return nil, fmt.Errorf("--devices: %q listed twice", d)
			}
			seen[d] = true
			out = append(out, d)
		}
		if len(out) == 0 {
			return nil, errors.New("--devices: name at least one device")
		}
		if err := checkOrdinals(out); err != nil {
			return nil, err
		}
		return out, nil
	}
	n, err := gpu.DeviceCount()
	if err != nil {
		log.Info("no GPU available; runs use the cpu device only", slog.Any("err", err))
		n = 0
	}
	out := make([]string, 0, n+1)
	for i := 0; i < n; i++ {
		out = append(out, strconv.Itoa(i))
	}
	return append(out, "cpu"), nil
}

// originList is a repeatable string flag.
type originList []string

func (o *originList) String() string     { return strings.Join(*o, ",") }
func (o *originList) Set(v string) error { *o = append(*o, v); return nil }

func userAdd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("user add", flag.ContinueOnError)
	dbPath := fs.String("db", "", "SQLite database file")
	name := fs.String("name", "", "login name")
	role := fs.String("role", "", "admin, shark, contestant or viewer")
	display := fs.String("display", "", "display name (defaults to the login)")
	if !parseFlags(fs, args, stderr) {
		return exitUsage
	}
	if *dbPath == "" || *name == "" || *role == "" {
		return usageError(stderr, "web user add: --db, --name and --role are required")
	}
	// One line: the password, without its line ending.
	line, err := bufio.NewReader(stdin).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		fmt.Fprintf(stderr, "web user add: read password from stdin: %v\n", err)
		return exitFail
	}
	password := strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
	if password == "" {
		return usageError(stderr, "web user add: give the password on stdin, e.g. printf '%s\\n' \"$PW\" | web user add ...")
	}
	db, err := openExisting(*dbPath)
	if err != nil {
		fmt.Fprintf(stderr, "web user add: %v\n", err)
		return exitFail
	}
	defer db.Close()
	if *display == "" {
		*display = *name
	}
	u, err := db.CreateUser(ctx, *name, *display, pitches.Role(*role), password)
	if err != nil {
		fmt.Fprintf(stderr, "web user add: %s\n", describe(err))
		return exitFail
	}
	auditCLI(ctx, db, stderr, "user.create", pitches.AuditUserTarget(u.ID), nil, pitches.AuditUser(u))
	fmt.Fprintf(stdout, "added user %s (%s, id %d)\n", u.Login, u.Role, u.ID)
	return exitOK
}

// userSetActive deactivates or reactivates a user from the command line.
// Whoever runs it holds the database file, so it acts as an admin that is
// nobody in particular (ID 0): it may deactivate any account, the last
// admin's included, which is how a locked-out operator recovers too.
func userSetActive(ctx context.Context, verb string, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("user "+verb, flag.ContinueOnError)
	dbPath := fs.String("db", "", "SQLite database file")
	name := fs.String("name", "", "login name")
	if !parseFlags(fs, args, stderr) {
		return exitUsage
	}
	if *dbPath == "" || *name == "" {
		return usageError(stderr, "web user "+verb+": --db and --name are required")
	}
	db, err := openExisting(*dbPath)
	if err != nil {
		fmt.Fprintf(stderr, "web user %s: %v\n", verb, err)
		return exitFail
	}
	defer db.Close()
	u, err := db.UserByLogin(ctx, *name)
	if err == nil {
		err = db.SetUserActive(ctx, &pitches.User{Role: pitches.RoleAdmin, Login: cliActor}, u.ID, verb == "reactivate")
	}
	if err != nil {
		fmt.Fprintf(stderr, "web user %s: %s\n", verb, describe(err))
		return exitFail
	}
	if after, err := db.UserByID(ctx, u.ID); err == nil {
		auditCLI(ctx, db, stderr, "user.active", pitches.AuditUserTarget(u.ID), pitches.AuditUser(u), pitches.AuditUser(after))
	}
	fmt.Fprintf(stdout, "%sd user %s\n", verb, u.Login)
	return exitOK
}

func tokenCreate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("token create", flag.ContinueOnError)
	dbPath := fs.String("db", "", "SQLite database file")
	login := fs.String("user", "", "login of the token's owner")
	label := fs.String("label", "cli", "what the token is for")
	if !parseFlags(fs, args, stderr) {
		return exitUsage
	}
	if *dbPath == "" || *login == "" {
		return usageError(stderr, "web token create: --db and --user are required")
	}
	db, err := openExisting(*dbPath)
	if err != nil {
		fmt.Fprintf(stderr, "web token create: %v\n", err)
		return exitFail
	}
	defer db.Close()
	users, err := db.Users(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "web token create: %s\n", describe(err))
		return exitFail
	}
	for _, u := range users {
		if u.Login == *login {
			secret, tok, err := db.CreateToken(ctx, u.ID, *label)
			if err != nil {
				fmt.Fprintf(stderr, "web token create: %s\n", describe(err))
				return exitFail
			}
			auditCLI(ctx, db, stderr, "token.create", pitches.AuditUserTarget(u.ID), nil, map[string]any{"id": tok.ID, "label": tok.Label})
			fmt.Fprintln(stdout, secret)
			return exitOK
		}
	}
	fmt.Fprintf(stderr, "web token create: no user %q\n", *login)
	return exitFail
}

func backup(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("backup", flag.ContinueOnError)
	dbPath := fs.String("db", "", "SQLite database file")
	to := fs.String("to", "", "backup file to write (must not exist)")
	if !parseFlags(fs, args, stderr) {
		return exitUsage
	}
	if *dbPath == "" || *to == "" {
		return usageError(stderr, "web backup: --db and --to are required")
	}
	db, err := openExisting(*dbPath)
	if err != nil {
		fmt.Fprintf(stderr, "web backup: %v\n", err)
		return exitFail
	}
	defer db.Close()
	if err := db.Backup(ctx, *to); err != nil {
		fmt.Fprintf(stderr, "web backup: %s\n", describe(err))
		return exitFail
	}
	fmt.Fprintf(stdout, "backed up %s to %s\n", *dbPath, *to)
	return exitOK
}
