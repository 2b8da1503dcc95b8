package runner_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
)

// scripted is an Executor whose behaviour each test writes: the runner's
// side of the seam (queue, statuses, judging, fan-out, restart) is real.
type scripted struct {
	slots int
	cpu   bool
	run   func(run *runner.Run, x *runner.Execution) runner.Outcome

	mu      sync.Mutex
	calls   []bool // Resumed of each call
	running int
	most    int
}

func (s *scripted) Slots() int { return s.slots }
func (s *scripted) CPU() bool  { return s.cpu }
func (s *scripted) Execute(run *runner.Run, x *runner.Execution) runner.Outcome {
	s.mu.Lock()
	s.calls = append(s.calls, x.Resumed)
	s.running++
	s.most = max(s.most, s.running)
	s.mu.Unlock()
	defer func() { s.mu.Lock(); s.running--; s.mu.Unlock() }()
	return s.run(run, x)
}

// measured hands the runner the fixture document as bench would leave it.
func measured(t testing.TB, x *runner.Execution) runner.Outcome {
	doc, err := os.ReadFile(fixtureAA)
	if err != nil {
		t.Error(err)
	}
	path := filepath.Join(t.TempDir(), "result.json")
	if err := os.WriteFile(path, doc, 0o644); err != nil {
		t.Error(err)
	}
	x.Line([]byte(`{"type":"progress","phase":"timing","shape":0,"shapes":9,"samples":5,"median_us":12.5}`))
	x.Line([]byte("a line that is not JSON"))
	return runner.Outcome{Exited: true, Code: 0, ResultPath: path}
}

func remoteRequest(device string) runner.Request {
	r := cpuRequest(0)
	r.Device = device
	return r
}

// A run on a remote device goes through its executor: the progress it
// relays reaches subscribers, its notes reach the run's log, and its exit
// is judged like a local child's (the fixture: succeeded with 9 shapes).
func TestRemoteRunThroughExecutor(t *testing.T) {
	ex := &scripted{slots: 1, cpu: true}
	ex.run = func(run *runner.Run, x *runner.Execution) runner.Outcome {
		if x.Resumed || x.TimeLimit != 7*time.Minute {
			t.Errorf("execution: resumed %v, time limit %s", x.Resumed, x.TimeLimit)
		}
		x.Note("job 12 running on node7")
		return measured(t, x)
	}
	r := newRunner(t, runner.Config{Devices: []string{"cpu"}, TimeLimit: 7 * time.Minute, Remote: []runner.Remote{{Name: "cluster", Executor: ex}}})
	if got := strings.Join(r.Devices(), ","); got != "cpu,cluster" {
		t.Fatalf("devices %q", got)
	}
	run, err := r.Submit(context.Background(), remoteRequest("cluster"))
	if err != nil {
		t.Fatal(err)
	}
	got := waitDone(t, r, run.ID, 10*time.Second)
	if got.Status != runner.StatusSucceeded || len(got.Shapes) != 9 || got.Device != "cluster" {
		t.Fatalf("run: %s %q shapes=%d device=%s", got.Status, got.Reason, len(got.Shapes), got.Device)
	}
	if !strings.Contains(got.Log, "# job 12 running on node7") || !strings.Contains(got.Log, "a line that is not JSON") {
		t.Errorf("log lacks the note or the stdout line:\n%s", got.Log)
	}
}

// The cpu device's rules follow Executor.CPU: a cpu target takes only the
// reference, a GPU target never times it. Nothing is queued on refusal.
func TestRemoteDeviceKindRules(t *testing.T) {
	idle := func(*runner.Run, *runner.Execution) runner.Outcome {
		return runner.Outcome{Status: runner.StatusFailed, Reason: "unused"}
	}
	r := newRunner(t, runner.Config{Devices: []string{"cpu"}, Remote: []runner.Remote{
		{Name: "cpus", Executor: &scripted{slots: 1, cpu: true, run: idle}},
		{Name: "h100", Executor: &scripted{slots: 1, run: idle}},
	}})
	ctx := context.Background()
	bad := []struct {
		req   runner.Request
		field string
	}{
		{runner.Request{Problem: groupProblem, Suite: "tests", Variant: "baseline", Device: "cpus"}, "variant"},
		{runner.Request{Problem: groupProblem, Suite: "tests", Variant: "reference", Device: "h100"}, "variant"},
		{runner.Request{Problem: groupProblem, Suite: "tests", Variant: "baseline", Device: "a100"}, "device"},
	}
	for _, c := range bad {
		_, err := r.Submit(ctx, c.req)
		if pitches.ErrorCode(err) != pitches.EINVALID || pitches.ErrorField(err) != c.field {
			t.Errorf("%+v: %v, want EINVALID on %s", c.req, err, c.field)
		}
	}
	if list, _ := r.List(ctx, runner.Filter{}); len(list) != 0 {
		t.Errorf("refused requests queued %d runs", len(list))
	}
}

