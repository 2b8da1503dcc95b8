package bench

// BootstrapMethod names how the speedup interval is resampled
// (stats.PairedSpeedupBySet: input sets, then rounds within each); it is
// recorded with every pairing.
const BootstrapMethod = "sets_then_rounds"
