package httpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
)

// registerRunAPIRoutes mounts the run endpoints under /api.
func (s *server) registerRunAPIRoutes(r chi.Router) {
	r.Post("/runs", s.handleAPISubmitRun)
	r.Get("/runs", s.handleAPIRuns)
	s.registerTrackingAPIRoutes(r)
	r.Get("/runs.json", s.handleAPIRunsExport("json"))
	r.Get("/runs.csv", s.handleAPIRunsExport("csv"))
	r.Post("/runs/import", s.handleAPIImportRun)
	r.Get("/runs/{id:[0-9]+}", s.handleAPIRun)
	r.Get("/runs/{id:[0-9]+}.json", s.handleAPIRun)
	r.Get("/runs/{id:[0-9]+}.csv", s.handleRunCSV)
	r.Get("/runs/{id:[0-9]+}/events", s.handleRunEvents)
	r.Post("/runs/{id:[0-9]+}/cancel", s.handleAPICancelRun)
	r.Post("/runs/{id:[0-9]+}/requeue", s.handleAPIRequeueRun)
	r.Post("/runs/{id:[0-9]+}/accept", s.handleAPIAcceptRun)
	r.Put("/rounds/{number}/baseline", s.handleAPISetBaseline)
	r.Put("/rounds/{number}/measurement", s.handleAPISetMeasurement)
	r.Get("/rounds/{number}/results", s.handleRoundResults("json"))
	r.Get("/rounds/{number}/results.json", s.handleRoundResults("json"))
	r.Get("/rounds/{number}/results.csv", s.handleRoundResults("csv"))
}

// runJSON is a run as the API shows it: the runner's fields, whether its
// result is withheld from the caller, and the deal terms evaluated on it.
type runJSON struct {
	*runner.Run
	ResultHidden bool         `json:"result_hidden,omitempty"`
	DeviceLabel  string       `json:"device_label"`
	Terms        []termResult `json:"terms,omitempty"`
	runTracking               // regressions and provenance (regressions.go)
}

func (s *server) handleAPISubmitRun(w http.ResponseWriter, r *http.Request) {
	var in runRequest
	if err := decodeJSON(r.Body, &in); err != nil {
		s.apiError(w, r, err)
		return
	}
	knobs, err := knobQuery(in.Knobs)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	run, err := s.submitRun(r.Context(), userFrom(r.Context()), in, knobs)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	w.Header().Set("Location", "/api/runs/"+strconv.FormatInt(run.ID, 10))
	writeJSON(w, http.StatusCreated, runJSON{Run: run, DeviceLabel: deviceLabel(run)})
}

// loadRun reads run {id} for viewer, its result withheld where the
// hidden-score rule says so; terms are evaluated when withTerms is set.
func (s *server) loadRun(ctx context.Context, viewer *pitches.User, id int64, withTerms bool) (*runJSON, error) {
	if s.runs == nil {
		return nil, errNoRunner
	}
	run, err := s.runs.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	out := &runJSON{Run: run, DeviceLabel: deviceLabel(run)}
	hidden, err := s.visibility(viewer).resultHidden(ctx, run.PitchID)
	if err != nil {
		return nil, err
	}
	if hidden {
		redact(run)
		out.ResultHidden = true
		return out, nil
	}
	if withTerms {
		if err := s.addRunTracking(ctx, viewer, out); err != nil {
			return nil, err
		}
	}
	if withTerms && run.HasResult && run.PitchID != 0 {
		p, err := s.svc.Pitch(ctx, run.PitchID)
		if err == nil {
			if out.Terms, err = s.pitchTerms(ctx, viewer, p, run, nil); err != nil {
				return nil, err
			}
		} else if pitches.ErrorCode(err) != pitches.ENOTFOUND {
			return nil, err
		}
	}
	return out, nil
}