// A remote device runs up to Slots runs at once.
func TestRemoteSlots(t *testing.T) {
	release := make(chan struct{})
	ex := &scripted{slots: 3, cpu: true}
	ex.run = func(run *runner.Run, x *runner.Execution) runner.Outcome {
		<-release
		return measured(t, x)
	}
	r := newRunner(t, runner.Config{Devices: []string{"cpu"}, Remote: []runner.Remote{{Name: "cluster", Executor: ex}}})
	var ids []int64
	for range 5 {
		run, err := r.Submit(context.Background(), remoteRequest("cluster"))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, run.ID)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		ex.mu.Lock()
		n := ex.running
		ex.mu.Unlock()
		if n == 3 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(release)
	for _, id := range ids {
		if got := waitDone(t, r, id, 10*time.Second); got.Status != runner.StatusSucceeded {
			t.Errorf("run %d: %s %q", id, got.Status, got.Reason)
		}
	}
	if ex.most != 3 {
		t.Errorf("at most %d runs in flight at once, want the 3 slots", ex.most)
	}
}

// Cancel reaches the executor; the run is recorded cancelled with the
// reason. A failure the executor reports carries where it happened.
func TestRemoteCancelAndFailure(t *testing.T) {
	started := make(chan struct{}, 1)
	ex := &scripted{slots: 2, cpu: true}
	ex.run = func(run *runner.Run, x *runner.Execution) runner.Outcome {
		if run.Seed == 2 {
			return runner.Outcome{Exited: true, Signal: 9, Where: "slurm job 44 FAILED on node3", Stderr: "some output\nlast words\n"}
		}
		started <- struct{}{}
		reason := <-x.Cancel
		return runner.Outcome{Status: runner.StatusCancelled, Reason: reason}
	}
	r := newRunner(t, runner.Config{Devices: []string{"cpu"}, Remote: []runner.Remote{{Name: "cluster", Executor: ex}}})
	ctx := context.Background()
	run, err := r.Submit(ctx, remoteRequest("cluster"))
	if err != nil {
		t.Fatal(err)
	}
	<-started
	if err := r.Cancel(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	if got := waitDone(t, r, run.ID, 5*time.Second); got.Status != runner.StatusCancelled || got.Reason != "cancelled by user" {
		t.Errorf("cancelled run: %s %q", got.Status, got.Reason)
	}
	req := remoteRequest("cluster")
	req.Seed = 2
	run, err = r.Submit(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	got := waitDone(t, r, run.ID, 5*time.Second)
	want := "crashed: killed by signal 9 (killed) (stderr: last words) (slurm job 44 FAILED on node3)"
	if got.Status != runner.StatusFailed || got.Reason != want {
		t.Errorf("killed run: %s %q, want %q", got.Status, got.Reason, want)
	}
}

// A shutdown leaves a remote run going (it is not cancelled, and stays
// running in the store); the next runner over the same database resumes
// it through the executor, while a local run left running is interrupted.
func TestRemoteRunSurvivesRestart(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "p.db")
	db := openDB(t, dbPath)
	ex := &scripted{slots: 1, cpu: true}
	ex.run = func(run *runner.Run, x *runner.Execution) runner.Outcome {
		if !x.Resumed {
			<-x.Quit
			return runner.Outcome{Detach: true}
		}
		x.Note("followed again")
		return measured(t, x)
	}
	cfg := runner.Config{Store: db, Catalog: runner.KernelsCatalog{}, Devices: []string{"cpu"}, TempDir: t.TempDir(), Remote: []runner.Remote{{Name: "cluster", Executor: ex}}}
	r1, err := runner.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := r1.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	run, err := r1.Submit(ctx, remoteRequest("cluster"))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, _ := r1.Get(ctx, run.ID)
		if got.Status == runner.StatusRunning {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("remote run never started: %s", got.Status)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// A local run a dead server left running.
	local, err := db.Enqueue(ctx, cpuRequest(0))
	if err == nil {
		err = db.MarkRunning(ctx, local.ID)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := r1.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.Get(ctx, run.ID); got.Status != runner.StatusRunning {
		t.Fatalf("after a shutdown the remote run is %s (%q), want still running", got.Status, got.Reason)
	}

	r2 := newRunner(t, cfg)
	got := waitDone(t, r2, run.ID, 10*time.Second)
	if got.Status != runner.StatusSucceeded || !strings.Contains(got.Log, "# followed again") {
		t.Fatalf("resumed run: %s %q log:\n%s", got.Status, got.Reason, got.Log)
	}
	if l, _ := db.Get(ctx, local.ID); l.Status != runner.StatusFailed || l.Reason != runner.ReasonInterrupted {
		t.Errorf("local run left running: %s %q, want interrupted", l.Status, l.Reason)
	}
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if fmt.Sprint(ex.calls) != "[false true]" {
		t.Errorf("executor calls (resumed?): %v", ex.calls)
	}
}

// Remote devices are checked when the runner is built.
func TestRemoteConfigRefused(t *testing.T) {
	db := openDB(t, filepath.Join(t.TempDir(), "p.db"))
	ok := &scripted{slots: 1}
	cases := []struct {
		remote []runner.Remote
		store  runner.Store
		want   string
	}{
		{[]runner.Remote{{Name: "cpu", Executor: ok}}, db, `"cpu" is the server's own CPU`},
		{[]runner.Remote{{Name: "3", Executor: ok}}, db, "looks like a GPU ordinal"},
		{[]runner.Remote{{Name: "h100 x", Executor: ok}}, db, "only letters"},
		{[]runner.Remote{{Name: "", Executor: ok}}, db, "needs a name"},
		{[]runner.Remote{{Name: "h100", Executor: ok}, {Name: "h100", Executor: ok}}, db, "listed twice"},
		{[]runner.Remote{{Name: "h100"}}, db, "no executor"},
		{[]runner.Remote{{Name: "h100", Executor: &scripted{}}}, db, "0 slots"},
		// A store that would mark the remote runs interrupted at start.
		{[]runner.Remote{{Name: "h100", Executor: ok}}, struct{ runner.Store }{db}, "MarkInterruptedExcept"},
	}
	for _, c := range cases {
		_, err := runner.New(runner.Config{Store: c.store, Catalog: runner.KernelsCatalog{}, Devices: []string{"cpu"}, Remote: c.remote})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.remote, err, c.want)
		}
	}
}

// Runs resumed after a restart hold the device's slots like new ones (no
// more than Slots in flight), and a cancel of one still waiting for a slot
// reaches the executor when a worker takes it.
func TestResumedRunsTakeSlots(t *testing.T) {
	db := openDB(t, filepath.Join(t.TempDir(), "p.db"))
	ctx := context.Background()
	var left []int64
	for range 3 {
		run, err := db.Enqueue(ctx, remoteRequest("cluster"))
		if err == nil {
			err = db.MarkRunning(ctx, run.ID)
		}
		if err != nil {
			t.Fatal(err)
		}
		left = append(left, run.ID)
	}
	release := make(chan struct{})
	ex := &scripted{slots: 1, cpu: true}
	ex.run = func(run *runner.Run, x *runner.Execution) runner.Outcome {
		if !x.Resumed {
			t.Errorf("run %d was not resumed", run.ID)
		}
		if run.ID == left[2] {
			return runner.Outcome{Status: runner.StatusCancelled, Reason: <-x.Cancel}
		}
		<-release
		return measured(t, x)
	}
	r := newRunner(t, runner.Config{Store: db, Devices: []string{"cpu"}, Remote: []runner.Remote{{Name: "cluster", Executor: ex}}})
	cancelled := make(chan error, 1)
	go func() { cancelled <- r.Cancel(ctx, left[2]) }()
	time.Sleep(100 * time.Millisecond)
	close(release)
	if err := <-cancelled; err != nil {
		t.Fatal(err)
	}
	for i, id := range left {
		got := waitDone(t, r, id, 10*time.Second)
		want := runner.StatusSucceeded
		if i == 2 {
			want = runner.StatusCancelled
		}
		if got.Status != want {
			t.Errorf("run %d: %s %q, want %s", id, got.Status, got.Reason, want)
		}
	}
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if ex.most != 1 || len(ex.calls) != 3 {
		t.Errorf("%d executions, at most %d at once; want 3, one at a time", len(ex.calls), ex.most)
	}
}

// A submitted kernel's run on a remote GPU device: Stage writes the stored
// files beside the result path the executor chose (the job's folder on
// shared storage), as runChild does for a local child.
func TestRemoteStagesSubmittedKernel(t *testing.T) {
	db := openDB(t, filepath.Join(t.TempDir(), "pitchtank.db"))
	p, up := kernelFixture(t, db)
	staged := map[string][]byte{}
	ex := &scripted{slots: 1}
	ex.run = func(run *runner.Run, x *runner.Execution) runner.Outcome {
		result := filepath.Join(t.TempDir(), "result.json")
		if err := x.Stage(result); err != nil {
			return runner.Outcome{Status: runner.StatusFailed, Reason: "stage: " + err.Error()}
		}
		ents, err := os.ReadDir(runner.KernelDir(result))
		if err != nil {
			return runner.Outcome{Status: runner.StatusFailed, Reason: err.Error()}
		}
		for _, e := range ents {
			staged[e.Name()], _ = os.ReadFile(filepath.Join(runner.KernelDir(result), e.Name()))
		}
		return runner.Outcome{Status: runner.StatusFailed, Reason: "staged"}
	}
	r := newRunner(t, runner.Config{Store: db, Kernels: db, Devices: []string{"cpu"}, Remote: []runner.Remote{{Name: "h100", Executor: ex}}})
	run, err := r.Submit(context.Background(), runner.Request{Problem: groupProblem, Suite: "tests", Variant: p.Variant, Baseline: "baseline", Device: "h100", PitchID: p.ID})
	if err != nil {
		t.Fatal(err)
	}
	if got := waitDone(t, r, run.ID, 10*time.Second); got.Reason != "staged" {
		t.Fatalf("run: %s %q", got.Status, got.Reason)
	}
	if len(staged) != len(up.Files) {
		t.Fatalf("staged %d files, the upload has %d", len(staged), len(up.Files))
	}
	for name, data := range up.Files {
		if string(staged[name]) != string(data) {
			t.Errorf("staged %s differs from the stored file", name)
		}
	}
}
