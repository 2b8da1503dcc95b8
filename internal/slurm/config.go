package slurm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pitchtank/pitchtank/internal/runner"
)

// Config is the server's Slurm configuration (`web serve --slurm-config
// FILE`, JSON; docs/scale.md has an example).
type Config struct {
	// Web is the web binary's path on the compute nodes (a shared
	// filesystem, or the same install on every node). Empty: this server's
	// own executable, which is right when the nodes see the server's files.
	Web string `json:"web"`
	// Spool is the directory the server and the nodes share: each run's job
	// script, stdout, stderr and result document go to Spool/run-ID.
	Spool string `json:"spool"`
	// BinDir holds sbatch, squeue, sacct and scancel; empty: PATH.
	BinDir string `json:"bin_dir"`
	// PollInterval is how often one squeue call asks about every job in
	// flight; default "2s".
	PollInterval string `json:"poll_interval"`
	// Targets are the devices that are Slurm partitions.
	Targets []TargetConfig `json:"targets"`
}

// TargetConfig is one target as written in the file.
type TargetConfig struct {
	Name        string   `json:"name"`
	Partition   string   `json:"partition"`
	Gres        string   `json:"gres"`
	Account     string   `json:"account"`
	TimeLimit   string   `json:"time_limit"`   // e.g. "20m"; empty: --run-timeout
	BenchDevice string   `json:"bench_device"` // "0" (default) or "cpu"
	MaxJobs     int      `json:"max_jobs"`     // default 4
	SbatchArgs  []string `json:"sbatch_args"`
}

// Limits of a configuration.
const (
	MaxTargets       = 64
	MaxJobsPerTarget = 10000
	minPoll          = 100 * time.Millisecond
)

// sbatch options pitchtank sets itself, which a target's sbatch_args may
// not, with their short forms; fields names the target's field for those
// a target may choose.
var (
	ownOptions = map[string]string{"--parsable": "", "--job-name": "-J", "--partition": "-p", "--gres": "", "--account": "-A",
		"--time": "-t", "--comment": "", "--chdir": "-D", "--output": "-o", "--error": "-e", "--wrap": "", "--requeue": "",
		"--no-requeue": "", "--array": "-a", "--export": ""}
	fields = map[string]string{"--partition": "partition", "--gres": "gres", "--account": "account", "--time": "time_limit"}
)

// refusedOptions are sbatch options that would break how pitchtank follows
// a job: their short form, and why.
var refusedOptions = map[string][2]string{
	"--hold":     {"-H", "a held job waits for a release nobody sends, and holds one of the target's slots meanwhile"},
	"--wait":     {"-W", "sbatch would return only when the job ends, and the submission would time out"},
	"--clusters": {"-M", "the job would go to a cluster the server's squeue and sacct do not ask about"},
}

// sbatchShortFlags are sbatch's short options that take no value: in
// "-vH" each letter is an option, while after any other letter the rest of
// the argument is that option's value ("-t1" is --time 1).
const sbatchShortFlags = "hHOQsuvVW"

// checkSbatchArg refuses an option pitchtank sets itself or one that
// breaks following the job, in every form sbatch (getopt_long) takes:
// --name=value, an abbreviation of a long name (--tim, --out=),
// -Xvalue, and short flags run together (-vH).
func checkSbatchArg(a string) error {
	if !strings.HasPrefix(a, "-") || a == "-" {
		return fmt.Errorf("%q is not an option (write --qos=high, one argument each)", a)
	}
	name, _, _ := strings.Cut(a, "=")
	if name == "--" {
		return fmt.Errorf("%q would end sbatch's options", a)
	}
	var named []string // the long options a stands for
	if strings.HasPrefix(a, "--") {
		for long := range ownOptions {
			if strings.HasPrefix(long, name) {
				named = append(named, long)
			}
		}
		for long := range refusedOptions {
			if strings.HasPrefix(long, name) {
				named = append(named, long)
			}
		}
	} else {
		for _, c := range a[1:] {
			if long := longOf("-" + string(c)); long != "" {
				named = append(named, long)
				break
			}
			if !strings.ContainsRune(sbatchShortFlags, c) {
				break // the rest is this option's value
			}
		}
	}
	if len(named) == 0 {
		return nil
	}
	slices.Sort(named)
	long := named[0]
	as := ""
	if name != long {
		as = fmt.Sprintf("%q is %s: ", a, long)
	}
	if r, ok := refusedOptions[long]; ok {
		return fmt.Errorf("%s%s (%s) is refused: %s", as, long, r[0], r[1])
	}
	if f := fields[long]; f != "" {
		return fmt.Errorf("%spitchtank sets %s itself (use the target's %s)", as, long, f)
	}
	return fmt.Errorf("%spitchtank sets %s itself", as, long)
}

