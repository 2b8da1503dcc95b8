package httpserver

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"sort"
	"strings"

	"github.com/pitchtank/pitchtank/internal/pitches"
)

// Decoding a kernel upload into the submission's files (name -> bytes):
// separate files, or one .tar, .tar.gz/.tgz or .zip of the folder (a single
// top folder is dropped). The limits of pitches.ValidateKernelFiles apply to
// what comes out; while reading, no more than the limit plus one byte is
// ever held per file, so an archive bomb stops early. Names are checked by
// the domain (no paths, no "..").

// maxKernelUploadBody caps the body of an upload request: the files' limit
// in base64 (JSON) plus room for the form around it.
const maxKernelUploadBody = pitches.MaxKernelBytes*4/3 + 256<<10

// isKernelUpload reports the upload endpoints, whose bodies may be larger
// than other requests' (limitBody).
func isKernelUpload(r *http.Request) bool {
	if r.Method != http.MethodPost {
		return false
	}
	if r.URL.Path == "/pitches" || strings.HasPrefix(r.URL.Path, "/pitches/") && strings.HasSuffix(r.URL.Path, "/edit") {
		return true // the pitch form, which may carry the kernel
	}
	p := strings.TrimPrefix(r.URL.Path, "/api")
	return strings.HasPrefix(p, "/pitches/") && strings.HasSuffix(p, "/kernel")
}

// kernelUploadForm is what an upload carries besides the files.
type kernelUploadForm struct {
	Note  string
	Knobs string
}

// readMultipartKernel reads the multipart form's "files" (one or more) and
// its note and knob fields.
func readMultipartKernel(r *http.Request) (map[string][]byte, kernelUploadForm, error) {
	var form kernelUploadForm
	if err := parseMultipart(r); err != nil {
		return nil, form, err
	}
	form.Note = strings.TrimSpace(r.PostForm.Get("note"))
	form.Knobs = strings.TrimSpace(r.PostForm.Get("knobs"))
	files, err := formKernelFiles(r, "files")
	if err == nil && files == nil {
		err = pitches.Errorf(pitches.EINVALID, "files", "choose the kernel's files: a .cu with its manifest.json, or a .tar/.zip of the folder")
	}
	return files, form, err
}

// parseMultipart parses a multipart body within the upload cap.
func parseMultipart(r *http.Request) error {
	if err := r.ParseMultipartForm(maxKernelUploadBody); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return pitches.Errorf(pitches.ETOOLARGE, "files", "the upload is larger than %d bytes; a kernel is at most %d bytes (1 MiB)", mbe.Limit, pitches.MaxKernelBytes)
		}
		return pitches.Errorf(pitches.EBADREQUEST, "files", "the upload could not be read as a multipart form: %v", err)
	}
	return nil
}

// formKernelFiles reads the files of the parsed multipart form's field
// (archives expanded); nil and no error when none was chosen (a browser
// sends an empty part for an empty file input).
func formKernelFiles(r *http.Request, field string) (map[string][]byte, error) {
	var heads []*multipart.FileHeader
	if r.MultipartForm != nil {
		for _, h := range r.MultipartForm.File[field] {
			if h.Filename != "" || h.Size > 0 {
				heads = append(heads, h)
			}
		}
	}
	if len(heads) == 0 {
		return nil, nil
	}
	uploads := map[string][]byte{}
	for _, h := range heads {
		if h.Size > pitches.MaxKernelBytes {
			return nil, pitches.Errorf(pitches.EINVALID, "files", "%s is %d bytes; a kernel is at most %d bytes (1 MiB)", h.Filename, h.Size, pitches.MaxKernelBytes)
		}
		f, err := h.Open()
		if err != nil {
			return nil, pitches.Errorf(pitches.EBADREQUEST, "files", "read %s: %v", h.Filename, err)
		}
		data, err := io.ReadAll(io.LimitReader(f, pitches.MaxKernelBytes+1))
		f.Close()
		if err != nil {
			return nil, pitches.Errorf(pitches.EBADREQUEST, "files", "read %s: %v", h.Filename, err)
		}
		// Browsers send a base name; a client may send a path: the
		// domain refuses that by name, so keep it as sent.
		name := h.Filename
		if _, dup := uploads[name]; dup {
			return nil, pitches.Errorf(pitches.EINVALID, "files."+name, "%s is uploaded twice", name)
		}
		uploads[name] = data
	}
	return expandArchives(uploads)
}

// kernelJSON is the JSON form of an upload: files by name, base64.
type kernelJSON struct {
	Files map[string]string `json:"files"`
	Note  string            `json:"note"`
	Knobs string            `json:"knobs"`
}

func readJSONKernel(r *http.Request) (map[string][]byte, kernelUploadForm, error) {
	var q kernelJSON
	if err := decodeJSON(r.Body, &q); err != nil {
		return nil, kernelUploadForm{}, err
	}
	form := kernelUploadForm{Note: strings.TrimSpace(q.Note), Knobs: strings.TrimSpace(q.Knobs)}
	if len(q.Files) == 0 {
		return nil, form, pitches.Errorf(pitches.EINVALID, "files", `give the kernel's files: {"files": {"manifest.json": "<base64>", "kernel.cu": "<base64>"}}`)
	}
	uploads := map[string][]byte{}
	for name, b64 := range q.Files {
		data, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			return nil, form, pitches.Errorf(pitches.EINVALID, "files."+name, "%s is not base64 (standard alphabet, padded): %v", name, err)
		}
		uploads[name] = data
	}
	files, err := expandArchives(uploads)
	return files, form, err
}

