package slurm

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseSubmit(t *testing.T) {
	for in, want := range map[string]string{"42\n": "42", "42;cluster1\n": "42", "sbatch: warning: something\n77\n": "77"} {
		if got, err := ParseSubmit(in); err != nil || got != want {
			t.Errorf("ParseSubmit(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "Submitted batch job 42\n", "0\n", "-3\n", "042\n"} {
		if got, err := ParseSubmit(in); err == nil {
			t.Errorf("ParseSubmit(%q) = %q, want an error", in, got)
		}
	}
}

// Lines as this project's single-node Slurm 22.05 prints them.
func TestParseSqueue(t *testing.T) {
	out := "5|pitchtank-run-3|PENDING|Resources||/spool/run-3\n" +
		"6|pitchtank-run-4|RUNNING|None|vm|/spool/run-4\n" +
		"1|pt-run-1|FAILED|NonZeroExitCode|vm|(null)\n" +
		"9|x|COMPLETED|None|vm|a|comment|with bars\n"
	got, err := ParseSqueue(out)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Info{
		"5": {ID: "5", Name: "pitchtank-run-3", State: Pending, Reason: "Resources", Comment: "/spool/run-3"},
		"6": {ID: "6", Name: "pitchtank-run-4", State: Running, Node: "vm", Comment: "/spool/run-4"},
		"1": {ID: "1", Name: "pt-run-1", State: Failed, Reason: "NonZeroExitCode", Node: "vm"},
		"9": {ID: "9", Name: "x", State: Completed, Node: "vm", Comment: "a|comment|with bars"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseSqueue:\n got %+v\nwant %+v", got, want)
	}
	if _, err := ParseSqueue("garbage\n"); err == nil {
		t.Error("a line that is not squeue's format was accepted")
	}
}

func TestParseSacct(t *testing.T) {
	out := "1|pt-run-1|FAILED|3:0|vm\n" +
		"2|pt-run-2|FAILED|0:9|vm\n" +
		"2.batch|batch|FAILED|0:9|vm\n" +
		"3|wrap|CANCELLED by 1000|0:15|vm\n" +
		"4|wrap|NODE_FAIL|0:0|gpu07\n" +
		"5|wrap|PENDING|0:0|None assigned\n"
	got, err := ParseSacct(out)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Info{
		"1": {ID: "1", Name: "pt-run-1", State: Failed, Node: "vm", ExitCode: 3, HasExit: true},
		"2": {ID: "2", Name: "pt-run-2", State: Failed, Node: "vm", Signal: 9, HasExit: true},
		"3": {ID: "3", Name: "wrap", State: Cancelled, By: "1000", Node: "vm", Signal: 15, HasExit: true},
		"4": {ID: "4", Name: "wrap", State: NodeFail, Node: "gpu07", HasExit: true},
		"5": {ID: "5", Name: "wrap", State: Pending, HasExit: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseSacct:\n got %+v\nwant %+v", got, want)
	}
	if _, err := ParseSacct("1|two|fields\n"); err == nil {
		t.Error("a short line was accepted")
	}
}

func TestStateEnded(t *testing.T) {
	for _, s := range []State{Completed, Failed, NodeFail, Timeout, Cancelled, Preempted, OutOfMemory, BootFail, Deadline} {
		if !s.Ended() {
			t.Errorf("%s is not Ended", s)
		}
	}
	for _, s := range []State{Pending, Running, "COMPLETING", "CONFIGURING", "SUSPENDED", "REQUEUED", ""} {
		if s.Ended() {
			t.Errorf("%s is Ended", s)
		}
	}
}

func TestSbatchArgs(t *testing.T) {
	got := SbatchArgs(Job{Name: "pitchtank-run-3", Partition: "gpu", Gres: "gpu:h100:1", Account: "kern", TimeLimit: 90*time.Minute + 500*time.Millisecond,
		Comment: "/s/run-3", Dir: "/s/run-3", Stdout: "/s/run-3/stdout", Stderr: "/s/run-3/stderr", Script: "/s/run-3/job.sh", Extra: []string{"--qos=high"},
		Env: []string{"PATH=/usr/bin", "HOME=/h", "SLURM_CONF=/etc/slurm/slurm.conf"}})
	want := []string{"--parsable", "--no-requeue", "--job-name=pitchtank-run-3", "--partition=gpu", "--gres=gpu:h100:1", "--account=kern",
		"--time=0-01:30:01", "--comment=/s/run-3", "--chdir=/s/run-3", "--output=/s/run-3/stdout", "--error=/s/run-3/stderr", "--export=PATH,HOME",
		"--qos=high", "/s/run-3/job.sh"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("SbatchArgs:\n got %q\nwant %q", got, want)
	}
	if got := FormatTime(49*time.Hour + 61*time.Second); got != "2-01:01:01" {
		t.Errorf("FormatTime = %q", got)
	}
}

// JobEnv keeps what bench and sbatch need and nothing else; an environment
// with none of it gives an empty one, not nil (which exec reads as "the
// server's whole environment").
func TestJobEnv(t *testing.T) {
	got := JobEnv([]string{"PATH=/usr/bin", "PITCHTANK_SMTP_PASSWORD=x", "LC_ALL=C", "SLURM_CONF=/etc/slurm.conf", "SBATCH_EXPORT=ALL",
		"CUDA_HOME=/cuda", "GOMEMLIMIT=1GiB", "LD_LIBRARY_PATH=/cuda/lib64"})
	want := []string{"PATH=/usr/bin", "LC_ALL=C", "SLURM_CONF=/etc/slurm.conf", "CUDA_HOME=/cuda", "LD_LIBRARY_PATH=/cuda/lib64"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("JobEnv = %q, want %q", got, want)
	}
	if got := JobEnv([]string{"SECRET=x"}); got == nil || len(got) != 0 {
		t.Errorf("JobEnv of nothing it keeps = %#v, want an empty, non-nil list", got)
	}
}

// The job script hands bench its arguments unchanged, quotes and spaces
// included: a real shell runs it with printf standing in for web.
func TestScriptQuoting(t *testing.T) {
	printf, err := exec.LookPath("printf")
	if err != nil {
		t.Skip("no printf binary to stand in for web: " + err.Error())
	}
	args := []string{"%s\n", "bench", "--variant", "baseline?stages=3&x='y'", "two words", `back\slash $HOME`}
	path := filepath.Join(t.TempDir(), "job.sh")
	if err := os.WriteFile(path, []byte(Script(3, "h100", printf, args)), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("sh", path).Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n"); !reflect.DeepEqual(got, args[1:]) {
		t.Errorf("the script passed %q, want %q", got, args[1:])
	}
}

// The job script sets umask 077 before bench starts: what bench writes is
// as private as the run's directory.
func TestScriptUmask(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh: " + err.Error())
	}
	path := filepath.Join(t.TempDir(), "job.sh")
	if err := os.WriteFile(path, []byte(Script(3, "h100", sh, []string{"-c", "umask"})), 0o700); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("sh", path).Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); got != "0077" && got != "077" {
		t.Errorf("the job's umask is %s, want 077", got)
	}
}

// The stdout follower hands over each complete line once, keeps a partial
// line until its newline, and the last one at the end.
func TestLineReader(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stdout")
	var got []string
	l := &lineReader{path: path, line: func(b []byte) { got = append(got, string(b)) }}
	l.read(false) // no file yet
	write := func(s string) {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(s)
		f.Close()
	}
	write("one\ntw")
	l.read(false)
	write("o\n\nthree")
	l.read(false)
	if !reflect.DeepEqual(got, []string{"one", "two"}) {
		t.Fatalf("before the end: %q", got)
	}
	l.read(true)
	if !reflect.DeepEqual(got, []string{"one", "two", "three"}) {
		t.Fatalf("at the end: %q", got)
	}
}

// A job's stdout without newlines (a kernel's printf gone wrong) costs the
// server one capped line, not the output's size: the reader keeps at most
// maxLineBytes of it and hands over that much once the line ends, as the
// runner does for a local child.
func TestLineReaderCapsLongLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stdout")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var got []string
	l := &lineReader{path: path, line: func(b []byte) { got = append(got, string(b)) }}
	chunk := bytes.Repeat([]byte("A"), 1<<20)
	for range 3 {
		for range 8 {
			if _, err := f.Write(chunk); err != nil {
				t.Fatal(err)
			}
		}
		l.read(false)
		if held := cap(l.partial) + cap(l.buf); held > 2*maxLineBytes {
			t.Fatalf("after %d MiB without a newline the reader holds %d bytes", l.off>>20, held)
		}
	}
	if len(got) != 0 {
		t.Fatalf("handed over %d lines before the newline", len(got))
	}
	if _, err := f.WriteString("BBB\n{\"type\":\"progress\"}\n"); err != nil {
		t.Fatal(err)
	}
	l.read(true)
	if len(got) != 2 || len(got[0]) != maxLineBytes || strings.Trim(got[0], "A") != "" || got[1] != `{"type":"progress"}` {
		t.Errorf("lines: %d, the first %d bytes; want the long one cut at %d, then the progress line", len(got), len(got[0]), maxLineBytes)
	}
}

// TestScaleTail measures docs/scale.md's cost of following N jobs' stdout
// files on the spool: one pass over every file, each with a new progress
// line. Only with PITCHTANK_SLURM_SCALE=N.
func TestScaleTail(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("PITCHTANK_SLURM_SCALE"))
	if n <= 0 {
		t.Skip("measures the spool at scale for docs/scale.md; set PITCHTANK_SLURM_SCALE=1000 to run it")
	}
	dir := t.TempDir()
	line := `{"type":"progress","phase":"timing","shape":2,"shapes":9,"samples":40,"median_us":12.5}` + "\n"
	lines := 0
	readers := make([]*lineReader, n)
	files := make([]*os.File, n)
	for i := range n {
		f, err := os.Create(filepath.Join(dir, strconv.Itoa(i)))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		files[i] = f
		readers[i] = &lineReader{path: f.Name(), line: func([]byte) { lines++ }}
	}
	const passes = 20
	var took time.Duration
	for range passes {
		for _, f := range files {
			f.WriteString(line)
		}
		start := time.Now()
		for _, r := range readers {
			r.read(false)
		}
		took += time.Since(start)
	}
	if lines != n*passes {
		t.Fatalf("%d lines read, want %d", lines, n*passes)
	}
	t.Logf("one pass over %d stdout files, a new line in each: %s", n, (took / passes).Round(10*time.Microsecond))
}
