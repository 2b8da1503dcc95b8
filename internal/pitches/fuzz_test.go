package pitches

import (
	"math"
	"strings"
	"testing"
	"unicode/utf8"
)

// The fuzz targets restate each rule independently of the validator and
// check that the validator accepts exactly the inputs the rules allow.

func FuzzValidateScorecard(f *testing.F) {
	f.Add(7.0, 9.0, 8.0, 8.0, 1.05, 1.12, "FUND", "", "")
	f.Add(10.5, 0.0, -1.0, 3.25, 0.0, -1.0, "", "speedup", "note")
	f.Add(math.NaN(), 5.0, 5.0, 5.0, 2.0, 1.0, strings.Repeat("v", 70), "bogus", "x")
	f.Add(5.0, 5.0, 5.0, 5.0, 1.0, 2.0, "FUND\x07", "risk", "note\x1b]0;")
	f.Fuzz(func(t *testing.T, s1, s2, s3, s4, lo, hi float64, verdict, extraKey, note string) {
		in := ScorecardInput{
			Scores:   map[string]float64{"speedup": s1, "feasibility": s2, "risk": s3, "pitch_quality": s4},
			Estimate: Range{Lo: lo, Hi: hi},
			Verdict:  verdict,
		}
		if extraKey != "" {
			in.Scores[extraKey] = s1
			in.Notes = map[string]string{extraKey: note}
		}
		err := ValidateScorecard(rubric, in)
		okScore := func(s float64) bool { return s >= 0 && s <= 10 && math.Mod(s*2, 1) == 0 }
		okRange := func(v float64) bool { return v > 0 && v <= 1000 && !math.IsInf(v, 0) }
		known := extraKey == "" || extraKey == "speedup" || extraKey == "feasibility" || extraKey == "risk" || extraKey == "pitch_quality"
		// A known extra key overwrote that criterion's score with s1: the
		// rule applies to the scores as submitted.
		scoresOK := true
		for _, sc := range in.Scores {
			scoresOK = scoresOK && okScore(sc)
		}
		want := scoresOK && okRange(lo) && okRange(hi) && lo <= hi &&
			utf8.ValidString(verdict) && plainText(verdict) && utf8.RuneCountInString(verdict) <= MaxVerdictChars && known &&
			(extraKey == "" || utf8.ValidString(note) && plainText(note) && len(note) <= MaxNoteBytes)
		if (err == nil) != want {
			t.Fatalf("ValidateScorecard(%+v) = %v, rules say valid=%v", in, err, want)
		}
		if err != nil && (ErrorCode(err) != EINVALID || ErrorField(err) == "") {
			t.Fatalf("error without code/field: %#v", err)
		}
		if err == nil {
			total := WeightedTotal(map[string]int{"speedup": 40, "feasibility": 25, "risk": 20, "pitch_quality": 15}, in.Scores)
			if total < 0 || total > 10+1e-9 {
				t.Fatalf("valid card has total %v outside 0..10", total)
			}
		}
	})
}

func FuzzValidateRound(f *testing.F) {
	f.Add(1, "Round 1", "speedup", 40, "feasibility", 25, "risk", 35, "baseline?stages=3")
	f.Add(0, " ", "Bad Key", -1, "risk", 101, "risk", 0, "a b")
	f.Add(2, "R2", "a", 100, "b", 0, "c", 0, "")
	f.Fuzz(func(t *testing.T, number int, title, k1 string, w1 int, k2 string, w2 int, k3 string, w3 int, baseline string) {
		in := RoundInput{Number: number, Title: title, Baseline: baseline, Criteria: []Criterion{
			{Key: k1, Name: "one", Weight: w1}, {Key: k2, Name: "two", Weight: w2}, {Key: k3, Name: "three", Weight: w3}}}
		err := ValidateRound(in)
		okKey := func(k string) bool {
			if len(k) < 1 || len(k) > 32 {
				return false
			}
			for _, r := range k {
				if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
					return false
				}
			}
			return true
		}
		okW := func(w int) bool { return w >= 0 && w <= 100 }
		want := number >= 1 && utf8.ValidString(title) && plainText(title) && strings.TrimSpace(title) != "" && utf8.RuneCountInString(title) <= MaxTitleChars &&
			okKey(k1) && okKey(k2) && okKey(k3) && k1 != k2 && k1 != k3 && k2 != k3 &&
			okW(w1) && okW(w2) && okW(w3) && w1+w2+w3 == 100 && ValidateVariant("baseline", baseline) == nil
		if (err == nil) != want {
			t.Fatalf("ValidateRound(%+v) = %v, rules say valid=%v", in, err, want)
		}
		if err != nil && (ErrorCode(err) != EINVALID || ErrorField(err) == "") {
			t.Fatalf("error without code/field: %#v", err)
		}
	})
}

