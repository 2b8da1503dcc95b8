package bench

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestDocsDescribeEveryProgressField keeps docs/bench-result.md and the
// progress lines `web bench` prints in step: every JSON field must appear in
// the document as `name` (internal/result checks the result document's own).
func TestDocsDescribeEveryProgressField(t *testing.T) {
	doc, err := os.ReadFile("../../docs/bench-result.md")
	if err != nil {
		t.Fatalf("read the schema documentation: %v", err)
	}
	var missing []string
	for _, v := range []any{Progress{}, ErrorLine{}, ResultLine{}} {
		typ := reflect.TypeOf(v)
		for i := 0; i < typ.NumField(); i++ {
			name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			if !strings.Contains(string(doc), "`"+name+"`") {
				missing = append(missing, typ.Name()+"."+name)
			}
		}
	}
	if len(missing) > 0 {
		t.Fatalf("docs/bench-result.md does not describe: %v", missing)
	}
}
