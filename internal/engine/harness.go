package engine

import (
	"errors"
	"fmt"

	"github.com/pitchtank/pitchtank/internal/gpu"
	"github.com/pitchtank/pitchtank/kernels"
)

// Harness is the bench's own device code (kernels/cuda/harness.cu)
// compiled for one device: a seeded random fill and a seeded negation of
// operand rows, which internal/bench runs between timed samples so that no
// kernel can reuse an earlier launch's output or tell a checked launch from
// a timed one.
type Harness struct {
	Compiled *gpu.Compiled
}

// BuildHarness compiles the harness for dev's architecture (through the
// cubin cache).
func BuildHarness(dev gpu.DeviceInfo, cacheDir string) (*Harness, error) {
	arch := dev.Arch
	if arch == "" {
		arch = gpu.ArchFor(dev.CCMajor, dev.CCMinor)
	}
	name, src, err := kernels.HarnessSource()
	if err != nil {
		return nil, err
	}
	c, err := gpu.Compile(name, src, gpu.CompileOptions{Arch: arch, Flags: buildFlags(), CacheDir: cacheDir})
	if err != nil {
		return nil, fmt.Errorf("engine: build the harness for %s: %w", arch, err)
	}
	return &Harness{Compiled: c}, nil
}

// LoadedHarness is the harness's module loaded in one context.
type LoadedHarness struct {
	mod        *gpu.Module
	fill, flip *gpu.Function
}

// Load loads the harness module in c.
func (h *Harness) Load(c *gpu.Ctx) (*LoadedHarness, error) {
	mod, err := c.LoadModule(h.Compiled.Cubin)
	if err != nil {
		return nil, fmt.Errorf("engine: load the harness: %w", err)
	}
	l := &LoadedHarness{mod: mod}
	if l.fill, err = mod.Function("pt_fill"); err == nil {
		l.flip, err = mod.Function("pt_flip_rows")
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("engine: harness: %w", err), mod.Unload())
	}
	return l, nil
}

// Close unloads the harness module.
func (h *LoadedHarness) Close() error {
	if h == nil || h.mod == nil {
		return nil
	}
	err := h.mod.Unload()
	h.mod = nil
	return err
}

// fillBuffer enqueues pt_fill over n bytes at p.
func (h *LoadedHarness) fillBuffer(c *gpu.Ctx, p gpu.DevPtr, n int64, seed uint64, s *gpu.Stream) error {
	words := (n + 7) / 8
	blocks := uint32(min(max(1, (words+255)/256), 4096))
	return c.Launch(h.fill, [3]uint32{blocks, 1, 1}, [3]uint32{256, 1, 1}, 0, s, p, n, seed)
}

// flipRows enqueues pt_flip_rows over rows x rowBytes bytes at p.
func (h *LoadedHarness) flipRows(c *gpu.Ctx, p gpu.DevPtr, rows, rowBytes int, seed uint64, rowBase int, s *gpu.Stream) error {
	if rows == 0 {
		return nil
	}
	return c.Launch(h.flip, [3]uint32{uint32(min(rows, 2048)), 1, 1}, [3]uint32{128, 1, 1}, 0, s,
		p, int32(rows), int32(rowBytes), seed, int32(rowBase))
}

// FlipColumnBase numbers the flip bits of output columns in the group
// GEMM: a content change negates row R of the A operands (bit R, rows
// numbered across the groups in Output's order) and row n of every group's
// B (bit FlipColumnBase + n), so output element (R, n) changes sign when
// exactly one of the two bits is set. In the dual GEMM it negates row n of
// B2 (bit n), so output column n changes sign (silu(A B1^T) is not odd,
// so A and B1 stay).
const FlipColumnBase = 1 << 20

// Scramble enqueues on s, before an execution and outside any timed
// region: when flipSeed is not 0, the negation of a seeded half of the rows
// of the flip operands (FlipColumnBase says which); then, when poisonSeed
// is not 0, a random fill drawn from it of the output and the split-K
// workspace. The
// caller tracks the flips to know the exact result (kernels/cuda/harness.cu
// explains why it stays exact).
func (i *Instance) Scramble(h *LoadedHarness, poisonSeed, flipSeed uint64, s *gpu.Stream) error {
	if i.closed {
		return ErrClosed
	}
	if flipSeed != 0 {
		rowBytes := i.shape.K / 2
		if i.dual {
			b := i.bufs[bufKey{kernels.BufB2, 0}]
			if err := h.flipRows(i.c, b.ptr, i.shape.N, rowBytes, flipSeed, 0, s); err != nil {
				return fmt.Errorf("engine: negate rows of B2: %w", err)
			}
		} else {
			base := 0
			for g, m := range i.shape.M {
				if err := h.flipRows(i.c, i.bufs[bufKey{kernels.BufA, g}].ptr, m, rowBytes, flipSeed, base, s); err != nil {
					return fmt.Errorf("engine: negate rows of A[%d]: %w", g, err)
				}
				if err := h.flipRows(i.c, i.bufs[bufKey{kernels.BufB, g}].ptr, i.shape.N, rowBytes, flipSeed, FlipColumnBase, s); err != nil {
					return fmt.Errorf("engine: negate rows of B[%d]: %w", g, err)
				}
				base += m
			}
		}
	}
	if poisonSeed == 0 {
		return nil
	}
	keys := i.outKeys()
	if _, ok := i.bufs[bufKey{kernels.BufWork, 0}]; ok {
		keys = append(keys, bufKey{kernels.BufWork, 0})
	}
	for n, k := range keys {
		// Each buffer gets its own stream of bytes.
		if err := h.fillBuffer(i.c, i.bufs[k].ptr, i.bufs[k].bytes, poisonSeed+uint64(n)<<40, s); err != nil {
			return fmt.Errorf("engine: fill %s[%d]: %w", k.buf, k.group, err)
		}
	}
	return nil
}

// OutputNow reads C as it stands now, without waiting for the instance's
// streams (the copy waits only for the legacy default stream, which the
// non-blocking streams do not synchronise with): called right after the
// timer's stop event, it shows whether the execution had really finished.
func (i *Instance) OutputNow() ([]uint16, error) {
	if i.closed {
		return nil, ErrClosed
	}
	var out []uint16
	for _, k := range i.outKeys() {
		buf := make([]byte, i.bufs[k].bytes)
		if err := i.c.CopyDtoH(buf, i.bufs[k].ptr); err != nil {
			return nil, fmt.Errorf("engine: read %s[%d] now: %w", k.buf, k.group, err)
		}
		for n := 0; n+1 < len(buf); n += 2 {
			out = append(out, uint16(buf[n])|uint16(buf[n+1])<<8)
		}
	}
	return out, nil
}

// Settled reports whether the instance's own streams (the side streams of
// a streams-mode plan, the graph's capture stream) have nothing in flight.
// Right after the timer's stop event completed, anything still running
// there was work the timer did not cover.
func (i *Instance) Settled() (bool, error) {
	if i.closed {
		return false, ErrClosed
	}
	sts := append([]*gpu.Stream{}, i.side...)
	if i.capture != nil {
		sts = append(sts, i.capture)
	}
	for n, st := range sts {
		idle, err := st.Idle()
		if err != nil {
			return false, fmt.Errorf("engine: query stream %d: %w", n+1, err)
		}
		if !idle {
			return false, nil
		}
	}
	return true, nil
}