// longOf returns the long option of a short one pitchtank sets or refuses.
func longOf(short string) string {
	for long, s := range ownOptions {
		if s == short {
			return long
		}
	}
	for long, r := range refusedOptions {
		if r[0] == short {
			return long
		}
	}
	return ""
}

// ParseConfig reads and checks a configuration. Every error names the field
// ("targets[1].gres: ...").
func ParseConfig(data []byte) (*Config, error) {
	// The targets are decoded one by one, so that an error names the
	// target's index (targets[1].max_jobs), which encoding/json does not.
	var file struct {
		Config
		Targets []json.RawMessage `json:"targets"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&file); err != nil {
		return nil, decodeError("", err)
	}
	if dec.More() {
		return nil, errors.New("slurm config: more than one JSON value")
	}
	c := file.Config
	c.Targets = make([]TargetConfig, len(file.Targets))
	for i, raw := range file.Targets {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c.Targets[i]); err != nil {
			return nil, decodeError(fmt.Sprintf("targets[%d]", i), err)
		}
	}
	if c.Web != "" && !filepath.IsAbs(c.Web) {
		return nil, fmt.Errorf("slurm config: web: %q is not an absolute path (the nodes run it from any directory)", c.Web)
	}
	if c.Spool == "" {
		return nil, errors.New("slurm config: spool: a directory the server and the nodes share is required")
	}
	if !filepath.IsAbs(c.Spool) {
		return nil, fmt.Errorf("slurm config: spool: %q is not an absolute path", c.Spool)
	}
	if c.BinDir != "" && !filepath.IsAbs(c.BinDir) {
		return nil, fmt.Errorf("slurm config: bin_dir: %q is not an absolute path", c.BinDir)
	}
	if c.PollInterval != "" {
		d, err := time.ParseDuration(c.PollInterval)
		if err != nil || d < minPoll {
			return nil, fmt.Errorf("slurm config: poll_interval: %q is not a duration of at least %s", c.PollInterval, minPoll)
		}
	}
	if len(c.Targets) == 0 {
		return nil, errors.New("slurm config: targets: name at least one")
	}
	if len(c.Targets) > MaxTargets {
		return nil, fmt.Errorf("slurm config: targets: at most %d", MaxTargets)
	}
	seen := map[string]bool{}
	for i := range c.Targets {
		t := &c.Targets[i]
		field := fmt.Sprintf("slurm config: targets[%d]", i)
		if err := runner.CheckRemoteName(t.Name); err != nil {
			return nil, fmt.Errorf("%s.name: %w", field, err)
		}
		if seen[t.Name] {
			return nil, fmt.Errorf("%s.name: %q is listed twice", field, t.Name)
		}
		seen[t.Name] = true
		for name, v := range map[string]string{"partition": t.Partition, "gres": t.Gres, "account": t.Account} {
			if strings.ContainsAny(v, " \t\n'\"") {
				return nil, fmt.Errorf("%s.%s: %q may not hold spaces or quotes", field, name, v)
			}
		}
		if t.TimeLimit != "" {
			d, err := time.ParseDuration(t.TimeLimit)
			if err != nil || d < time.Second {
				return nil, fmt.Errorf("%s.time_limit: %q is not a duration of at least 1s (e.g. \"20m\")", field, t.TimeLimit)
			}
		}
		switch {
		case t.BenchDevice == "":
			t.BenchDevice = "0"
		case t.BenchDevice == "cpu":
		default:
			if n, err := strconv.Atoi(t.BenchDevice); err != nil || n < 0 || strconv.Itoa(n) != t.BenchDevice {
				return nil, fmt.Errorf("%s.bench_device: %q is neither a GPU ordinal on the node (0: the GPU Slurm allocated) nor \"cpu\"", field, t.BenchDevice)
			}
		}
		if t.BenchDevice != "cpu" && t.Gres == "" {
			return nil, fmt.Errorf("%s.gres: a GPU target needs a GPU from Slurm, e.g. \"gpu:h100:1\" (or bench_device \"cpu\")", field)
		}
		switch {
		case t.MaxJobs == 0:
			t.MaxJobs = 4
		case t.MaxJobs < 0 || t.MaxJobs > MaxJobsPerTarget:
			return nil, fmt.Errorf("%s.max_jobs: %d is not between 1 and %d", field, t.MaxJobs, MaxJobsPerTarget)
		}
		for j, a := range t.SbatchArgs {
			if err := checkSbatchArg(a); err != nil {
				return nil, fmt.Errorf("%s.sbatch_args[%d]: %w", field, j, err)
			}
		}
	}
	return &c, nil
}

// decodeError says what was wrong with the JSON at field in (the file's
// top level if field is "").
func decodeError(in string, err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field, want := te.Field, te.Type.String()
		if in != "" {
			field = strings.Trim(in+"."+field, ".")
		}
		if field == "targets" {
			want = "array of targets"
		} else if strings.HasPrefix(field, "targets[") && !strings.Contains(field, ".") {
			want = "object"
		}
		return fmt.Errorf("slurm config: %s: %s is not a JSON %s", field, te.Value, want)
	}
	// "json: unknown field "x"" and syntax errors, which say where.
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if in != "" {
		return fmt.Errorf("slurm config: %s: %s", in, msg)
	}
	return fmt.Errorf("slurm config: %s", msg)
}

// LoadConfig reads the file at path with ParseConfig.
func LoadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("slurm config: %w", err)
	}
	return ParseConfig(data)
}

// Remotes builds the runner's remote devices: one Executor per target,
// sharing one Client and one Poller. It creates the spool directory.
func (c *Config) Remotes(log *slog.Logger) ([]runner.Remote, *Poller, error) {
	web := c.Web
	if web == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, nil, fmt.Errorf("slurm config: web: find this executable: %w", err)
		}
		web = exe
	}
	if err := os.MkdirAll(c.Spool, 0o700); err != nil {
		return nil, nil, fmt.Errorf("slurm config: spool: %w", err)
	}
	poll := 2 * time.Second
	if c.PollInterval != "" {
		poll, _ = time.ParseDuration(c.PollInterval)
	}
	client := &Client{BinDir: c.BinDir}
	poller := &Poller{Client: client, Interval: poll, Logger: log}
	remotes := make([]runner.Remote, 0, len(c.Targets))
	for _, t := range c.Targets {
		var limit time.Duration
		if t.TimeLimit != "" {
			limit, _ = time.ParseDuration(t.TimeLimit)
		}
		remotes = append(remotes, runner.Remote{Name: t.Name, Executor: &Executor{
			Target: Target{Name: t.Name, Partition: t.Partition, Gres: t.Gres, Account: t.Account, TimeLimit: limit,
				BenchDevice: t.BenchDevice, MaxJobs: t.MaxJobs, SbatchArgs: t.SbatchArgs},
			Client: client, Poller: poller, Web: web, Spool: c.Spool, Logger: log,
		}})
	}
	return remotes, poller, nil
}
