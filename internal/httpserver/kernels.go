package httpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"mime"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
	"github.com/pitchtank/pitchtank/kernels"
	"github.com/pitchtank/pitchtank/templates"
)

// Submitted kernels on pages: the upload form of the pitch page
// (POST /pitches/{id}/kernel) and the kernel page (GET /kernels/{hash}).
// Who may upload and who may read a source are the domain's rules
// (pitches.ActUploadKernel, pitches.CanSeeKernelSource, applied by the
// store); checking a submission is the runner's (runner.SubmissionChecker,
// which runs the compile check as a child process).

func (s *server) registerKernelPageRoutes(r chi.Router) {
	r.Post("/pitches/{id}/kernel", s.handleUploadKernel)
	r.Get("/kernels/{hash}", s.handleKernel)
}

// checker is the server's submission checker (Config.Kernels), or one that
// checks the form and the architectures only.
func (s *server) checker() *runner.SubmissionChecker {
	if s.cfg.Kernels != nil {
		return s.cfg.Kernels
	}
	return &runner.SubmissionChecker{}
}

// uploadKernel checks an upload and stores it as pitchID's next kernel
// version. The permission is checked first, so nobody who may not upload
// gets a compile check run for them; the store checks it again in its
// transaction.
func (s *server) uploadKernel(ctx context.Context, by *pitches.User, pitchID int64, files map[string][]byte, form kernelUploadForm) (*pitches.KernelVersion, error) {
	if by == nil {
		return nil, pitches.ErrUnauthorized
	}
	p, err := s.svc.Pitch(ctx, pitchID)
	if err != nil {
		return nil, err
	}
	round, err := s.svc.Round(ctx, p.RoundNumber)
	if err != nil {
		return nil, err
	}
	if err := pitches.Can(by, pitches.ActUploadKernel, pitches.Target{Round: round, Pitch: p}); err != nil {
		return nil, err
	}
	if err := pitches.ValidateKernelFiles(files); err != nil {
		return nil, err
	}
	// The compile check is a child process that can take seconds: its
	// wait does not hold one of the few request slots (shed.go).
	var up *pitches.KernelUpload
	err = withoutSlot(ctx, func() (err error) {
		up, err = s.checker().Check(ctx, files)
		return err
	})
	if err != nil {
		return nil, err
	}
	knobs, err := parseKnobText(form.Knobs)
	if err != nil {
		return nil, pitches.Errorf(pitches.EINVALID, "variant", "%s", pitches.ErrorMessage(err))
	}
	if err := runner.CheckKernelKnobs(up.Manifest, knobs); err != nil {
		return nil, err
	}
	up.Note, up.Knobs = form.Note, knobs
	v, err := s.svc.UploadKernel(ctx, by, pitchID, *up)
	if err != nil {
		return nil, err
	}
	s.log.Info("kernel uploaded", "pitch", pitchID, "version", v.Version, "hash", v.Hash, "by", by.Login, "report", v.Report.Status)
	return v, nil
}

func (s *server) handleUploadKernel(w http.ResponseWriter, r *http.Request) {
	id, err := pitchID(r)
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	ctx, viewer := r.Context(), userFrom(r.Context())
	files, form, err := readMultipartKernel(r)
	if err == nil {
		var v *pitches.KernelVersion
		if v, err = s.uploadKernel(ctx, viewer, id, files, form); err == nil {
			http.Redirect(w, r, fmt.Sprintf("/kernels/%s?pitch=%d&v=%d&uploaded=1", v.Hash, id, v.Version), http.StatusSeeOther)
			return
		}
	}
	switch pitches.ErrorCode(err) {
	case pitches.EINVALID, pitches.ECONFLICT, pitches.ETOOLARGE, pitches.EBADREQUEST:
	default:
		s.renderError(w, r, err) // not a problem with the form: 401, 403, 404, 500
		return
	}
	pv, verr := s.pitchView(ctx, viewer, id)
	if verr != nil {
		s.renderError(w, r, verr)
		return
	}
	if pv.Kernel != nil {
		pv.Kernel.Err, pv.Kernel.Note, pv.Kernel.Knobs = s.formErr(r, err), form.Note, form.Knobs
		pv.Kernel.CanUpload = true
	}
	s.render(w, r, errorStatus(err), templates.PitchPage(s.chrome(r, pv.Pitch.Title, "rounds"), *pv))
}

// parsePitchForm reads the pitch form, which is multipart when it carries
// a kernel (the field kernel_files).
func (s *server) parsePitchForm(w http.ResponseWriter, r *http.Request) bool {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "multipart/form-data" {
		if err := parseMultipart(r); err != nil {
			s.renderError(w, r, err)
			return false
		}
	}
	return s.parseForm(w, r)
}

