package kernels

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Each rule of the manifest refuses with a *SubmissionError naming its
// field, starting from the valid clear example.
func TestSubmissionRefusals(t *testing.T) {
	sub := exampleSubmission(t, "clear")
	cases := []struct {
		field string
		edit  func(m map[string]any)
		files func(f map[string][]byte)
		want  string
	}{
		{field: "name", edit: func(m map[string]any) { m["name"] = "My Kernel" }},
		{field: "name", edit: func(m map[string]any) { m["name"] = strings.Repeat("a", 41) }},
		{field: "problem", edit: func(m map[string]any) { m["problem"] = "nvfp4_gemm" }, want: "known:"},
		{field: "kind", edit: func(m map[string]any) { m["kind"] = "sass" }},
		{field: "source", edit: func(m map[string]any) { m["source"] = "../etc/passwd" }},
		{field: "source", edit: func(m map[string]any) { m["source"] = "missing.cu" }, want: "missing"},
		{field: "source", files: func(f map[string][]byte) { f["clear_gemm.cu"] = []byte{0xff, 0xfe, 'x'} }, want: "UTF-8"},
		{field: "source", files: func(f map[string][]byte) { f["clear_gemm.cu"] = []byte("int x;\x00") }, want: "NUL"},
		{field: "headers", edit: func(m map[string]any) { m["kind"] = "ptx"; m["headers"] = []string{"a.cuh"} }, want: "only kind cuda"},
		{field: "headers[0]", edit: func(m map[string]any) { m["headers"] = []string{"tile.cuh"} }, want: "missing"},
		{field: "headers[0]", edit: func(m map[string]any) { m["headers"] = []string{"pt_common.cuh"} }, want: "shared header"},
		{field: "headers[1]", edit: func(m map[string]any) { m["headers"] = []string{"t.cuh", "t.cuh"} },
			files: func(f map[string][]byte) { f["t.cuh"] = []byte("// t") }, want: "twice"},
		{field: "min_arch", edit: func(m map[string]any) { m["min_arch"] = 75 }},
		{field: "entry", edit: func(m map[string]any) { m["entry"] = "my-gemm" }},
		{field: "launch.mode", edit: func(m map[string]any) { m["launch"].(map[string]any)["mode"] = "persistent" }},
		{field: "launch.block", edit: func(m map[string]any) { m["launch"].(map[string]any)["block"] = []int{128, 1} }},
		{field: "launch.block", edit: func(m map[string]any) { m["launch"].(map[string]any)["block"] = []int{64, 32, 1} }, want: "2048 threads"},
		{field: "launch.tile_m", edit: func(m map[string]any) { m["launch"].(map[string]any)["tile_m"] = 0 }},
		{field: "launch.tile_n", edit: func(m map[string]any) { m["launch"].(map[string]any)["tile_n"] = 5000 }},
		{field: "launch.shared_bytes", edit: func(m map[string]any) { m["launch"].(map[string]any)["shared_bytes"] = 1 << 20 }},
		{field: "knobs[0].key", edit: func(m map[string]any) { knob(m)["key"] = "launch" }},
		{field: "knobs[0].key", edit: func(m map[string]any) { knob(m)["key"] = "Stages" }},
		{field: "knobs[0].define", edit: func(m map[string]any) { knob(m)["define"] = "DUAL" }},
		{field: "knobs[0].values", edit: func(m map[string]any) { knob(m)["values"] = []string{} }},
		{field: "knobs[0].values[1]", edit: func(m map[string]any) { knob(m)["values"] = []string{"1", "2 3"} }},
		{field: "knobs[0].default", edit: func(m map[string]any) { knob(m)["default"] = "4" }},
		{field: "knobs[0].shared_bytes", edit: func(m map[string]any) { knob(m)["shared_bytes"] = map[string]int{"9": 1} }},
		{field: ManifestFile, edit: func(m map[string]any) { m["arch"] = "sm_90" }, want: "unknown field"},
		{field: "files[notes.txt]", files: func(f map[string][]byte) { f["notes.txt"] = []byte("x") }, want: "not named"},
		{field: "files", files: func(f map[string][]byte) { f["clear_gemm.cu"] = make([]byte, MaxSubmissionBytes+1) }},
		{field: ManifestFile, files: func(f map[string][]byte) { delete(f, ManifestFile) }},
		{field: ManifestFile, files: func(f map[string][]byte) { f[ManifestFile] = []byte(`{"name": "x"} {}`) }, want: "after the JSON"},
	}
	for _, c := range cases {
		s, err := build(t, sub, c.edit, c.files)
		if s != nil {
			t.Errorf("%s: accepted", c.field)
			continue
		}
		var se *SubmissionError
		if !errors.As(err, &se) {
			t.Errorf("%s: %v is no *SubmissionError", c.field, err)
			continue
		}
		if se.Field != c.field {
			t.Errorf("field %q, want %q (%v)", se.Field, c.field, err)
		}
		if c.want != "" && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %q does not say %q", c.field, err, c.want)
		}
	}
}

func knob(m map[string]any) map[string]any { return m["knobs"].([]any)[0].(map[string]any) }