// plainText is the fuzz oracle's own statement of the free-text rule (written
// apart from validate.go's controlChar so that the two check each other): no
// C0 control but tab, line feed and carriage return, no DEL, no C1 control.
func plainText(s string) bool {
	for _, r := range s {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
		case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
			return false
		}
	}
	return true
}

func FuzzValidatePitch(f *testing.F) {
	f.Add(1, "Pipeline Stages", "pipelining", "body", 1.5, 1.8, "baseline?stages=3")
	f.Add(1, "", "", "", 2.0, 1.0, "?")
	f.Add(1, "T\x00", "\x1b[2J", "body\u0085", 1.0, 2.0, "")
	f.Fuzz(func(t *testing.T, round int, title, category, body string, lo, hi float64, variant string) {
		in := PitchInput{RoundNumber: round, Title: title, Category: category, Body: body, Claim: Range{Lo: lo, Hi: hi}, Variant: variant}
		err := ValidatePitch(in)
		okRange := func(v float64) bool { return v > 0 && v <= 1000 && !math.IsInf(v, 0) }
		okVariant := true
		if variant != "" {
			name, q, has := strings.Cut(variant, "?")
			okVariant = len(variant) <= MaxVariantChars && name != "" && strings.Trim(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") == ""
			if has {
				for _, kv := range strings.Split(q, "&") {
					k, v, ok := strings.Cut(kv, "=")
					okVariant = okVariant && ok && k != "" && v != "" &&
						strings.Trim(k+v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") == ""
				}
			}
		}
		want := round >= 1 && utf8.ValidString(title) && plainText(title) && strings.TrimSpace(title) != "" && utf8.RuneCountInString(title) <= MaxTitleChars &&
			utf8.ValidString(category) && plainText(category) && utf8.RuneCountInString(category) <= MaxCategoryChars &&
			utf8.ValidString(body) && plainText(body) && len(body) <= MaxBodyBytes && okRange(lo) && okRange(hi) && lo <= hi && okVariant
		if (err == nil) != want {
			t.Fatalf("ValidatePitch(%+v) = %v, rules say valid=%v", in, err, want)
		}
	})
}

func FuzzValidatePersonalWeights(f *testing.F) {
	f.Add(40, 25, 20, 15, "")
	f.Add(35, 25, 40, 0, "evidence")
	f.Fuzz(func(t *testing.T, a, b, c, d int, extra string) {
		w := map[string]int{"speedup": a, "feasibility": b, "risk": c, "pitch_quality": d}
		if extra != "" {
			w[extra] = 0
		}
		err := ValidatePersonalWeights(rubric, w)
		in := func(v int) bool { return v >= 0 && v <= 100 }
		known := extra == "" || extra == "speedup" || extra == "feasibility" || extra == "risk" || extra == "pitch_quality"
		// an extra known key overwrote one weight with 0
		sum := 0
		for _, v := range w {
			sum += v
		}
		ok := known && sum == 100
		for _, v := range w {
			ok = ok && in(v)
		}
		if (err == nil) != ok {
			t.Fatalf("ValidatePersonalWeights(%v) = %v, rules say valid=%v", w, err, ok)
		}
	})
}