// pitchFormKernel uploads the kernel a pitch form carried, once the pitch
// (id) is saved, and answers the request: an accepted kernel goes to its
// page; a refused one renders the pitch page with the reason at the
// upload form (the pitch itself is saved: it is a separate record). It
// returns false, answering nothing, when the form carried no kernel.
func (s *server) pitchFormKernel(w http.ResponseWriter, r *http.Request, id int64) bool {
	ctx, viewer := r.Context(), userFrom(r.Context())
	files, err := formKernelFiles(r, "kernel_files")
	if err == nil && files == nil {
		return false
	}
	if err == nil {
		var v *pitches.KernelVersion
		if v, err = s.uploadKernel(ctx, viewer, id, files, kernelUploadForm{}); err == nil {
			http.Redirect(w, r, fmt.Sprintf("/kernels/%s?pitch=%d&v=%d&uploaded=1", v.Hash, id, v.Version), http.StatusSeeOther)
			return true
		}
	}
	pv, verr := s.pitchView(ctx, viewer, id)
	if verr != nil {
		s.renderError(w, r, verr)
		return true
	}
	if pv.Kernel != nil {
		ferr := s.formErr(r, err)
		ferr.Message = "The pitch is saved, but its kernel was refused: " + ferr.Message
		pv.Kernel.Err = ferr
	}
	s.render(w, r, errorStatus(err), templates.PitchPage(s.chrome(r, pv.Pitch.Title, "rounds"), *pv))
	return true
}

// kernelPanel is the pitch page's kernel section.
func (s *server) kernelPanel(ctx context.Context, viewer *pitches.User, p *pitches.Pitch, round *pitches.Round) (*templates.KernelPanel, error) {
	vs, err := s.svc.KernelVersions(ctx, p.ID)
	if err != nil {
		return nil, err
	}
	panel := &templates.KernelPanel{PitchID: p.ID, Versions: vs}
	err = pitches.Can(viewer, pitches.ActUploadKernel, pitches.Target{Round: round, Pitch: p})
	panel.CanUpload = err == nil
	if pitches.ErrorCode(err) == pitches.ECONFLICT {
		panel.Locked = "Kernel uploads are closed: " + pitches.ErrorMessage(err) + "."
	}
	return panel, nil
}

func (s *server) handleKernel(w http.ResponseWriter, r *http.Request) {
	hash := chi.URLParam(r, "hash")
	q := r.URL.Query()
	pitchID, _ := strconv.ParseInt(q.Get("pitch"), 10, 64)
	version, _ := strconv.Atoi(q.Get("v"))
	v, err := s.kernelView(r.Context(), userFrom(r.Context()), hash, pitchID, version)
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	v.Uploaded = q.Get("uploaded") == "1" && v.PitchID != 0
	s.render(w, r, http.StatusOK, templates.KernelPage(s.chrome(r, "Kernel "+v.Manifest.Name, "rounds"), *v))
}

// kernelView builds the kernel page for viewer. pitchID and version pick
// the pitch version the page is read in (0: the newest use of the kernel).
func (s *server) kernelView(ctx context.Context, viewer *pitches.User, hash string, pitchID int64, version int) (*templates.KernelView, error) {
	k, uses, err := s.svc.KernelSource(ctx, viewer, hash)
	if err != nil {
		return nil, err
	}
	v := &templates.KernelView{Hash: k.Hash, Manifest: k.Manifest, Size: k.Size, Author: k.Author,
		Created: k.CreatedAt.UTC().Format("2006-01-02 15:04 UTC")}
	v.Launch = launchText(k.Raw)
	for i, f := range k.Files {
		fv := templates.KernelFileView{Name: f.Name, Size: len(f.Data), Main: f.Name == k.Manifest.Source}
		if f.Text() {
			if fv.HTML, err = highlight(f.Name, fmt.Sprintf("f%d-L", i+1), f.Data); err != nil {
				return nil, err
			}
		} else {
			fv.Binary = true
			if archs, err := kernels.BinaryArchs(f.Data); err == nil {
				fv.Archs = kernels.BinaryArchList(archs)
			}
		}
		v.Files = append(v.Files, fv)
	}
	for _, u := range uses {
		v.Uses = append(v.Uses, templates.KernelUseRow{PitchID: u.PitchID, PitchTitle: u.PitchTitle, Round: u.RoundNumber, Version: u.Version})
	}

	// The pitch version read: the one asked for, else the newest use.
	all, err := s.svc.KernelVersionsOf(ctx, hash)
	if err != nil {
		return nil, err
	}
	var cur *pitches.KernelVersion
	for i := range all {
		if (pitchID == 0 || all[i].PitchID == pitchID) && (version == 0 || all[i].Version == version) {
			if cur == nil || all[i].CreatedAt.After(cur.CreatedAt) || pitchID != 0 {
				cur = &all[i]
			}
		}
	}
	if cur != nil {
		v.PitchID, v.Version, v.Note, v.Report = cur.PitchID, cur.Version, cur.Note, cur.Report
		for _, u := range uses {
			if u.PitchID == cur.PitchID {
				v.PitchTitle = u.PitchTitle
			}
		}
		fillChecks(v, cur.Report)
		if err := s.previousDiff(ctx, viewer, v, k, cur); err != nil {
			return nil, err
		}
		if err := s.baselineDiff(ctx, v, k, cur.PitchID); err != nil {
			return nil, err
		}
	} else {
		v.BaseNote = "This kernel is not carried by any pitch, so it has no round baseline."
	}
	if v.Runs, err = s.kernelRuns(ctx, viewer, hash, uses); err != nil {
		return nil, err
	}
	return v, nil
}

