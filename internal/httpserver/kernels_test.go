package httpserver

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
	"github.com/pitchtank/pitchtank/kernels"
)

// Submitted kernels over HTTP: upload by API (JSON, multipart, archives)
// and by the pitch page, the kernel page with its highlighted source and
// diffs, permissions and visibility per role, refused uploads that store
// nothing.

const clearDir = "../../examples/kernels/clear"

// exampleFiles reads examples/kernels/clear.
func exampleFiles(t *testing.T) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	for _, n := range []string{"manifest.json", "clear_gemm.cu"} {
		b, err := os.ReadFile(filepath.Join(clearDir, n))
		if err != nil {
			t.Fatal(err)
		}
		files[n] = b
	}
	return files
}

func hashOf(t *testing.T, files map[string][]byte) string {
	t.Helper()
	s, err := kernels.SubmissionFromFiles(files)
	if err != nil {
		t.Fatalf("submission: %v", err)
	}
	return s.Hash()
}

func jsonUpload(files map[string][]byte, extra map[string]string) map[string]any {
	enc := map[string]string{}
	for n, d := range files {
		enc[n] = base64.StdEncoding.EncodeToString(d)
	}
	body := map[string]any{"files": enc}
	for k, v := range extra {
		body[k] = v
	}
	return body
}

// multipartUpload posts files (name -> bytes) as the form field "files".
func (a *app) multipartUpload(path, login string, files map[string][]byte, fields map[string]string) resp {
	a.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for n, d := range files {
		w, err := mw.CreateFormFile("files", n)
		if err != nil {
			a.t.Fatal(err)
		}
		w.Write(d)
	}
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	mw.Close()
	req, err := http.NewRequest(http.MethodPost, a.srv.URL+path, &buf)
	if err != nil {
		a.t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+a.tokens[login])
	return a.do(http.DefaultClient, req)
}