// expandArchives replaces a lone .tar, .tar.gz, .tgz or .zip upload by the
// files inside it; other uploads are the files themselves.
func expandArchives(uploads map[string][]byte) (map[string][]byte, error) {
	if len(uploads) != 1 {
		return uploads, nil
	}
	for name, data := range uploads {
		lower := strings.ToLower(name)
		switch {
		case strings.HasSuffix(lower, ".zip"):
			return unzip(name, data)
		case strings.HasSuffix(lower, ".tar"):
			return untar(name, bytes.NewReader(data))
		case strings.HasSuffix(lower, ".tar.gz"), strings.HasSuffix(lower, ".tgz"):
			zr, err := gzip.NewReader(bytes.NewReader(data))
			if err != nil {
				return nil, pitches.Errorf(pitches.EINVALID, "files."+name, "%s is not gzip: %v", name, err)
			}
			return untar(name, zr)
		}
	}
	return uploads, nil
}

// archiveFiles collects an archive's regular files, stopping at the
// limits, then drops a single top folder.
type archiveFiles struct {
	archive string
	files   map[string][]byte
	total   int
}

func (a *archiveFiles) add(name string, r io.Reader) error {
	if len(a.files) >= pitches.MaxKernelFiles {
		return pitches.Errorf(pitches.EINVALID, "files", "%s holds more than %d files", a.archive, pitches.MaxKernelFiles)
	}
	data, err := io.ReadAll(io.LimitReader(r, int64(pitches.MaxKernelBytes-a.total)+1))
	if err != nil {
		return pitches.Errorf(pitches.EINVALID, "files."+a.archive, "read %s in %s: %v", name, a.archive, err)
	}
	a.total += len(data)
	if a.total > pitches.MaxKernelBytes {
		return pitches.Errorf(pitches.EINVALID, "files", "%s unpacks to more than %d bytes (1 MiB)", a.archive, pitches.MaxKernelBytes)
	}
	if _, dup := a.files[name]; dup {
		return pitches.Errorf(pitches.EINVALID, "files."+name, "%s holds %s twice", a.archive, name)
	}
	a.files[name] = data
	return nil
}

// flatten drops a folder every file shares ("clear/manifest.json" ->
// "manifest.json"); deeper paths stay as they are and the domain refuses
// them by name.
func (a *archiveFiles) flatten() (map[string][]byte, error) {
	if len(a.files) == 0 {
		return nil, pitches.Errorf(pitches.EINVALID, "files."+a.archive, "%s holds no files", a.archive)
	}
	names := make([]string, 0, len(a.files))
	for n := range a.files {
		names = append(names, n)
	}
	sort.Strings(names)
	top, _, ok := strings.Cut(names[0], "/")
	if ok {
		for _, n := range names {
			if !strings.HasPrefix(n, top+"/") {
				ok = false
				break
			}
		}
	}
	if !ok || top == ".." {
		return a.files, nil
	}
	out := map[string][]byte{}
	for n, d := range a.files {
		out[strings.TrimPrefix(n, top+"/")] = d
	}
	return out, nil
}

func untar(name string, r io.Reader) (map[string][]byte, error) {
	a := &archiveFiles{archive: name, files: map[string][]byte{}}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, pitches.Errorf(pitches.EINVALID, "files."+name, "%s is not a tar archive: %v", name, err)
		}
		switch h.Typeflag {
		case tar.TypeDir, tar.TypeXGlobalHeader:
			continue
		case tar.TypeReg:
		default:
			return nil, pitches.Errorf(pitches.EINVALID, "files."+name, "%s holds %s, which is not a regular file (links and devices are refused)", name, h.Name)
		}
		if strings.Contains(h.Name, "..") || strings.HasPrefix(h.Name, "/") {
			return nil, pitches.Errorf(pitches.EINVALID, "files."+h.Name, "%s names %s, outside the kernel's folder", name, h.Name)
		}
		if err := a.add(strings.TrimPrefix(h.Name, "./"), tr); err != nil {
			return nil, err
		}
	}
	return a.flatten()
}

func unzip(name string, data []byte) (map[string][]byte, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, pitches.Errorf(pitches.EINVALID, "files."+name, "%s is not a zip archive: %v", name, err)
	}
	a := &archiveFiles{archive: name, files: map[string][]byte{}}
	for _, f := range zr.File {
		if f.FileInfo().IsDir() {
			continue
		}
		if !f.Mode().IsRegular() {
			return nil, pitches.Errorf(pitches.EINVALID, "files."+name, "%s holds %s, which is not a regular file", name, f.Name)
		}
		if strings.Contains(f.Name, "..") || strings.HasPrefix(f.Name, "/") {
			return nil, pitches.Errorf(pitches.EINVALID, "files."+f.Name, "%s names %s, outside the kernel's folder", name, f.Name)
		}
		rc, err := f.Open()
		if err != nil {
			return nil, pitches.Errorf(pitches.EINVALID, "files."+name, "open %s in %s: %v", f.Name, name, err)
		}
		err = a.add(f.Name, rc)
		rc.Close()
		if err != nil {
			return nil, err
		}
	}
	return a.flatten()
}
