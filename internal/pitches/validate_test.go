package pitches

import (
	"math"
	"strings"
	"testing"
)

var rubric = []Criterion{
	{Key: "speedup", Name: "Expected speedup", Weight: 40},
	{Key: "feasibility", Name: "Feasibility", Weight: 25},
	{Key: "risk", Name: "Risk", Weight: 20},
	{Key: "pitch_quality", Name: "Pitch quality", Weight: 15},
}

func fieldOf(err error) string {
	if err == nil {
		return "<nil>"
	}
	return ErrorField(err)
}

func TestValidateRound(t *testing.T) {
	ok := RoundInput{Number: 1, Title: "Round 1", Criteria: rubric, Baseline: "baseline"}
	if err := ValidateRound(ok); err != nil {
		t.Fatalf("valid round refused: %v", err)
	}
	mod := func(f func(*RoundInput)) RoundInput {
		in := ok
		in.Criteria = append([]Criterion(nil), rubric...)
		f(&in)
		return in
	}
	cases := []struct {
		name, field string
		in          RoundInput
	}{
		{"number 0", "number", mod(func(in *RoundInput) { in.Number = 0 })},
		{"blank title", "title", mod(func(in *RoundInput) { in.Title = " \t" })},
		{"long title", "title", mod(func(in *RoundInput) { in.Title = strings.Repeat("é", 201) })},
		{"no criteria", "criteria", mod(func(in *RoundInput) { in.Criteria = nil })},
		{"13 criteria", "criteria", mod(func(in *RoundInput) { in.Criteria = make([]Criterion, 13) })},
		{"bad key", "criteria[1].key", mod(func(in *RoundInput) { in.Criteria[1].Key = "Feasibility" })},
		{"long key", "criteria[0].key", mod(func(in *RoundInput) { in.Criteria[0].Key = strings.Repeat("a", 33) })},
		{"dup key", "criteria[2].key", mod(func(in *RoundInput) { in.Criteria[2].Key = "speedup" })},
		{"no name", "criteria[3].name", mod(func(in *RoundInput) { in.Criteria[3].Name = "" })},
		{"negative weight", "criteria[0].weight", mod(func(in *RoundInput) { in.Criteria[0].Weight = -5; in.Criteria[1].Weight = 70 })},
		{"sum 99", "weights", mod(func(in *RoundInput) { in.Criteria[0].Weight = 39 })},
		{"bad baseline", "baseline", mod(func(in *RoundInput) { in.Baseline = "base line" })},
	}
	for _, tc := range cases {
		err := ValidateRound(tc.in)
		if ErrorCode(err) != EINVALID || fieldOf(err) != tc.field {
			t.Errorf("%s: got %v, want invalid %s", tc.name, err, tc.field)
		}
	}
}

func TestValidatePitchAndRanges(t *testing.T) {
	ok := PitchInput{RoundNumber: 1, Title: "Pipeline Stages", Claim: Range{Lo: 1.5, Hi: 1.8}, Variant: "baseline?stages=3"}
	if err := ValidatePitch(ok); err != nil {
		t.Fatalf("valid pitch refused: %v", err)
	}
	cases := []struct {
		name, field string
		f           func(*PitchInput)
	}{
		{"no round", "round", func(in *PitchInput) { in.RoundNumber = 0 }},
		{"empty title", "title", func(in *PitchInput) { in.Title = "" }},
		{"long category", "category", func(in *PitchInput) { in.Category = strings.Repeat("c", 65) }},
		{"big body", "body", func(in *PitchInput) { in.Body = strings.Repeat("b", MaxBodyBytes+1) }},
		{"lo > hi", "claim.lo", func(in *PitchInput) { in.Claim = Range{Lo: 2, Hi: 1} }},
		{"lo zero", "claim.lo", func(in *PitchInput) { in.Claim.Lo = 0 }},
		{"hi NaN", "claim.hi", func(in *PitchInput) { in.Claim.Hi = math.NaN() }},
		{"hi +Inf", "claim.hi", func(in *PitchInput) { in.Claim.Hi = math.Inf(1) }},
		{"hi 1001", "claim.hi", func(in *PitchInput) { in.Claim.Hi = 1001 }},
		{"variant space", "variant", func(in *PitchInput) { in.Variant = "a b" }},
		{"variant empty knobs", "variant", func(in *PitchInput) { in.Variant = "baseline?" }},
		{"variant bad knob", "variant", func(in *PitchInput) { in.Variant = "baseline?stages" }},
		{"variant too long", "variant", func(in *PitchInput) { in.Variant = strings.Repeat("v", 201) }},
		{"bad utf8", "body", func(in *PitchInput) { in.Body = "\xff" }},
		{"negative repitch", "repitch_of", func(in *PitchInput) { in.RepitchOf = -1 }},
	}
	for _, tc := range cases {
		in := ok
		tc.f(&in)
		err := ValidatePitch(in)
		if ErrorCode(err) != EINVALID || fieldOf(err) != tc.field {
			t.Errorf("%s: got %v, want invalid %s", tc.name, err, tc.field)
		}
	}
	for _, v := range []string{"", "baseline", "nvfp4_v2.1-b?tile_m=64&stages=2"} {
		if err := ValidateVariant("variant", v); err != nil {
			t.Errorf("variant %q refused: %v", v, err)
		}
	}
	if err := ValidateRange("claim", Range{Lo: 1.1, Hi: 1.1}); err != nil {
		t.Errorf("single-number range refused: %v", err)
	}
}