func (s *server) handleAPIRun(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	out, err := s.loadRun(r.Context(), userFrom(r.Context()), id, true)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// runFilter reads the list filters from the query string; a malformed
// number or an unknown status is a 400 naming the parameter.
func runFilter(q map[string][]string) (runner.Filter, error) {
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return strings.TrimSpace(v[0])
		}
		return ""
	}
	f := runner.Filter{Problem: get("problem"), Variant: get("variant"), Baseline: get("baseline"), Device: get("device"), Suite: get("suite")}
	if st := get("status"); st != "" {
		if !runner.Status(st).Valid() {
			return f, pitches.Errorf(pitches.EBADREQUEST, "status", "status must be queued, running, succeeded, incorrect, suspect, failed or cancelled")
		}
		f.Status = runner.Status(st)
	}
	for _, p := range []struct {
		key string
		dst *int64
	}{{"pitch", &f.PitchID}, {"before", &f.BeforeID}} {
		if v := get(p.key); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 1 {
				return f, pitches.Errorf(pitches.EBADREQUEST, p.key, "%s must be a positive integer", p.key)
			}
			*p.dst = n
		}
	}
	if v := get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			return f, pitches.Errorf(pitches.EBADREQUEST, "limit", "limit must be between 1 and 1000")
		}
		f.Limit = n
	}
	if v := get("imported"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return f, pitches.Errorf(pitches.EBADREQUEST, "imported", "imported must be true or false")
		}
		f.Imported = &b
	}
	// A built-in kernel's runs are stored in the catalogue's spelling: a
	// lookup by any spelling of it finds them (and the rows stored as given).
	return f.CanonicalLookup(runner.KernelsCatalog{}), nil
}

// visibleRuns is runs as the viewer may see them (listRunsPage).
func (s *server) visibleRuns(ctx context.Context, vis *visibility, f runner.Filter, runs []runner.Run) ([]runJSON, error) {
	out := make([]runJSON, 0, len(runs))
	for i := range runs {
		run := &runs[i]
		hidden, err := vis.resultHidden(ctx, run.PitchID)
		if err != nil {
			return nil, err
		}
		if hiddenByFilter(f, hidden) {
			continue
		}
		if hidden {
			redact(run)
		}
		out = append(out, runJSON{Run: run, ResultHidden: hidden, DeviceLabel: deviceLabel(run)})
	}
	return out, nil
}

func (s *server) handleAPIRuns(w http.ResponseWriter, r *http.Request) {
	if isSearch(r.URL.Query(), runSearchKeys) {
		s.handleAPIRunSearch(w, r) // search.go
		return
	}
	f, err := runFilter(r.URL.Query())
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	out, err := s.listRunsPage(w, r, f)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *server) handleAPICancelRun(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	if err := decodeEmpty(r.Body); err != nil {
		s.apiError(w, r, err)
		return
	}
	run, err := s.cancelRun(r.Context(), userFrom(r.Context()), id)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, runJSON{Run: run, DeviceLabel: deviceLabel(run)})
}

func (s *server) cancelRun(ctx context.Context, u *pitches.User, id int64) (*runner.Run, error) {
	if s.runs == nil {
		return nil, errNoRunner
	}
	run, err := s.runs.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := pitches.Can(u, pitches.ActCancelRun, pitches.Target{Run: runFacts(run)}); err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := s.runs.Cancel(cctx, id); err != nil {
		return nil, err
	}
	return s.auditRunAs(ctx, u, "run.cancel", run)(s.runs.Get(ctx, id))
}

func (s *server) requeueRun(ctx context.Context, u *pitches.User, id int64) (*runner.Run, error) {
	if s.runs == nil {
		return nil, errNoRunner
	}
	run, err := s.runs.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if _, _, err := s.checkLaunch(ctx, u, run.PitchID); err != nil {
		if pitches.ErrorCode(err) != pitches.EINVALID { // a deleted pitch does not stop a repeat
			return nil, err
		}
	}
	return s.auditRunAs(ctx, u, "run.requeue", nil)(s.runs.Requeue(ctx, id, u.ID))
}