// previousDiff diffs every file against the pitch's previous version.
func (s *server) previousDiff(ctx context.Context, viewer *pitches.User, v *templates.KernelView, k *pitches.KernelSource, cur *pitches.KernelVersion) error {
	if cur.Version <= 1 {
		return nil
	}
	vs, err := s.svc.KernelVersions(ctx, cur.PitchID)
	if err != nil {
		return err
	}
	var prev *pitches.KernelVersion
	for i := range vs {
		if vs[i].Version == cur.Version-1 {
			prev = &vs[i]
		}
	}
	if prev == nil {
		return nil
	}
	v.PrevHash = prev.Hash
	v.PrevLabel = fmt.Sprintf("version %d (%s, %s)", prev.Version, prev.Name, prev.Hash[:12])
	if prev.Hash == k.Hash {
		v.PrevDiffs = []templates.KernelDiff{{From: "version " + strconv.Itoa(prev.Version), To: "version " + strconv.Itoa(cur.Version)}}
		return nil
	}
	old, _, err := s.svc.KernelSource(ctx, viewer, prev.Hash)
	if err != nil {
		return err
	}
	names := map[string]bool{}
	for _, f := range old.Files {
		names[f.Name] = true
	}
	for _, f := range k.Files {
		names[f.Name] = true
	}
	for _, name := range sortedKeys(names) {
		a, b := old.File(name), k.File(name)
		switch {
		case a != nil && !a.Text() || b != nil && !b.Text():
			if a == nil || b == nil || !bytes.Equal(a.Data, b.Data) {
				v.PrevDiffs = append(v.PrevDiffs, templates.KernelDiff{From: name, To: name, Note: "binary file changed"})
			}
		case a == nil:
			v.PrevDiffs = append(v.PrevDiffs, unifiedDiff("/dev/null", name, "", string(b.Data)))
		case b == nil:
			v.PrevDiffs = append(v.PrevDiffs, unifiedDiff(name, "/dev/null", string(a.Data), ""))
		case !bytes.Equal(a.Data, b.Data):
			v.PrevDiffs = append(v.PrevDiffs, unifiedDiff(name, name, string(a.Data), string(b.Data)))
		}
	}
	return nil
}

// baselineDiff diffs the main source against the source of the round's
// baseline variant (a built-in, from the kernel catalogue).
func (s *server) baselineDiff(ctx context.Context, v *templates.KernelView, k *pitches.KernelSource, pitchID int64) error {
	p, err := s.svc.Pitch(ctx, pitchID)
	if err != nil {
		return err
	}
	round, err := s.svc.Round(ctx, p.RoundNumber)
	if err != nil {
		return err
	}
	if round.Baseline == "" {
		v.BaseNote = fmt.Sprintf("Round %d names no baseline.", round.Number)
		return nil
	}
	main := k.File(k.Manifest.Source)
	if main == nil || !main.Text() {
		v.BaseNote = "The kernel is a binary image; there is no source to compare with the baseline's."
		return nil
	}
	prob, err := kernels.LookupProblem(k.Manifest.Problem)
	if err != nil {
		v.BaseNote = err.Error()
		return nil
	}
	base, err := prob.ResolveVariant(round.Baseline)
	if err != nil {
		v.BaseNote = fmt.Sprintf("The round's baseline %q is not a built-in variant of %s, so there is no source to compare with.", round.Baseline, prob.Name)
		return nil
	}
	src, err := base.Source()
	if err != nil {
		return fmt.Errorf("httpserver: kernel page: baseline source: %w", err)
	}
	v.BaseLabel = fmt.Sprintf("Against the round's baseline %s (%s).", round.Baseline, path.Base(base.SourceFile))
	d := unifiedDiff(path.Base(base.SourceFile), k.Manifest.Source, src, string(main.Data))
	v.BaseDiff = &d
	return nil
}

