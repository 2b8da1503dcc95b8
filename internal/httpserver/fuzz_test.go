package httpserver

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"github.com/pitchtank/pitchtank/internal/pitches"
)

// The decoders must never panic, must answer every bad input with a
// *pitches.Error of code bad_request or too_large, and what they accept must
// be well-typed values (finite numbers: JSON has no NaN or Inf).

func checkDecodeErr(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if code := pitches.ErrorCode(err); code != pitches.EBADREQUEST && code != pitches.ETOOLARGE {
		t.Fatalf("decode error has code %q: %v", code, err)
	}
}

func finite(t *testing.T, what string, f float64) {
	t.Helper()
	if math.IsNaN(f) || math.IsInf(f, 0) {
		t.Fatalf("%s = %v accepted", what, f)
	}
}

func FuzzDecodeScorecard(f *testing.F) {
	f.Add([]byte(`{"scores":{"speedup":7,"risk":8.5},"notes":{"speedup":"ok"},"estimate":{"lo":1.2,"hi":1.5},"verdict":"FUND"}`))
	f.Add([]byte(`{"scores":{"speedup":"seven"}}`))
	f.Add([]byte(`{"scores":null,"notes":{"a":1}}`))
	f.Add([]byte(`{"estimate":{"lo":1e400}}`))
	f.Add([]byte(`{} {}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := decodeScorecard(bytes.NewReader(data))
		checkDecodeErr(t, err)
		if err != nil {
			return
		}
		for k, v := range got.Scores {
			finite(t, "scores."+k, v)
		}
		finite(t, "estimate.lo", got.Estimate.Lo)
		finite(t, "estimate.hi", got.Estimate.Hi)
		if _, err := json.Marshal(scorecardJSON{Scores: got.Scores, Notes: got.Notes, Estimate: got.Estimate}); err != nil {
			t.Fatalf("accepted value does not re-encode: %v", err)
		}
	})
}

func FuzzDecodePitch(f *testing.F) {
	f.Add([]byte(`{"round":1,"title":"Three stages","category":"pipelining","body":"x","claim":{"lo":1.5,"hi":1.8},"variant":"baseline?stages=3","repitch_of":2}`))
	f.Add([]byte(`{"round":"1"}`))
	f.Add([]byte(`{"round":1.5}`))
	f.Add([]byte(`{"round":99999999999999999999}`))
	f.Add([]byte(`{"claim":[1,2]}`))
	f.Add([]byte(`{"title":"\ud800"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := decodePitch(bytes.NewReader(data))
		checkDecodeErr(t, err)
		if err != nil {
			return
		}
		finite(t, "claim.lo", got.Claim.Lo)
		finite(t, "claim.hi", got.Claim.Hi)
	})
}

func FuzzDecodeRound(f *testing.F) {
	f.Add([]byte(`{"number":1,"title":"t","rules":"r","criteria":[{"key":"speedup","name":"S","description":"d","weight":100}]}`))
	f.Add([]byte(`{"criteria":[{"weight":"100"}]}`))
	f.Add([]byte(`{"criteria":{}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := decodeRound(bytes.NewReader(data))
		checkDecodeErr(t, err)
	})
}

func FuzzDecodeWeights(f *testing.F) {
	f.Add([]byte(`{"speedup":35,"evidence":25,"feasibility":20,"risk":20,"pitch_quality":0}`))
	f.Add([]byte(`{"speedup":35.5}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		w, err := decodeWeights(bytes.NewReader(data))
		checkDecodeErr(t, err)
		if err == nil && w == nil {
			t.Fatalf("accepted weights are nil")
		}
	})
}

func FuzzDecodeVote(f *testing.F) {
	f.Add([]byte(`{"pitch":3,"justification":"kernel-specific evidence"}`))
	f.Add([]byte(`{"pitch":-1}`))
	f.Add([]byte(`{"pitch":"3"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := decodeVote(bytes.NewReader(data))
		checkDecodeErr(t, err)
	})
}
