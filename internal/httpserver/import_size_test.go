package httpserver

import (
	"net/http"
	"strings"
	"testing"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
)

// An import may be as large as docs/api.md and docs/runs-import.md say
// (4 MiB, runner.MaxImportBytes), past the 1 MiB cap of other bodies; past
// 4 MiB it is 413. Other endpoints keep the 1 MiB cap.
func TestImportBodyLimitIsFourMiB(t *testing.T) {
	a, _ := newRunsApp(t, runner.Config{Devices: []string{"cpu"}}, false)
	doc := `{"device":"B200","problem":"nvfp4_group_gemm","variant":"v","baseline":"baseline","shapes":[{"baseline_us":2,"variant_us":1}]}`
	padded := func(n int) string { return doc + strings.Repeat(" ", n-len(doc)) } // whitespace after the value is JSON
	a.api("POST", "/api/runs/import", "admin", padded(1100<<10)).wantStatus(t, http.StatusCreated)
	a.api("POST", "/api/runs/import", "admin", padded(runner.MaxImportBytes+1)).wantError(t, http.StatusRequestEntityTooLarge, pitches.ETOOLARGE, "")
	a.api("POST", "/api/tokens", "alice", `{"label":"x"}`+strings.Repeat(" ", 1100<<10)).wantError(t, http.StatusRequestEntityTooLarge, pitches.ETOOLARGE, "")
}