// The hash is a content address: equal for equal files (map order does
// not matter), different for one changed byte, equal between the folder
// and the in-memory path.
func TestSubmissionHash(t *testing.T) {
	a := exampleSubmission(t, "clear")
	files := map[string][]byte{}
	for n, b := range a.Files {
		files[n] = b
	}
	b, err := SubmissionFromFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	if a.Hash() != b.Hash() || len(a.Hash()) != 64 {
		t.Errorf("hashes %s %s", a.Hash(), b.Hash())
	}
	files["clear_gemm.cu"] = append(append([]byte{}, files["clear_gemm.cu"]...), '\n')
	c, err := SubmissionFromFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	if c.Hash() == a.Hash() {
		t.Error("a changed source kept the hash")
	}
	// LoadSubmission reads only the files the manifest names.
	dir := t.TempDir()
	for n, b := range a.Files {
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("notes"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := LoadSubmission(dir)
	if err != nil || d.Hash() != a.Hash() {
		t.Errorf("folder with a README: %v, hash %s", err, d.Hash())
	}
	os.Remove(filepath.Join(dir, "clear_gemm.cu"))
	if _, err := LoadSubmission(dir); err == nil || !strings.Contains(err.Error(), "source: file \"clear_gemm.cu\" is missing") {
		t.Errorf("missing source: %v", err)
	}
}

// The PTX kind needs PTX text whose .entry is the manifest's entry.
func TestSubmissionPTX(t *testing.T) {
	ptx := ".version 7.8\n.target sm_80\n.address_size 64\n.visible .entry clear_gemm(\n.param .u64 a\n)\n{\nret;\n}\n"
	sub := exampleSubmission(t, "clear")
	mk := func(entry, text string) error {
		_, err := withManifestFilesOK(t, sub, func(m map[string]any) {
			m["kind"], m["source"], m["entry"] = "ptx", "k.ptx", entry
		}, map[string][]byte{"k.ptx": []byte(text)})
		return err
	}
	if err := mk("clear_gemm", ptx); err != nil {
		t.Errorf("valid PTX: %v", err)
	}
	// Nothing compiles a PTX here, so a knob cannot change it: only the
	// default resolves.
	s, _ := withManifestFilesOK(t, sub, func(m map[string]any) {
		m["kind"], m["source"] = "ptx", "k.ptx"
	}, map[string][]byte{"k.ptx": []byte(ptx)})
	p, _ := LookupProblem("nvfp4_group_gemm")
	var ke *KnobError
	if _, err := p.ResolveSubmission(s, "kernel?stages=1"); !errors.As(err, &ke) || !strings.Contains(err.Error(), "only its default 2 runs") {
		t.Errorf("ptx with stages=1: %v", err)
	}
	if _, err := p.ResolveSubmission(s, "kernel?stages=2&launch=graph"); err != nil {
		t.Errorf("ptx at its defaults: %v", err)
	}
	if err := mk("other", ptx); err == nil || !strings.Contains(err.Error(), "entry: \"other\" is not an .entry of k.ptx (it has: clear_gemm)") {
		t.Errorf("wrong entry: %v", err)
	}
	if err := mk("clear_gemm", "int main() {}"); err == nil || !strings.Contains(err.Error(), "is not PTX") {
		t.Errorf("not PTX: %v", err)
	}
}

// withManifestFilesOK is s with its manifest edited and its source file
// replaced by add.
func withManifestFilesOK(t *testing.T, s *Submission, edit func(map[string]any), add map[string][]byte) (*Submission, error) {
	t.Helper()
	return build(t, s, edit, func(f map[string][]byte) {
		delete(f, s.Manifest.Source)
		for n, b := range add {
			f[n] = b
		}
	})
}

// elfHeader is the 64-byte ELF header of a CUDA cubin with e_flags flags
// and ELF ABI version abi.
func elfHeader(abi byte, flags uint32) []byte {
	b := make([]byte, 64)
	copy(b, []byte{0x7f, 'E', 'L', 'F', 2, 1, 1, 0x33, abi})
	binary.LittleEndian.PutUint16(b[18:], emCUDA)
	binary.LittleEndian.PutUint32(b[48:], flags)
	return b
}

// fatbin wraps entries (kind, sm) with empty payloads.
func fatbin(entries ...[2]int) []byte {
	var body []byte
	for _, e := range entries {
		h := make([]byte, 64)
		binary.LittleEndian.PutUint16(h[0:], uint16(e[0]))
		binary.LittleEndian.PutUint32(h[4:], 64)
		binary.LittleEndian.PutUint64(h[8:], 4)
		binary.LittleEndian.PutUint32(h[28:], uint32(e[1]))
		body = append(append(body, h...), 0, 0, 0, 0)
	}
	b := make([]byte, 16)
	binary.LittleEndian.PutUint32(b, fatbinMagic)
	binary.LittleEndian.PutUint16(b[4:], 1)
	binary.LittleEndian.PutUint16(b[6:], 16)
	binary.LittleEndian.PutUint64(b[8:], uint64(len(body)))
	return append(b, body...)
}

// Cubin and fatbin headers tell which devices the code runs on.
func TestBinaryArchs(t *testing.T) {
	cases := []struct {
		name string
		bin  []byte
		want string
		runs map[string]bool
	}{
		{"cubin sm_80 (ABI 7)", elfHeader(7, 0x00500050), "sm_80", map[string]bool{"sm_80": true, "sm_86": true, "sm_90a": false, "sm_100a": false}},
		{"cubin sm_90a (ABI 7)", elfHeader(7, 0x005a0b5a), "sm_90a", map[string]bool{"sm_90a": true, "sm_80": false, "sm_100a": false}},
		{"cubin sm_100a (ABI 8)", elfHeader(8, 0x00006408), "sm_100a", map[string]bool{"sm_100a": true, "sm_90a": false, "sm_120a": false}},
		{"cubin sm_120 (ABI 8)", elfHeader(8, 0x00007800), "sm_120", map[string]bool{"sm_120a": true, "sm_100a": false}},
		{"fatbin sm_90 + PTX 90", fatbin([2]int{2, 90}, [2]int{1, 90}), "sm_90, compute_90 (PTX)", map[string]bool{"sm_90a": true, "sm_100a": true, "sm_80": false}},
		{"fatbin sm_100", fatbin([2]int{2, 100}), "sm_100", map[string]bool{"sm_100a": true, "sm_90a": false, "sm_120a": false}},
	}
	for _, c := range cases {
		archs, err := BinaryArchs(c.bin)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got := BinaryArchList(archs); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
		for arch, want := range c.runs {
			if RunsOn(archs, arch) != want {
				t.Errorf("%s on %s: runs %v, want %v", c.name, arch, !want, want)
			}
		}
	}
	for _, bad := range [][]byte{[]byte("hello"), elfHeader(7, 0)[:40], append(elfHeader(7, 0x50)[:18], make([]byte, 46)...), fatbin([2]int{2, 90})[:40]} {
		if _, err := BinaryArchs(bad); err == nil {
			t.Errorf("%q parsed", bad[:8])
		}
	}
}

// A cubin submission for another architecture is refused at plan time
// with the device's arch, what the binary has, and what runs instead.
func TestSubmissionCubinWrongArch(t *testing.T) {
	sub := exampleSubmission(t, "clear")
	s, err := withManifestFilesOK(t, sub, func(m map[string]any) {
		m["kind"], m["source"] = "cubin", "k.cubin"
		m["knobs"] = []any{}
	}, map[string][]byte{"k.cubin": elfHeader(7, 0x00500050)})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := LookupProblem("nvfp4_group_gemm")
	v, _ := p.ResolveSubmission(s, "kernel")
	_, err = v.Plan(p.Tests[0], Limits{Arch: "sm_100a"})
	if err == nil || !strings.Contains(err.Error(), "no code for the device's architecture sm_100a (it has sm_80)") || !strings.Contains(err.Error(), "use baseline or fused") {
		t.Errorf("sm_80 cubin on sm_100a: %v", err)
	}
	if _, err := v.Plan(p.Tests[0], Limits{Arch: "sm_86"}); err != nil {
		t.Errorf("sm_80 cubin on sm_86: %v", err)
	}
	if _, err := withManifestFilesOK(t, sub, func(m map[string]any) {
		m["kind"], m["source"] = "cubin", "k.cubin"
	}, map[string][]byte{"k.cubin": []byte("not a binary")}); err == nil || !strings.Contains(err.Error(), "source: \"k.cubin\": not a cubin") {
		t.Errorf("garbage cubin: %v", err)
	}
}

// A PTX's .target decides where the driver can JIT it: at or above a
// plain target, exactly an arch-specific one.
func TestSubmissionPTXTarget(t *testing.T) {
	sub := exampleSubmission(t, "clear")
	p, _ := LookupProblem("nvfp4_group_gemm")
	for _, c := range []struct {
		target string
		runs   map[string]bool
	}{
		{"sm_80", map[string]bool{"sm_80": true, "sm_90a": true, "sm_100a": true}},
		{"sm_90a", map[string]bool{"sm_90a": true, "sm_100a": false, "sm_80": false}},
		{"sm_100", map[string]bool{"sm_90a": false, "sm_100a": true, "sm_120a": true}},
	} {
		ptx := ".version 8.0\n.target " + c.target + "\n.address_size 64\n.visible .entry clear_gemm()\n{\nret;\n}\n"
		s, err := withManifestFilesOK(t, sub, func(m map[string]any) {
			m["kind"], m["source"] = "ptx", "k.ptx"
		}, map[string][]byte{"k.ptx": []byte(ptx)})
		if err != nil {
			t.Fatal(err)
		}
		v, _ := p.ResolveSubmission(s, "kernel")
		for arch, want := range c.runs {
			err := v.CheckDevice(arch)
			if (err == nil) != want {
				t.Errorf(".target %s on %s: %v", c.target, arch, err)
			}
			if err != nil && !strings.Contains(err.Error(), "no code for the device's architecture "+arch) {
				t.Errorf(".target %s on %s: message %v", c.target, arch, err)
			}
		}
	}
}