func TestValidateScorecard(t *testing.T) {
	scores := func(v ...float64) map[string]float64 {
		return map[string]float64{"speedup": v[0], "feasibility": v[1], "risk": v[2], "pitch_quality": v[3]}
	}
	ok := ScorecardInput{Scores: scores(7, 9, 8, 8), Estimate: Range{Lo: 1.05, Hi: 1.12}, Verdict: "FUND", Notes: map[string]string{"risk": "one-line rollback"}}
	if err := ValidateScorecard(rubric, ok); err != nil {
		t.Fatalf("valid scorecard refused: %v", err)
	}
	cases := []struct {
		name, field string
		f           func(*ScorecardInput)
	}{
		{"10.5", "scores.speedup", func(in *ScorecardInput) { in.Scores = scores(10.5, 1, 1, 1) }},
		{"-0.5", "scores.risk", func(in *ScorecardInput) { in.Scores = scores(1, 1, -0.5, 1) }},
		{"0.25 step", "scores.feasibility", func(in *ScorecardInput) { in.Scores = scores(1, 0.25, 1, 1) }},
		{"NaN", "scores.pitch_quality", func(in *ScorecardInput) { in.Scores = scores(1, 1, 1, math.NaN()) }},
		{"missing", "scores.risk", func(in *ScorecardInput) { s := scores(1, 1, 1, 1); delete(s, "risk"); in.Scores = s }},
		{"unknown", "scores.aaa", func(in *ScorecardInput) { s := scores(1, 1, 1, 1); s["zzz"] = 1; s["aaa"] = 1; in.Scores = s }},
		{"note unknown", "notes.style", func(in *ScorecardInput) { in.Notes = map[string]string{"style": "x"} }},
		{"note too long", "notes.risk", func(in *ScorecardInput) { in.Notes = map[string]string{"risk": strings.Repeat("n", MaxNoteBytes+1)} }},
		{"estimate lo>hi", "estimate.lo", func(in *ScorecardInput) { in.Estimate = Range{Lo: 1.2, Hi: 1.1} }},
		{"estimate zero", "estimate.lo", func(in *ScorecardInput) { in.Estimate = Range{} }},
		{"verdict long", "verdict", func(in *ScorecardInput) { in.Verdict = strings.Repeat("v", 65) }},
	}
	for _, tc := range cases {
		in := ok
		tc.f(&in)
		err := ValidateScorecard(rubric, in)
		if ErrorCode(err) != EINVALID || fieldOf(err) != tc.field {
			t.Errorf("%s: got %v, want invalid %s", tc.name, err, tc.field)
		}
	}
}

