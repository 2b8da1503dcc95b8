// Package stats holds the arithmetic of measurement and prediction: summaries
// of timing samples, the stop rule that decides when a measurement has enough
// of them, paired bootstrap intervals for a speedup and the verdict drawn from
// one, geometric means and fast_p across shapes (measurement.md rules 5, 7
// and 9), and the scores of a predicted speedup range against a measured one
// (scoring.md). It depends on nothing else in the module.
//
// Functions whose result does not exist for their input (a geometric mean of
// a non-positive number, a speedup from mismatched sample lists) return NaN
// rather than a made-up number; each has a Check function that says why, for
// callers that turn user input into a message.
package stats
