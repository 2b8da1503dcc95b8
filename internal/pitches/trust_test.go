package pitches

import (
	"strings"
	"testing"
)

func TestTrustSentence(t *testing.T) {
	got := TrustSentence("Sharks", []PredictorRecord{
		{Name: "The Performance Oracle", N: 4, Hits: 1, MeanIS: 7.3},
		{Name: "The Pragmatic Engineer", N: 4, Hits: 3, MeanIS: 1.2},
		{Name: "Lucky", N: 1, Hits: 1, MeanIS: 0.1}, // one prediction: not judged
	})
	for _, want := range []string{"trust The Pragmatic Engineer's estimates most", "1.20 over 4", "75%"} {
		if !strings.Contains(got, want) {
			t.Fatalf("%q lacks %q", got, want)
		}
	}
	if strings.Contains(got, "Lucky") {
		t.Fatalf("a predictor with one measured prediction named: %q", got)
	}
	if got := TrustSentence("Contestants", []PredictorRecord{{Name: "A", N: 1}}); !strings.Contains(got, "Too few") {
		t.Fatalf("no eligible predictor: %q", got)
	}
	if got := TrustSentence("Sharks", []PredictorRecord{{Name: "A", N: 3, Hits: 1, MeanIS: 2}, {Name: "B", N: 3, Hits: 0, MeanIS: 5}}); !strings.Contains(got, "widen them") {
		t.Fatalf("best covers 33%%: %q", got)
	}
}