// kernelRuns are the runs whose variant names the kernel, among the runs
// of the pitches carrying it, with speedups withheld where the viewer may
// not see the pitch's results yet.
func (s *server) kernelRuns(ctx context.Context, viewer *pitches.User, hash string, uses []pitches.KernelUse) ([]templates.KernelRunRow, error) {
	if s.runs == nil {
		return nil, nil
	}
	vis := s.visibility(viewer)
	seen := map[int64]bool{}
	var out []templates.KernelRunRow
	for _, u := range uses {
		if seen[u.PitchID] {
			continue
		}
		seen[u.PitchID] = true
		list, err := s.runs.List(ctx, runner.Filter{PitchID: u.PitchID, Limit: 1000})
		if err != nil {
			return nil, err
		}
		hidden, err := vis.resultHidden(ctx, u.PitchID)
		if err != nil {
			return nil, err
		}
		for _, run := range list {
			if h, _, ok := pitches.ParseKernelVariant(run.Variant); !ok || h != hash {
				continue
			}
			row := templates.KernelRunRow{ID: run.ID, PitchID: run.PitchID, Variant: run.Variant, Device: deviceLabel(&run),
				Status: string(run.Status), Hidden: hidden, Created: run.CreatedAt.UTC().Format("2006-01-02 15:04")}
			if !hidden && run.HasResult {
				row.Speedup = speedupText(run.Speedup)
				if run.Imported {
					row.Speedup += " (imported)"
				}
			}
			out = append(out, row)
		}
	}
	return out, nil
}

// fillChecks turns a stored `web kernel check --json` report into rows per
// architecture and variant; a report of another shape is shown as JSON.
func fillChecks(v *templates.KernelView, rep pitches.CompileReport) {
	if len(rep.Report) == 0 {
		return
	}
	var doc struct {
		Archs []struct {
			Arch     string `json:"arch"`
			Variants []struct {
				Variant  string `json:"variant"`
				OK       bool   `json:"ok"`
				Messages string `json:"messages"`
				Note     string `json:"note"`
				Entries  []struct {
					Name         string `json:"name"`
					Registers    int    `json:"registers"`
					SharedStatic int    `json:"shared_static_bytes"`
					SharedDyn    int    `json:"shared_dynamic_bytes"`
					SpillStores  int    `json:"spill_store_bytes"`
					SpillLoads   int    `json:"spill_load_bytes"`
					Stack        int    `json:"stack_bytes"`
				} `json:"entries"`
			} `json:"variants"`
		} `json:"archs"`
		Skipped []struct {
			Arch   string `json:"arch"`
			Reason string `json:"reason"`
		} `json:"skipped"`
	}
	if err := json.Unmarshal(rep.Report, &doc); err != nil || len(doc.Archs)+len(doc.Skipped) == 0 {
		var buf bytes.Buffer
		if json.Indent(&buf, rep.Report, "", "  ") == nil {
			v.ReportJSON = buf.String()
		}
		return
	}
	for _, a := range doc.Archs {
		for _, vr := range a.Variants {
			row := templates.KernelCheckRow{Arch: a.Arch, Variant: vr.Variant, OK: vr.OK, Messages: vr.Messages, Note: vr.Note}
			for _, e := range vr.Entries {
				row.Entries = append(row.Entries, templates.KernelEntryRow{Name: e.Name, Registers: e.Registers,
					Shared: e.SharedStatic + e.SharedDyn, Spill: e.SpillStores + e.SpillLoads, Stack: e.Stack})
			}
			v.Checks = append(v.Checks, row)
		}
	}
	for _, sk := range doc.Skipped {
		v.Skipped = append(v.Skipped, sk.Arch+": "+sk.Reason)
	}
}

// launchText summarises the manifest's launch plan.
func launchText(raw []byte) string {
	var m struct {
		Launch struct {
			Mode        string `json:"mode"`
			Block       []int  `json:"block"`
			TileM       int    `json:"tile_m"`
			TileN       int    `json:"tile_n"`
			SharedBytes int    `json:"shared_bytes"`
		} `json:"launch"`
	}
	if json.Unmarshal(raw, &m) != nil {
		return ""
	}
	l := m.Launch
	dims := make([]string, len(l.Block))
	for i, b := range l.Block {
		dims[i] = strconv.Itoa(b)
	}
	return fmt.Sprintf("%s; block %s; tile %d x %d; %d B dynamic shared memory", l.Mode, strings.Join(dims, " x "), l.TileM, l.TileN, l.SharedBytes)
}

func sortedKeys(m map[string]bool) []string { return slices.Sorted(maps.Keys(m)) }
