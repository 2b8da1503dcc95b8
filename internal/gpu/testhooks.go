package gpu

/*
#include "cudadl.h"
*/
import "C"

// These exist for the tests (cgo is not allowed in _test.go files).

// missingResult is the wrappers' "symbol not loaded" result.
func missingResult() C.CUresult { return C.PT_MISSING }

// callWithNilAPI calls a wrapper with no library loaded: it must return
// PT_MISSING, not jump through a NULL pointer.
func callWithNilAPI() C.CUresult { return C.pt_cuCtxSynchronize(nil) }
