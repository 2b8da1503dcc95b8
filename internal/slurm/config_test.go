package slurm

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseConfig(t *testing.T) {
	c, err := ParseConfig([]byte(`{"web": "/shared/bin/web", "spool": "/shared/pitchtank", "poll_interval": "1s",
		"targets": [{"name": "h100", "partition": "gpu", "gres": "gpu:h100:1", "account": "kern", "time_limit": "20m", "max_jobs": 16, "sbatch_args": ["--qos=high"]},
		            {"name": "cluster-cpu", "bench_device": "cpu"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if h := c.Targets[0]; h.BenchDevice != "0" || h.MaxJobs != 16 {
		t.Errorf("h100 target: %+v", h)
	}
	if cpu := c.Targets[1]; cpu.BenchDevice != "cpu" || cpu.MaxJobs != 4 {
		t.Errorf("cpu target defaults: %+v", cpu)
	}
	bad := map[string]string{
		`{"spool": "/s", "targets": [{"name": "a", "bench_device": "cpu"}], "extra": 1}`:                                            `unknown field "extra"`,
		`{"targets": [{"name": "a", "bench_device": "cpu"}]}`:                                                                       "spool: a directory",
		`{"spool": "rel", "targets": [{"name": "a", "bench_device": "cpu"}]}`:                                                       "spool: \"rel\" is not an absolute path",
		`{"spool": "/s", "web": "web", "targets": [{"name": "a", "bench_device": "cpu"}]}`:                                          "web: \"web\" is not an absolute path",
		`{"spool": "/s", "poll_interval": "1ms", "targets": [{"name": "a", "bench_device": "cpu"}]}`:                                "poll_interval",
		`{"spool": "/s", "targets": []}`:                                                                                            "targets: name at least one",
		`{"spool": "/s", "targets": [{"name": "cpu", "bench_device": "cpu"}]}`:                                                      "targets[0].name",
		`{"spool": "/s", "targets": [{"name": "a", "bench_device": "cpu"}, {"name": "a", "bench_device": "cpu"}]}`:                  "targets[1].name: \"a\" is listed twice",
		`{"spool": "/s", "targets": [{"name": "a"}]}`:                                                                               "targets[0].gres: a GPU target needs",
		`{"spool": "/s", "targets": [{"name": "a", "gres": "gpu:1", "bench_device": "gpu"}]}`:                                       "targets[0].bench_device",
		`{"spool": "/s", "targets": [{"name": "a", "bench_device": "cpu", "time_limit": "soon"}]}`:                                  "targets[0].time_limit",
		`{"spool": "/s", "targets": [{"name": "a", "bench_device": "cpu", "max_jobs": -1}]}`:                                        "targets[0].max_jobs",
		`{"spool": "/s", "targets": [{"name": "a", "bench_device": "cpu", "partition": "a b"}]}`:                                    "targets[0].partition",
		`{"spool": "/s", "targets": [{"name": "a", "bench_device": "cpu", "sbatch_args": ["--time=5"]}]}`:                           "targets[0].sbatch_args[0]: pitchtank sets --time",
		`{"spool": "/s", "targets": [{"name": "a", "bench_device": "cpu", "sbatch_args": ["qos"]}]}`:                                "targets[0].sbatch_args[0]: \"qos\" is not an option",
		`{"spool": "/s", "targets": [{"name": "a", "bench_device": "cpu"}]} {}`:                                                     "more than one JSON value",
		`{"spool": "/s", "targets": [{"name": "a", "bench_device": "cpu", "max_jobs": "8"}]}`:                                       "targets[0].max_jobs: string is not a JSON int",
		`{"spool": "/s", "targets": [{"name": "a", "bench_device": "cpu"}, {"name": "b", "bench_device": "cpu", "max_jobs": "8"}]}`: "targets[1].max_jobs: string is not a JSON int",
		`{"spool": "/s", "targets": [{"name": "a", "bench_device": "cpu"}, {"name": "b", "bench_device": "cpu", "gress": "x"}]}`:    `targets[1]: unknown field "gress"`,
		`{"spool": "/s", "targets": [{"name": "a", "bench_device": "cpu"}, "b"]}`:                                                   "targets[1]: string is not a JSON object",
		`{"spool": "/s", "targets": {"name": "a"}}`:                                                                                 "targets: object is not a JSON array of targets",
		`{"spool": 5, "targets": []}`: "spool: number is not a JSON string",
	}
	for in, want := range bad {
		_, err := ParseConfig([]byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseConfig(%s) = %v, want an error with %q", in, err, want)
		}
	}
}

func TestRemotes(t *testing.T) {
	spool := filepath.Join(t.TempDir(), "spool")
	c, err := ParseConfig([]byte(`{"web": "/opt/web", "spool": "` + spool + `", "poll_interval": "250ms",
		"targets": [{"name": "h100", "gres": "gpu:h100:1", "time_limit": "20m", "max_jobs": 8}, {"name": "b200", "gres": "gpu:b200:1"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	remotes, poller, err := c.Remotes(slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	if len(remotes) != 2 || remotes[0].Name != "h100" || remotes[1].Name != "b200" || poller.Interval != 250*time.Millisecond {
		t.Fatalf("remotes %+v, poll %s", remotes, poller.Interval)
	}
	if st, err := os.Stat(spool); err != nil {
		t.Error(err)
	} else if st.Mode().Perm() != 0o700 {
		t.Errorf("the spool it created has mode %v, want 0700 (runs' results and kernels are not every cluster user's)", st.Mode().Perm())
	}
	h := remotes[0].Executor.(*Executor)
	if h.Slots() != 8 || h.CPU() || h.Target.TimeLimit != 20*time.Minute || h.Web != "/opt/web" || h.Poller != remotes[1].Executor.(*Executor).Poller {
		t.Errorf("h100 executor: %+v", h)
	}
}

// sbatch reads options in more forms than --name=value: an abbreviated long
// name, a short one with its value attached, short flags run together. The
// options pitchtank sets, and those that break following the job, are
// refused in each.
func TestParseConfigSbatchArgForms(t *testing.T) {
	parse := func(arg string) error {
		_, err := ParseConfig([]byte(`{"spool": "/s", "targets": [{"name": "a", "bench_device": "cpu"},
			{"name": "b", "bench_device": "cpu", "sbatch_args": ["--qos=high", "` + arg + `"]}]}`))
		return err
	}
	refused := map[string]string{
		"-t1":              `"-t1" is --time: pitchtank sets --time itself (use the target's time_limit)`,
		"--tim=1":          `"--tim=1" is --time`,
		"-o/tmp/elsewhere": "pitchtank sets --output itself",
		"-pother":          "pitchtank sets --partition itself (use the target's partition)",
		"-Jother":          "pitchtank sets --job-name",
		"--out=/x":         "pitchtank sets --output",
		"--no-req":         "pitchtank sets --no-requeue",
		"--comm=x":         "pitchtank sets --comment",
		"--requeue=1":      "pitchtank sets --requeue",
		"--export=NONE":    "pitchtank sets --export",
		"--hold":           "--hold (-H) is refused: a held job waits",
		"-H":               `"-H" is --hold`,
		"-vH":              `"-vH" is --hold`,
		"--wait":           "--wait (-W) is refused: sbatch would return only when the job ends",
		"-W":               `"-W" is --wait`,
		"--wai":            `"--wai" is --wait`,
		"-Mgpu2":           `"-Mgpu2" is --clusters`,
		"--clusters=gpu2":  "--clusters (-M) is refused",
		"--":               "would end sbatch's options",
	}
	for arg, want := range refused {
		if err := parse(arg); err == nil || !strings.HasPrefix(err.Error(), "slurm config: targets[1].sbatch_args[1]: ") || !strings.Contains(err.Error(), want) {
			t.Errorf("sbatch_args %q: %v, want an error with %q", arg, err, want)
		}
	}
	for _, arg := range []string{"--constraint=h100", "-Ch100", "--time-min=5", "--exclusive", "--gres-flags=enforce-binding",
		"--wait-all-nodes=1", "-qhigh", "-v", "--mem=4G", "--hint=nomultithread"} {
		if err := parse(arg); err != nil {
			t.Errorf("sbatch_args %q: %v, want it accepted", arg, err)
		}
	}
}