func (s *server) handleAPIRequeueRun(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	if err := decodeEmpty(r.Body); err != nil {
		s.apiError(w, r, err)
		return
	}
	run, err := s.requeueRun(r.Context(), userFrom(r.Context()), id)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	w.Header().Set("Location", "/api/runs/"+strconv.FormatInt(run.ID, 10))
	writeJSON(w, http.StatusCreated, runJSON{Run: run, DeviceLabel: deviceLabel(run)})
}

func (s *server) handleAPIImportRun(w http.ResponseWriter, r *http.Request) {
	if s.runs == nil {
		s.apiError(w, r, errNoRunner)
		return
	}
	u := userFrom(r.Context())
	if err := pitches.CanRole(u, pitches.ActImportRun); err != nil {
		// Refused before the body is read: sharks predict results, they do
		// not supply them.
		s.apiError(w, r, err)
		return
	}
	req, err := runner.DecodeImport(r.Body)
	if err != nil {
		if pitches.ErrorCode(err) == pitches.EINTERNAL {
			err = decodeError(err) // the body cap or a broken connection
		}
		s.apiError(w, r, err)
		return
	}
	if len(req.Document) > 0 && req.PitchID == 0 && req.Device == "" && req.Note == "" {
		// A bare bench document has no room for these: they come in the
		// query string (docs/runs-import.md).
		q := r.URL.Query()
		if v := q.Get("pitch_id"); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 1 {
				s.apiError(w, r, pitches.Errorf(pitches.EBADREQUEST, "pitch_id", "pitch_id must be a positive integer"))
				return
			}
			req.PitchID = n
		}
		req.Device, req.Note = q.Get("device"), q.Get("note")
	}
	run, err := s.importRun(r.Context(), u, req)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	w.Header().Set("Location", "/api/runs/"+strconv.FormatInt(run.ID, 10))
	writeJSON(w, http.StatusCreated, runJSON{Run: run, DeviceLabel: deviceLabel(run)})
}

// importRun checks who may import for the pitch (pitches.ActImportRun: an
// admin, or the pitch's contestant while its round is open and allows
// imports; never a closed round) and stores the import.
func (s *server) importRun(ctx context.Context, u *pitches.User, req *runner.ImportRequest) (*runner.Run, error) {
	t := pitches.Target{}
	if req.PitchID > 0 {
		p, err := s.svc.Pitch(ctx, req.PitchID)
		if pitches.ErrorCode(err) == pitches.ENOTFOUND {
			return nil, pitches.Errorf(pitches.EINVALID, "pitch_id", "pitch %d does not exist", req.PitchID)
		}
		if err != nil {
			return nil, err
		}
		round, err := s.svc.Round(ctx, p.RoundNumber)
		if err != nil {
			return nil, err
		}
		t.Pitch, t.Round = p, round
	}
	if err := pitches.Can(u, pitches.ActImportRun, t); err != nil {
		return nil, err
	}
	return s.auditRunAs(ctx, u, "run.import", nil)(s.runs.Import(ctx, req, u.ID))
}

func (s *server) handleAPIAcceptRun(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	if s.runs == nil {
		s.apiError(w, r, errNoRunner)
		return
	}
	var in struct {
		Reason string `json:"reason"`
	}
	if err := decodeJSON(r.Body, &in); err != nil {
		s.apiError(w, r, err)
		return
	}
	run, err := s.acceptRun(r.Context(), id, userFrom(r.Context()), in.Reason)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, runJSON{Run: run, DeviceLabel: deviceLabel(run)})
}