func TestValidateOthers(t *testing.T) {
	w := map[string]int{"speedup": 35, "feasibility": 25, "risk": 40, "pitch_quality": 0}
	if err := ValidatePersonalWeights(rubric, w); err != nil {
		t.Fatalf("valid weights refused: %v", err)
	}
	cases := []struct {
		name, field string
		err         error
	}{
		{"weights sum", "weights", ValidatePersonalWeights(rubric, map[string]int{"speedup": 35, "feasibility": 25, "risk": 20, "pitch_quality": 0})},
		{"weights missing", "weights.risk", ValidatePersonalWeights(rubric, map[string]int{"speedup": 75, "feasibility": 25, "pitch_quality": 0})},
		{"weights unknown", "weights.evidence", ValidatePersonalWeights(rubric, map[string]int{"speedup": 35, "feasibility": 25, "risk": 40, "pitch_quality": 0, "evidence": 0})},
		{"weights negative", "weights.speedup", ValidatePersonalWeights(rubric, map[string]int{"speedup": -10, "feasibility": 50, "risk": 60, "pitch_quality": 0})},
		{"vote no pitch", "pitch", ValidateVote(VoteInput{Justification: "x"})},
		{"vote blank", "justification", ValidateVote(VoteInput{PitchID: 1, Justification: "  "})},
		{"vote long", "justification", ValidateVote(VoteInput{PitchID: 1, Justification: strings.Repeat("j", MaxJustificationBytes+1)})},
		{"login upper", "login", ValidateLogin("Oracle")},
		{"login short", "login", ValidateLogin("o")},
		{"login space", "login", ValidateLogin("the oracle")},
		{"password short", "password", ValidatePassword("1234567")},
		{"password long", "password", ValidatePassword(strings.Repeat("p", 73))},
		{"display blank", "display_name", ValidateDisplayName(" ")},
		{"role", "role", ValidateRole("root")},
		{"label", "label", ValidateTokenLabel(strings.Repeat("l", 101))},
	}
	for _, tc := range cases {
		if ErrorCode(tc.err) != EINVALID || fieldOf(tc.err) != tc.field {
			t.Errorf("%s: got %v, want invalid %s", tc.name, tc.err, tc.field)
		}
	}
	for _, err := range []error{ValidateVote(VoteInput{PitchID: 3, Justification: "best risk/reward"}), ValidateLogin("pragmatist"),
		ValidateLogin("contestant-1.b"), ValidatePassword("demo-oracle"), ValidateDisplayName("The Performance Oracle"),
		ValidateRole(RoleViewer), ValidateTokenLabel("")} {
		if err != nil {
			t.Errorf("valid input refused: %v", err)
		}
	}
}

func TestControlCharactersRefused(t *testing.T) {
	criteria := []Criterion{{Key: "speedup", Name: "Speedup", Weight: 100}}
	for _, c := range []struct {
		name, field string
		err         error
	}{
		{"NUL in a title", "title", ValidatePitch(PitchInput{RoundNumber: 1, Title: "Stages\x00", Body: "b", Claim: Range{Lo: 1, Hi: 1}, Variant: "baseline"})},
		{"ESC in a title", "title", ValidatePitch(PitchInput{RoundNumber: 1, Title: "\x1b[2JStages", Body: "b", Claim: Range{Lo: 1, Hi: 1}, Variant: "baseline"})},
		{"CSI (C1) in a body", "body", ValidatePitch(PitchInput{RoundNumber: 1, Title: "T", Body: "a\u009b31mb", Claim: Range{Lo: 1, Hi: 1}, Variant: "baseline"})},
		{"BEL in a note", "notes.speedup", ValidateScorecard(criteria, ScorecardInput{Scores: map[string]float64{"speedup": 5},
			Notes: map[string]string{"speedup": "ding\x07"}, Estimate: Range{Lo: 1, Hi: 1}})},
		{"DEL in a token label", "label", ValidateTokenLabel("laptop\x7f")},
		{"backspace in a round title", "title", ValidateRound(RoundInput{Number: 1, Title: "R\bound", Criteria: criteria})},
	} {
		if ErrorCode(c.err) != EINVALID || ErrorField(c.err) != c.field {
			t.Errorf("%s: %v (field %q), want invalid naming %s", c.name, c.err, ErrorField(c.err), c.field)
		}
	}
	// Tabs and line breaks are text, not control.
	if err := ValidateScorecard(criteria, ScorecardInput{Scores: map[string]float64{"speedup": 5},
		Notes: map[string]string{"speedup": "line one\r\n\tline two"}, Estimate: Range{Lo: 1, Hi: 1}}); err != nil {
		t.Fatalf("a note with tabs and line breaks: %v", err)
	}
}
