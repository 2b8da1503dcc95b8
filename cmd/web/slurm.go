package main

import (
	"log/slog"

	"github.com/pitchtank/pitchtank/internal/runner"
	"github.com/pitchtank/pitchtank/internal/slurm"
)

// slurmRemotes reads `--slurm-config FILE` (docs/scale.md): the Slurm
// targets that join the server's devices. No file: none.
func slurmRemotes(path string, log *slog.Logger) ([]runner.Remote, error) {
	if path == "" {
		return nil, nil
	}
	cfg, err := slurm.LoadConfig(path)
	if err != nil {
		return nil, err
	}
	remotes, _, err := cfg.Remotes(log)
	return remotes, err
}
