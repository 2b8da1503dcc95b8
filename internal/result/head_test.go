package result_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/pitchtank/pitchtank/internal/result"
)

// ReadHead reads what a full decode reads, from a real document, and
// nothing from what is not one.
func TestReadHead(t *testing.T) {
	doc, err := os.ReadFile("../runner/testdata/h200-group-g2.json")
	if err != nil {
		t.Fatal(err)
	}
	var d result.Result
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	name, fp, ok := result.ReadHead(doc)
	if !ok || name != d.Device.Name || fp != d.Fingerprint || fp.Key == "" || name == "" {
		t.Fatalf("ReadHead: %q %+v %v, want %q %+v", name, fp, ok, d.Device.Name, d.Fingerprint)
	}
	for _, bad := range []string{``, `[]`, `{"shapes": [1, 2]}`, `{"fingerprint": 3}`, `{"fingerprint": {"key": ""}}`,
		`{"device": {"name": "x"`, `{"label": "s1", "baseline_us": 100}`} {
		if _, fp, ok := result.ReadHead([]byte(bad)); ok {
			t.Errorf("ReadHead(%q) = %+v, want none", bad, fp)
		}
	}
}

// go test ./internal/result -run XXX -bench ReadHead: the head against a
// whole decode of the same 113 KB document.
func BenchmarkReadHead(b *testing.B) {
	doc, err := os.ReadFile("../runner/testdata/h200-group-g2.json")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("head", func(b *testing.B) {
		for b.Loop() {
			result.ReadHead(doc)
		}
	})
	b.Run("decode", func(b *testing.B) {
		for b.Loop() {
			var d result.Result
			_ = json.Unmarshal(doc, &d)
		}
	})
}
