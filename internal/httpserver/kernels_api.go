package httpserver

import (
	"encoding/base64"
	"encoding/json"
	"mime"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/pitchtank/pitchtank/internal/pitches"
)

// The kernels API (docs/api.md, "Kernels"): upload a pitch's kernel
// (multipart or JSON with base64 files), list a pitch's kernel versions,
// read a stored kernel.

func (s *server) registerKernelAPIRoutes(r chi.Router) {
	r.Post("/pitches/{id}/kernel", s.handleAPIUploadKernel)
	r.Get("/pitches/{id}/kernel/versions", s.handleAPIKernelVersions)
	r.Get("/kernels/{hash}", s.handleAPIKernel)
}

// kernelVersionJSON is one upload of a pitch's kernel. Report is present
// only for viewers who may read the source (it quotes it).
type kernelVersionJSON struct {
	PitchID    int64                  `json:"pitch_id"`
	Version    int                    `json:"version"`
	Hash       string                 `json:"hash"`
	Variant    string                 `json:"variant"`
	Name       string                 `json:"name"`
	Kind       string                 `json:"kind"`
	Size       int64                  `json:"size"`
	UploadedBy int64                  `json:"uploaded_by"`
	Uploader   string                 `json:"uploader"`
	Note       string                 `json:"note,omitempty"`
	CreatedAt  time.Time              `json:"created_at"`
	Report     *pitches.CompileReport `json:"report,omitempty"`
	URL        string                 `json:"url"`
}

func toKernelVersionJSON(v pitches.KernelVersion, withReport bool) kernelVersionJSON {
	j := kernelVersionJSON{PitchID: v.PitchID, Version: v.Version, Hash: v.Hash, Variant: pitches.KernelVariant(v.Hash, ""),
		Name: v.Name, Kind: v.Kind, Size: v.Size, UploadedBy: v.UploadedBy, Uploader: v.Uploader, Note: v.Note,
		CreatedAt: v.CreatedAt, URL: "/kernels/" + v.Hash}
	if withReport {
		r := v.Report
		j.Report = &r
	}
	return j
}

// kernelFileJSON is one file: text as it is, binaries in base64.
type kernelFileJSON struct {
	Name   string `json:"name"`
	Size   int    `json:"size"`
	Text   string `json:"text,omitempty"`
	Base64 string `json:"base64,omitempty"`
}

type kernelJSONOut struct {
	Hash      string              `json:"hash"`
	Manifest  json.RawMessage     `json:"manifest"`
	Size      int64               `json:"size"`
	CreatedBy int64               `json:"created_by"`
	Author    string              `json:"author"`
	CreatedAt time.Time           `json:"created_at"`
	Files     []kernelFileJSON    `json:"files"`
	Versions  []kernelVersionJSON `json:"versions"` // every upload of it, to any pitch, with its compile report
}

func (s *server) handleAPIUploadKernel(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	var (
		files map[string][]byte
		form  kernelUploadForm
	)
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "multipart/form-data" {
		files, form, err = readMultipartKernel(r)
	} else {
		files, form, err = readJSONKernel(r)
	}
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	v, err := s.uploadKernel(r.Context(), userFrom(r.Context()), id, files, form)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	out := toKernelVersionJSON(*v, true)
	if p, err := s.svc.Pitch(r.Context(), id); err == nil {
		out.Variant = p.Variant // with the knob overrides given
	}
	w.Header().Set("Location", out.URL)
	writeJSON(w, http.StatusCreated, out)
}

func (s *server) handleAPIKernelVersions(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	ctx, viewer := r.Context(), userFrom(r.Context())
	vs, err := s.svc.KernelVersions(ctx, id)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	visible := map[string]bool{}
	out := make([]kernelVersionJSON, 0, len(vs))
	for _, v := range vs {
		see, ok := visible[v.Hash]
		if !ok {
			_, _, err := s.svc.KernelSource(ctx, viewer, v.Hash)
			switch pitches.ErrorCode(err) {
			case "":
				see = true
			case pitches.EFORBIDDEN, pitches.EUNAUTHORIZED:
			default:
				s.apiError(w, r, err)
				return
			}
			visible[v.Hash] = see
		}
		out = append(out, toKernelVersionJSON(v, see))
	}
	writeJSON(w, http.StatusOK, map[string]any{"pitch_id": id, "versions": out})
}

func (s *server) handleAPIKernel(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	k, _, err := s.svc.KernelSource(ctx, userFrom(ctx), chi.URLParam(r, "hash"))
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	out := kernelJSONOut{Hash: k.Hash, Manifest: k.Raw, Size: k.Size, CreatedBy: k.CreatedBy, Author: k.Author,
		CreatedAt: k.CreatedAt, Files: []kernelFileJSON{}, Versions: []kernelVersionJSON{}}
	if !json.Valid(out.Manifest) {
		out.Manifest = nil
	}
	for _, f := range k.Files {
		fj := kernelFileJSON{Name: f.Name, Size: len(f.Data)}
		if f.Text() {
			fj.Text = string(f.Data)
		} else {
			fj.Base64 = base64.StdEncoding.EncodeToString(f.Data)
		}
		out.Files = append(out.Files, fj)
	}
	vs, err := s.svc.KernelVersionsOf(ctx, k.Hash)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	for _, v := range vs {
		out.Versions = append(out.Versions, toKernelVersionJSON(v, true))
	}
	writeJSON(w, http.StatusOK, out)
}
