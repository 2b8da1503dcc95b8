package bench

import (
	"context"

	"github.com/pitchtank/pitchtank/internal/result"
	"github.com/pitchtank/pitchtank/kernels"
)

// Backend is one device the protocol runs on: a GPU through the engine, the
// CPU reference, or a fake in tests. The protocol (rules 1-10) lives in
// Run; a backend only knows how to load, launch, check and time.
type Backend interface {
	// Device describes the device for the fingerprint.
	Device() result.Device
	// Ceilings are the rates for the speed-of-light floor.
	Ceilings() kernels.Ceilings
	// CacheMode says how samples are made cold: "cold" with the bytes
	// written before every sample, or "warm" with 0.
	CacheMode() (mode string, flushBytes int64)
	// Timer names the clock: "cuda_events" or "wall_clock".
	Timer() string
	// Telemetry reads the device's clocks and throttle reasons; nil with no
	// error where there is nothing to read (the CPU).
	Telemetry() (*result.Telemetry, error)
	// Build compiles a variant once for the whole run.
	Build(ctx context.Context, role string, v kernels.Variant) (*result.Build, error)
	// Reference describes the kernel that computes the correctness
	// reference, or nil when the backend computes it on the CPU.
	Reference() *result.Build
	// Shape makes the runners of the given roles (in order) on one shape.
	Shape(ctx context.Context, s kernels.Shape, roles []string) (ShapeRunner, error)
	Close() error
}

// ShapeRunner runs the roles of one shape. Role indexes follow the roles
// given to Backend.Shape. Each role holds several input sets (one per seed,
// each in its own device buffers); timing rotates through them (rule 4), so
// no role's times hang on where one set of buffers happens to lie.
type ShapeRunner interface {
	// Load generates fresh inputs from seed into input set `set` (0, 1, ...
	// in order; a new index adds a set) for every role and returns the
	// float64 reference for them. When checkCPU is set and the reference was
	// computed on the device, it is also compared with the CPU reference and
	// that check returned.
	Load(ctx context.Context, set int, seed uint64, checkCPU bool) (ref []float64, refCheck *RefCheck, err error)
	// Check runs one complete execution of role on input set `set` (the
	// caller has scrambled its output first) and returns the output (fp16
	// bits) and the input hashes before and after.
	Check(ctx context.Context, role, set int) (out []uint16, hashBefore, hashAfter string, err error)
	// Scramble readies role's input set for its next execution, outside
	// any timed region and in order with it: when flipSeed is not 0 it
	// negates the rows of the flip operand that flipBit selects (A's rows
	// in the group GEMM, B2's in the dual GEMM: kernels/cuda/harness.cu);
	// then, when poisonSeed is not 0, it fills the output and any workspace
	// with random bytes drawn from poisonSeed.
	Scramble(ctx context.Context, role, set int, poisonSeed, flipSeed uint64) error
	// Probe is called right after Sample: settled says whether all the work
	// the execution enqueued had finished when the stop event completed,
	// and with read set, out is the output as it stood then, read without
	// waiting for anything else.
	Probe(ctx context.Context, role, set int, read bool) (out []uint16, settled bool, err error)
	// Reload moves input set `set` of every role to fresh allocations (new
	// buffers, the module loaded again) with new inputs drawn from seed,
	// and returns their reference.
	Reload(ctx context.Context, set int, seed uint64) ([]float64, error)
	// Relocate moves input set `set` of every role to fresh allocations
	// (new buffers, the module loaded again) with the inputs as they are.
	Relocate(ctx context.Context, set int) error
	// InputHash hashes role's inputs of set as they are now.
	InputHash(ctx context.Context, role, set int) (string, error)
	// Sample times one complete execution of role on input set `set`, the
	// cache flush outside the timed region, and returns nanoseconds.
	Sample(ctx context.Context, role, set int) (float64, error)
	// Output returns the output of role's input set as its last execution left it.
	Output(ctx context.Context, role, set int) ([]uint16, error)
	// Plan describes role's launch configuration.
	Plan(role int) result.LaunchPlan
	Close() error
}

// RefCheck is the device reference against the CPU reference.
type RefCheck struct {
	Elements            int
	MaxAbsErr, RelL2Err float64
	Tol                 float64
	Pass                bool
}
