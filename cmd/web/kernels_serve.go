package main

import (
	"log/slog"
	"slices"
	"strconv"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/pitchtank/pitchtank/internal/runner"
)

// kernelChecker is how `web serve` checks kernel uploads: against the
// architectures of its GPUs (read through NVML, which opens no CUDA
// context in the server), with the compile report of this binary's `web
// kernel check --json` run as a child process.
func kernelChecker(devices []string, log *slog.Logger) *runner.SubmissionChecker {
	return &runner.SubmissionChecker{Command: runner.CheckCommand(""), Archs: gpuArchs(devices, log)}
}

// gpuArchs are the compute capabilities (major*10+minor) of the GPUs among
// devices; none when there are none or NVML is unavailable (uploads are
// then checked against the architectures pitchtank supports).
func gpuArchs(devices []string, log *slog.Logger) []int {
	var ordinals []int
	for _, d := range devices {
		if n, err := strconv.Atoi(d); err == nil {
			ordinals = append(ordinals, n)
		}
	}
	if len(ordinals) == 0 {
		return nil
	}
	if ret := nvml.Init(); ret != nvml.SUCCESS {
		log.Info("kernel uploads are checked against the supported architectures: NVML unavailable", slog.String("err", nvml.ErrorString(ret)))
		return nil
	}
	defer nvml.Shutdown()
	var archs []int
	for _, i := range ordinals {
		dev, ret := nvml.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			continue
		}
		major, minor, ret := dev.GetCudaComputeCapability()
		if ret != nvml.SUCCESS {
			continue
		}
		if a := major*10 + minor; !slices.Contains(archs, a) {
			archs = append(archs, a)
		}
	}
	slices.Sort(archs)
	return archs
}