func tarGz(t *testing.T, top string, files map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for n, d := range files {
		if err := tw.WriteHeader(&tar.Header{Name: top + n, Mode: 0o644, Size: int64(len(d)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write(d)
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

func zipOf(t *testing.T, files map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for n, d := range files {
		w, err := zw.Create(n)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(d)
	}
	zw.Close()
	return buf.Bytes()
}

// kernelApp is a server with a pitching round (baseline "baseline") and
// alice's pitch in it.
func kernelApp(t *testing.T, cfg Config) (*app, *pitches.Pitch) {
	t.Helper()
	a := newApp(t, cfg)
	if _, err := a.db.CreateRound(context.Background(), a.users["admin"], pitches.RoundInput{Number: 1, Title: "R1", Baseline: "baseline", Criteria: rubric,
		Measurement: &pitches.RoundMeasurement{Problem: "nvfp4_group_gemm"}}); err != nil {
		t.Fatal(err)
	}
	return a, a.pitch("alice", 1, "Clear kernel")
}

// The API: a JSON upload stores the kernel and names it in the pitch's
// variant; a second upload (a .tar.gz of the folder) is version 2; the
// kernel page shows the source highlighted, the diff against version 1 and
// against the round's baseline source.
func TestKernelUploadAPI(t *testing.T) {
	a, p := kernelApp(t, Config{})
	files := exampleFiles(t)
	h1 := hashOf(t, files)
	var v1 kernelVersionJSON
	a.api("POST", fmt.Sprintf("/api/pitches/%d/kernel", p.ID), "alice", jsonUpload(files, map[string]string{"note": "first", "knobs": "stages=1"})).
		wantStatus(t, http.StatusCreated).decode(t, &v1)
	if v1.Version != 1 || v1.Hash != h1 || v1.Variant != "kernel:"+h1+"?stages=1" || v1.Report == nil || v1.Report.Status != "not compiled" {
		t.Fatalf("upload 1: %+v", v1)
	}
	var pj pitchJSON
	a.api("GET", fmt.Sprintf("/api/pitches/%d", p.ID), "oracle", nil).wantStatus(t, http.StatusOK).decode(t, &pj)
	if pj.Variant != "kernel:"+h1+"?stages=1" {
		t.Fatalf("pitch variant %q", pj.Variant)
	}

	// Version 2: one line changed, uploaded as a .tar.gz with a top folder.
	files2 := exampleFiles(t)
	files2["clear_gemm.cu"] = bytes.Replace(files2["clear_gemm.cu"], []byte("#define STAGES 2"), []byte("#define STAGES 1 // fewer buffers"), 1)
	if bytes.Equal(files2["clear_gemm.cu"], files["clear_gemm.cu"]) {
		t.Fatal("the example changed: no #define STAGES 2 to edit")
	}
	h2 := hashOf(t, files2)
	var v2 kernelVersionJSON
	a.multipartUpload(fmt.Sprintf("/api/pitches/%d/kernel", p.ID), "alice", map[string][]byte{"clear.tar.gz": tarGz(t, "clear/", files2)}, map[string]string{"note": "one stage"}).
		wantStatus(t, http.StatusCreated).decode(t, &v2)
	if v2.Version != 2 || v2.Hash != h2 || v2.Note != "one stage" {
		t.Fatalf("upload 2: %+v", v2)
	}
	// A zip of the same folder is the same kernel: version 3, same hash.
	var v3 kernelVersionJSON
	a.multipartUpload(fmt.Sprintf("/api/pitches/%d/kernel", p.ID), "admin", map[string][]byte{"k.zip": zipOf(t, files2)}, nil).
		wantStatus(t, http.StatusCreated).decode(t, &v3)
	if v3.Version != 3 || v3.Hash != h2 {
		t.Fatalf("upload 3 (zip): %+v", v3)
	}

	var list struct {
		Versions []kernelVersionJSON `json:"versions"`
	}
	a.api("GET", fmt.Sprintf("/api/pitches/%d/kernel/versions", p.ID), "bob", nil).wantStatus(t, http.StatusOK).decode(t, &list)
	if len(list.Versions) != 3 || list.Versions[0].Hash != h1 || list.Versions[1].Hash != h2 || list.Versions[0].Report != nil {
		t.Fatalf("versions as another contestant (no reports while the source is hidden): %+v", list.Versions)
	}
	var k kernelJSONOut
	a.api("GET", "/api/kernels/"+h2, "oracle", nil).wantStatus(t, http.StatusOK).decode(t, &k)
	if k.Hash != h2 || len(k.Files) != 2 || len(k.Versions) != 2 || !strings.Contains(string(k.Manifest), `"clear"`) {
		t.Fatalf("kernel as a shark: %+v", k)
	}
	for _, f := range k.Files {
		if string(files2[f.Name]) != f.Text {
			t.Errorf("file %s differs from the upload", f.Name)
		}
	}

	// The kernel page of version 2, as the author.
	page := a.browser().login("alice").get(fmt.Sprintf("/kernels/%s?pitch=%d&v=2", h2, p.ID)).wantStatus(t, http.StatusOK).body
	wantContains(t, page,
		`class="hl-chroma"`, `id="f1-L1"`, // highlighted, lines linkable
		`<span class="hl-cp">#define STAGES 1`, // a preprocessor line, highlighted
		"Changes from the previous version", "version 1 (clear, "+h1[:12],
		`<span class="diff-del">-#define STAGES 2</span>`, `<span class="diff-add">+#define STAGES 1 // fewer buffers</span>`,
		"Against the round&#39;s baseline baseline (gemm.cu)", "--- gemm.cu",
	)
	wantNotContains(t, page, `style="`)
	// The pitch page links the kernel and lists its versions.
	pp := a.browser().login("oracle").get(fmt.Sprintf("/pitches/%d", p.ID)).wantStatus(t, http.StatusOK).body
	wantContains(t, pp, `href="/kernels/`+h2+`"`, "All 3 versions")
	wantNotContains(t, pp, `enctype="multipart/form-data"`) // a shark may not upload
}

// Who may upload, and who may read the source, per role and round state.
func TestKernelPermissionsAndVisibility(t *testing.T) {
	a, p := kernelApp(t, Config{})
	files := exampleFiles(t)
	up := fmt.Sprintf("/api/pitches/%d/kernel", p.ID)
	for _, c := range []struct {
		login  string
		status int
		code   string
	}{{"", 401, "unauthorized"}, {"bob", 403, "forbidden"}, {"oracle", 403, "forbidden"}, {"vera", 403, "forbidden"}} {
		a.api("POST", up, c.login, jsonUpload(files, nil)).wantError(t, c.status, c.code, "")
	}
	if vs, _ := a.db.KernelVersions(context.Background(), p.ID); len(vs) != 0 {
		t.Fatalf("refused uploads stored %d versions", len(vs))
	}
	var v kernelVersionJSON
	a.api("POST", up, "alice", jsonUpload(files, nil)).wantStatus(t, http.StatusCreated).decode(t, &v)

	// The source: sharks, admins, the author; others once the round closes.
	roles := []string{"admin", "oracle", "alice", "bob", "vera"}
	want := map[pitches.RoundStatus][]int{
		pitches.RoundPitching: {200, 200, 200, 403, 403},
		pitches.RoundJudging:  {200, 200, 200, 403, 403},
		pitches.RoundClosed:   {200, 200, 200, 200, 200},
	}
	for _, st := range []pitches.RoundStatus{pitches.RoundPitching, pitches.RoundJudging, pitches.RoundClosed} {
		if st != pitches.RoundPitching {
			a.status(1, st)
		}
		for i, login := range roles {
			if r := a.api("GET", "/api/kernels/"+v.Hash, login, nil); r.status != want[st][i] {
				t.Errorf("round %s, %s: API status %d, want %d: %s", st, login, r.status, want[st][i], r.body)
			}
			page := a.browser().login(login).get("/kernels/" + v.Hash)
			if page.status != want[st][i] {
				t.Errorf("round %s, %s: page status %d, want %d", st, login, page.status, want[st][i])
			}
			if page.status == 403 {
				wantContains(t, page.body, "once round 1 closes")
				wantNotContains(t, page.body, "clear_gemm(")
			}
		}
		if r := a.api("GET", "/api/kernels/"+v.Hash, "", nil); r.status != 401 && !(st == pitches.RoundClosed && r.status == 200) {
			t.Errorf("round %s, anonymous: %d", st, r.status)
		}
		// Uploads only while pitching.
		if st != pitches.RoundPitching {
			a.api("POST", up, "alice", jsonUpload(files, nil)).wantError(t, 409, "conflict", "")
		}
	}
	a.api("GET", "/api/kernels/"+strings.Repeat("0", 64), "admin", nil).wantError(t, 404, "not_found", "")
	a.api("GET", "/api/kernels/nothex", "admin", nil).wantError(t, 404, "not_found", "")
}

// Oversized, garbage and wrong-architecture uploads are refused naming the
// field, and nothing is stored: no version, no source, the variant as it was.
func TestKernelUploadRefusedHTTP(t *testing.T) {
	a, p := kernelApp(t, Config{Kernels: &runner.SubmissionChecker{Archs: []int{90}}})
	up := fmt.Sprintf("/api/pitches/%d/kernel", p.ID)
	withManifest := func(edit func(m map[string]any)) map[string][]byte {
		f := exampleFiles(t)
		var m map[string]any
		json.Unmarshal(f["manifest.json"], &m)
		edit(m)
		f["manifest.json"], _ = json.Marshal(m)
		return f
	}
	cubin, err := os.ReadFile("../runner/testdata/kernels/clear_sm75.cubin")
	if err != nil {
		t.Fatal(err)
	}
	cubinFiles := withManifest(func(m map[string]any) { m["kind"], m["source"] = "cubin", "clear.cubin"; delete(m, "knobs") })
	delete(cubinFiles, "clear_gemm.cu")
	cubinFiles["clear.cubin"] = cubin
	big := exampleFiles(t)
	big["clear_gemm.cu"] = append(big["clear_gemm.cu"], bytes.Repeat([]byte("// pad\n"), pitches.MaxKernelBytes/7)...)

	cases := []struct {
		name   string
		body   any
		status int
		field  string
		msg    string
	}{
		{"oversized", jsonUpload(big, nil), 422, "files", "the limit is 1048576"},
		{"garbage manifest", jsonUpload(map[string][]byte{"manifest.json": []byte("not json"), "clear_gemm.cu": []byte("x")}, nil), 422, "files.manifest.json", "parse"},
		{"garbage base64", map[string]any{"files": map[string]string{"manifest.json": "!!!"}}, 422, "files.manifest.json", "not base64"},
		{"garbage kind", jsonUpload(withManifest(func(m map[string]any) { m["kind"] = "python" }), nil), 422, "manifest.kind", "cuda, ptx or cubin"},
		{"path", jsonUpload(map[string][]byte{"manifest.json": []byte("{}"), "../x.cu": []byte("x")}, nil), 422, "files.../x.cu", "outside the kernel's folder"},
		{"min_arch above the GPUs", jsonUpload(withManifest(func(m map[string]any) { m["min_arch"] = 100 }), nil), 422, "manifest.min_arch", "this server's GPUs are sm_90"},
		{"cubin for sm_75", jsonUpload(cubinFiles, nil), 422, "files.clear.cubin", "holds code for sm_75 only"},
		{"unknown knob", jsonUpload(exampleFiles(t), map[string]string{"knobs": "unroll=2"}), 422, "variant", "kernel clear declares stages"},
		{"no files", map[string]any{"files": map[string]string{}}, 422, "files", "give the kernel's files"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := a.api("POST", up, "alice", c.body)
			r.wantError(t, c.status, map[int]string{422: "invalid", 413: "too_large"}[c.status], c.field)
			if !strings.Contains(r.body, c.msg) {
				t.Errorf("message lacks %q: %s", c.msg, r.body)
			}
		})
	}
	// A body over the upload cap: 413.
	huge := strings.Repeat("A", maxKernelUploadBody+10)
	a.api("POST", up, "alice", `{"files":{"manifest.json":"`+huge+`"}}`).wantError(t, 413, "too_large", "*")
	// A garbage archive through the page: the form says why, nothing stored.
	a.multipartUpload(up, "alice", map[string][]byte{"k.zip": []byte("PK not really")}, nil).wantError(t, 422, "invalid", "files.k.zip")

	if vs, err := a.db.KernelVersions(context.Background(), p.ID); err != nil || len(vs) != 0 {
		t.Errorf("refused uploads stored versions: %v %v", vs, err)
	}
	for _, f := range []map[string][]byte{cubinFiles, withManifest(func(m map[string]any) { m["min_arch"] = 100 })} {
		if _, err := a.db.StoredKernel(context.Background(), hashOf(t, f)); pitches.ErrorCode(err) != pitches.ENOTFOUND {
			t.Errorf("a refused kernel is stored: %v", err)
		}
	}
	if got, _ := a.db.Pitch(context.Background(), p.ID); got.Variant != p.Variant {
		t.Errorf("variant changed to %q", got.Variant)
	}
}

// The pitch page's upload form (no JavaScript): a refused upload renders
// the page with the message at the field; an accepted one lands on the
// kernel page.
func TestKernelUploadForm(t *testing.T) {
	a, p := kernelApp(t, Config{})
	b := a.browser().login("alice")
	page := b.get(fmt.Sprintf("/pitches/%d", p.ID)).wantStatus(t, http.StatusOK).body
	wantContains(t, page, `action="/pitches/`+fmt.Sprint(p.ID)+`/kernel"`, `enctype="multipart/form-data"`)

	post := func(files map[string][]byte) resp {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		for n, d := range files {
			w, _ := mw.CreateFormFile("files", n)
			w.Write(d)
		}
		mw.WriteField("note", "from the form")
		mw.Close()
		req, _ := http.NewRequest(http.MethodPost, a.srv.URL+fmt.Sprintf("/pitches/%d/kernel", p.ID), &buf)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		return a.do(b.c, req)
	}
	bad := post(map[string][]byte{"clear_gemm.cu": exampleFiles(t)["clear_gemm.cu"]})
	bad.wantStatus(t, http.StatusUnprocessableEntity)
	wantContains(t, bad.body, "needs a manifest.json", `value="from the form"`)
	ok := post(exampleFiles(t))
	if ok.status != http.StatusSeeOther || !strings.HasPrefix(ok.header.Get("Location"), "/kernels/") {
		t.Fatalf("upload: %d %s", ok.status, ok.header.Get("Location"))
	}
	page = b.get(ok.header.Get("Location")).wantStatus(t, http.StatusOK).body
	wantContains(t, page, "Kernel uploaded: version 1", "This is the pitch's first kernel version.", `class="hl-chroma"`)
}

func TestUnifiedDiff(t *testing.T) {
	// Changes 9 lines apart make two hunks (6 or fewer apart would merge).
	a := "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\n"
	b := "a\nb\nc\nD\ne\nf\ng\nh\ni\nj\nk\nl\nm\nn\n"
	d := unifiedDiff("x", "y", a, b)
	if d.Added != 2 || d.Deleted != 1 || len(d.Hunks) != 2 {
		t.Fatalf("diff: +%d -%d, %d hunks: %+v", d.Added, d.Deleted, len(d.Hunks), d.Hunks)
	}
	var got []string
	for _, l := range d.Hunks[0].Lines {
		got = append(got, l.Op+l.Text)
	}
	if want := " a, b, c,-d,+D, e, f, g"; strings.Join(got, ",") != want {
		t.Errorf("hunk 1: %q, want %q", strings.Join(got, ","), want)
	}
	if h := d.Hunks[0]; h.FromLine != 1 || h.FromCount != 7 || h.ToLine != 1 || h.ToCount != 7 {
		t.Errorf("hunk 1 header: %+v", h)
	}
	if same := unifiedDiff("x", "y", a, a); !same.Same() {
		t.Errorf("equal texts: %+v", same)
	}
	if all := unifiedDiff("x", "y", "", "p\nq\n"); all.Added != 2 || all.Deleted != 0 {
		t.Errorf("from nothing: %+v", all)
	}
	// Past the edit limit the page says so instead of diffing.
	var x, y strings.Builder
	for i := 0; i < maxDiffEdits; i++ {
		fmt.Fprintf(&x, "x%d\n", i)
		fmt.Fprintf(&y, "y%d\n", i)
	}
	if big := unifiedDiff("x", "y", x.String(), y.String()); big.Note == "" || len(big.Hunks) != 0 {
		t.Errorf("too different: %+v", big.Note)
	}
}

// The pitch form carries an optional kernel: filing a pitch with one lands
// on the kernel page, the pitch naming it; a refused kernel leaves the pitch
// filed and says why at the pitch page's upload form.
func TestPitchFormWithKernel(t *testing.T) {
	a, _ := kernelApp(t, Config{})
	b := a.browser().login("bob")
	wantContains(t, b.get("/pitches/new").wantStatus(t, http.StatusOK).body, `enctype="multipart/form-data"`, `name="kernel_files"`)
	post := func(path, title string, files map[string][]byte) resp {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		for k, v := range map[string]string{"round": "1", "title": title, "lo": "0.1", "hi": "0.3", "body": "mine"} {
			mw.WriteField(k, v)
		}
		for n, d := range files {
			w, _ := mw.CreateFormFile("kernel_files", n)
			w.Write(d)
		}
		if len(files) == 0 {
			mw.CreateFormFile("kernel_files", "") // what a browser sends for an empty file input
		}
		mw.Close()
		req, _ := http.NewRequest(http.MethodPost, a.srv.URL+path, &buf)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		return a.do(b.c, req)
	}
	plain := post("/pitches", "No kernel", nil)
	if plain.status != http.StatusSeeOther || !strings.HasPrefix(plain.header.Get("Location"), "/pitches/") {
		t.Fatalf("pitch without a kernel: %d %s", plain.status, plain.header.Get("Location"))
	}
	files := exampleFiles(t)
	ok := post("/pitches", "With a kernel", files)
	if ok.status != http.StatusSeeOther || !strings.HasPrefix(ok.header.Get("Location"), "/kernels/"+hashOf(t, files)) {
		t.Fatalf("pitch with a kernel: %d %s %s", ok.status, ok.header.Get("Location"), ok.body)
	}
	var withKernel, refused int
	bad := post("/pitches", "Refused kernel", map[string][]byte{"clear_gemm.cu": files["clear_gemm.cu"]})
	bad.wantStatus(t, http.StatusUnprocessableEntity)
	wantContains(t, bad.body, "The pitch is saved, but its kernel was refused", "needs a manifest.json")
	ps, _ := a.db.Pitches(context.Background(), 1)
	for _, p := range ps {
		switch p.Title {
		case "With a kernel":
			if p.Variant == "kernel:"+hashOf(t, files) {
				withKernel++
			}
		case "Refused kernel":
			if vs, _ := a.db.KernelVersions(context.Background(), p.ID); len(vs) == 0 && p.Variant == "" {
				refused++
			}
		}
	}
	if withKernel != 1 || refused != 1 {
		t.Errorf("pitches: with kernel %d, refused kernel stored nothing %d: %+v", withKernel, refused, ps)
	}
}

// The compile report through the real `web kernel check --json` (this
// repository's cmd/web as the child): with NVRTC, "compiled" with a row per
// architecture and variant on the kernel page; without it, "not compiled
// here: NVRTC unavailable" (PITCHTANK_REQUIRE_NVRTC=1 makes that a failure).
func TestKernelCompileReportFromWebKernelCheck(t *testing.T) {
	bin := webBinary(t)
	a, p := kernelApp(t, Config{Kernels: &runner.SubmissionChecker{Command: runner.CheckCommand(bin)}})
	var v kernelVersionJSON
	a.api("POST", fmt.Sprintf("/api/pitches/%d/kernel", p.ID), "alice", jsonUpload(exampleFiles(t), nil)).
		wantStatus(t, http.StatusCreated).decode(t, &v)
	if v.Report == nil {
		t.Fatal("no report")
	}
	switch v.Report.Status {
	case "compiled":
		var doc struct {
			OK    bool `json:"ok"`
			Archs []struct {
				Arch string `json:"arch"`
			} `json:"archs"`
		}
		if err := json.Unmarshal(v.Report.Report, &doc); err != nil || !doc.OK || len(doc.Archs) == 0 {
			t.Fatalf("report %s (%v)", v.Report.Report, err)
		}
		page := a.browser().login("oracle").get("/kernels/"+v.Hash).wantStatus(t, http.StatusOK).body
		wantContains(t, page, `<table class="table kernel-report">`, doc.Archs[0].Arch, "<code>clear_gemm</code>")
	case "not compiled":
		if os.Getenv("PITCHTANK_REQUIRE_NVRTC") == "1" {
			t.Fatalf("NVRTC required, but: %s", v.Report.Message)
		}
		if !strings.Contains(v.Report.Message, "NVRTC unavailable") {
			t.Fatalf("report: %+v", v.Report)
		}
		t.Logf("no NVRTC here: %s", v.Report.Message)
	default:
		t.Fatalf("the example does not compile: %+v", v.Report)
	}
}