// handleRunEvents streams a run's events as server-sent events: the current
// status first (runner.Get, then Subscribe, as runner/doc.go asks), each
// event flushed as it comes, a comment line as heartbeat, and the end after
// the terminal status. A shark whose view of the run is withheld gets
// status events only.
func (s *server) handleRunEvents(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r)
	if err != nil {
		s.errorFor(w, r, err)
		return
	}
	if s.runs == nil {
		s.errorFor(w, r, errNoRunner)
		return
	}
	ctx := r.Context()
	run, err := s.runs.Get(ctx, id)
	if err != nil {
		s.errorFor(w, r, err)
		return
	}
	hidden, err := s.visibility(userFrom(ctx)).resultHidden(ctx, run.PitchID)
	if err != nil {
		s.errorFor(w, r, err)
		return
	}
	rc := http.NewResponseController(w)
	// The stream outlives the server's write timeout; it ends with the run
	// or the client.
	_ = rc.SetWriteDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	send := func(ev runner.Event) bool {
		if hidden && ev.Type != "status" {
			return true
		}
		if hidden {
			ev.Reason = ""
			ev.Status = hiddenStatus(ev.Status)
		}
		b, err := json.Marshal(ev)
		if err != nil {
			return false
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev.Type, b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if run.Status.Finished() {
		send(runner.Event{RunID: run.ID, Type: "status", Status: run.Status, Reason: run.Reason})
		return
	}
	events, stop := s.runs.Subscribe(id)
	defer stop()
	tick := time.NewTicker(s.cfg.Heartbeat)
	defer tick.Stop()
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return
			}
			if !send(ev) {
				return
			}
			if ev.Type == "status" && ev.Status.Finished() {
				return
			}
		case <-tick.C:
			if _, err := io.WriteString(w, ": heartbeat\n\n"); err != nil || rc.Flush() != nil {
				return
			}
		case <-ctx.Done():
			return
		case <-s.cfg.Streams.Done():
			return
		}
	}
}

// errorFor answers with the API's JSON error or an error page, by path.
func (s *server) errorFor(w http.ResponseWriter, r *http.Request, err error) {
	if isAPI(r) {
		s.apiError(w, r, err)
		return
	}
	s.renderError(w, r, err)
}

// Exports. CSV has one row per run and shape; JSON is the runs with shapes.

// device is the server's device (0, cpu) or an import's label; device_name
// the model the result was measured on, with its fingerprint (the key,
// driver and NVRTC of a bench document: empty for hand-written imports),
// so that runs of two hosts' "0" are told apart; accepted_at is set when an
// admin accepted a suspect run as a result.
var runCSVHeader = []string{"run_id", "problem", "suite", "variant", "baseline", "device", "imported", "status", "pitch_id",
	"created_at", "finished_at", "geomean_speedup", "geomean_lo", "geomean_hi", "correct", "run_flags",
	"device_name", "fingerprint_key", "driver_version", "nvrtc_version", "accepted_at",
	"shape_index", "shape", "baseline_median_us", "variant_median_us", "variant_rel_sem", "speedup", "speedup_lo", "speedup_hi",
	"floor_us", "fraction_of_floor", "shape_correct", "shape_flags"}

func csvFloat(x float64) string {
	if x == 0 {
		return ""
	}
	return strconv.FormatFloat(x, 'g', 10, 64)
}

func csvTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func writeRunsCSV(w io.Writer, runs []runJSON) error {
	cw := newCSVWriter(w) // neutralises formula cells (csvsafe.go)
	if err := cw.Write(runCSVHeader); err != nil {
		return err
	}
	for _, rj := range runs {
		r := rj.Run
		base := []string{strconv.FormatInt(r.ID, 10), r.Problem, r.Suite, r.Variant, r.Baseline, r.Device, strconv.FormatBool(r.Imported),
			string(r.Status), strconv.FormatInt(r.PitchID, 10), csvTime(r.CreatedAt), csvTime(r.FinishedAt),
			csvFloat(r.Speedup.Value), csvFloat(r.Speedup.Lo), csvFloat(r.Speedup.Hi), strconv.FormatBool(r.HasResult && r.Correct), strings.Join(r.Flags, " ")}
		var d benchDoc
		_ = json.Unmarshal(r.Result, &d) // a hand-written import or no result: no fingerprint
		base = append(base, r.DeviceName, d.Fingerprint.Key, d.Fingerprint.Driver, d.Fingerprint.NVRTC, csvTime(r.AcceptedAt))
		if len(r.Shapes) == 0 {
			if err := cw.Write(append(base, make([]string, len(runCSVHeader)-len(base))...)); err != nil {
				return err
			}
			continue
		}
		noise := runner.VariantRelSEM(r) // the document's SEM/mean; empty without a loaded document
		for _, sh := range r.Shapes {
			relSEM := noise[sh.Index]
			row := append(append([]string(nil), base...), strconv.Itoa(sh.Index), sh.Label, csvFloat(sh.BaselineMedianUs), csvFloat(sh.VariantMedianUs),
				csvFloat(relSEM), csvFloat(sh.Speedup.Value), csvFloat(sh.Speedup.Lo), csvFloat(sh.Speedup.Hi),
				csvFloat(sh.FloorUs), csvFloat(sh.FractionOfFloor), strconv.FormatBool(sh.Correct), strings.Join(sh.Flags, " "))
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// writeDownload sends an export as a file download.
func writeDownload(w http.ResponseWriter, name, format string, body []byte) {
	if format == "csv" {
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	} else {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
	}
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(body)
}

func (s *server) exportRuns(w http.ResponseWriter, r *http.Request, runs []runJSON, name, format string) {
	var buf bytes.Buffer
	if format == "csv" {
		if err := writeRunsCSV(&buf, runs); err != nil {
			s.errorFor(w, r, fmt.Errorf("export runs as CSV: %w", err))
			return
		}
	} else {
		enc := json.NewEncoder(&buf)
		enc.SetIndent("", "  ")
		if err := enc.Encode(runs); err != nil {
			s.errorFor(w, r, fmt.Errorf("export runs as JSON: %w", err))
			return
		}
	}
	writeDownload(w, name+"."+format, format, buf.Bytes())
}

func (s *server) handleAPIRunsExport(format string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		runs, err := s.exportable(w, r)
		if err != nil {
			s.errorFor(w, r, err)
			return
		}
		if format == "csv" {
			// variant_rel_sem comes from each document (noise.go), which
			// List does not load; hidden runs were redacted and stay so.
			for i := range runs {
				if runs[i].ResultHidden || len(runs[i].Shapes) == 0 {
					continue
				}
				full, err := s.runs.Get(r.Context(), runs[i].ID)
				if err != nil {
					s.errorFor(w, r, err)
					return
				}
				runs[i].Result = full.Result
			}
		}
		s.exportRuns(w, r, runs, "runs", format)
	}
}

// handleRunCSV and handleRunJSON export one run (pages and API).
func (s *server) handleRunCSV(w http.ResponseWriter, r *http.Request) {
	s.exportOneRun(w, r, "csv")
}

func (s *server) handleRunJSON(w http.ResponseWriter, r *http.Request) {
	s.exportOneRun(w, r, "json")
}

func (s *server) exportOneRun(w http.ResponseWriter, r *http.Request, format string) {
	id, err := idParam(r)
	if err != nil {
		s.errorFor(w, r, pitches.Errorf(pitches.ENOTFOUND, "", "There is no such run."))
		return
	}
	run, err := s.loadRun(r.Context(), userFrom(r.Context()), id, format == "json")
	if err != nil {
		s.errorFor(w, r, err)
		return
	}
	if format == "json" {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetIndent("", "  ")
		if err := enc.Encode(run); err != nil {
			s.errorFor(w, r, fmt.Errorf("export run as JSON: %w", err))
			return
		}
		writeDownload(w, "run-"+strconv.FormatInt(id, 10)+".json", format, buf.Bytes())
		return
	}
	s.exportRuns(w, r, []runJSON{*run}, "run-"+strconv.FormatInt(id, 10), "csv")
}
