package httpserver

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/templates"
)

// pitchView gathers the pitch page for viewer: the pitch, its rendered
// body, the scorecards the service lets the viewer see, and the viewer's own
// scorecard and vote forms, prefilled with what is stored.
func (s *server) pitchView(ctx context.Context, viewer *pitches.User, id int64) (*templates.PitchView, error) {
	p, err := s.svc.Pitch(ctx, id)
	if err != nil {
		return nil, err
	}
	round, err := s.svc.Round(ctx, p.RoundNumber)
	if err != nil {
		return nil, err
	}
	cards, hidden, err := s.svc.VisibleScorecards(ctx, viewer, id)
	if err != nil {
		return nil, err
	}
	titles := map[int64]string{p.ID: p.Title}
	s.addTitles(ctx, titles, p.RepitchOf)
	s.addTitles(ctx, titles, p.RepitchedBy...)

	// The forms offered are exactly what the domain's permission table
	// (pitches.Can) allows; the service checks again on submit.
	target := pitches.Target{Round: round, Pitch: p}
	var viewerID int64 // 0: an anonymous reader of a public closed round
	if viewer != nil {
		viewerID = viewer.ID
	}
	v := &templates.PitchView{
		Pitch: *p, Round: *round, BodyHTML: s.md.render(p.Body), Titles: titles,
		Cards: cards, Hidden: hidden, ViewerID: viewerID, Criteria: round.Criteria,
		CanRepitch:  pitches.Can(viewer, pitches.ActRepitch, pitches.Target{Pitch: p}) == nil && s.anyPitching(ctx),
		CanEdit:     pitches.Can(viewer, pitches.ActEditPitch, target) == nil,
		CanWithdraw: pitches.Can(viewer, pitches.ActWithdrawPitch, target) == nil,
		CanScore:    pitches.Can(viewer, pitches.ActScore, target) == nil,
		CanVote:     pitches.Can(viewer, pitches.ActVote, target) == nil,
	}
	if v.Kernel, err = s.kernelPanel(ctx, viewer, p, round); err != nil {
		return nil, err
	}
	var first time.Time
	if v.Results, first, err = s.pitchResults(ctx, viewer, p, round); err != nil {
		return nil, err
	}
	// Each visible card's versions, those stored after the first result marked.
	hists, err := s.cardHistories(ctx, viewer, id, cards)
	if err != nil {
		return nil, err
	}
	v.Histories = map[int64][]templates.CardVersion{}
	for _, h := range hists {
		v.Histories[h.SharkID] = cardVersions(h.Versions, first)
	}
	if !first.IsZero() {
		v.ResultAt = first.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	if v.CanScore {
		f := templates.ScoreForm{Criteria: round.Criteria, Scores: map[string]string{}, Notes: map[string]string{}}
		for _, c := range cards {
			if c.SharkID == viewer.ID {
				f.Existing = true
				f.Weights = c.Weights
				for k, sc := range c.Scores {
					f.Scores[k] = fmtNum(sc)
				}
				for k, n := range c.Notes {
					f.Notes[k] = n
				}
				f.Lo, f.Hi, f.Verdict = fmtNum(c.Estimate.Lo), fmtNum(c.Estimate.Hi), c.Verdict
			}
		}
		if f.Weights == nil {
			pw, err := s.svc.PersonalWeights(ctx, viewer.ID, round.Number)
			if err != nil {
				return nil, err
			}
			f.Weights, f.Personal = pw, pw != nil
			if pw == nil {
				f.Weights = defaultWeights(round)
			}
		} else {
			f.Personal = !sameWeights(f.Weights, defaultWeights(round))
		}
		// Measured: an existing card keeps its estimate; a shark without
		// one may still score the pitch, but the estimate is no prediction
		// (sqlite.checkEstimateUnlocked).
		measured := v.Results != nil && v.Results.Locked
		f.Locked, f.Late = measured && f.Existing, measured && !f.Existing
		v.ScoreForm = f
	}
	if v.CanVote {
		votes, err := s.svc.VisibleVotes(ctx, viewer, round.Number)
		if err != nil {
			return nil, err
		}
		for i := range votes {
			if votes[i].SharkID == viewer.ID {
				v.VoteForm.Current = &votes[i]
				s.addTitles(ctx, titles, votes[i].PitchID)
				v.VoteForm.CurrentTitle = titles[votes[i].PitchID]
				if votes[i].PitchID == p.ID {
					v.VoteForm.Justification = votes[i].Justification
					v.VoteForm.Terms = termsForm(votes[i].Terms)
				}
			}
		}
	}
	return v, nil
}

// anyPitching reports whether some round takes pitches (where a re-pitch
// could go).
func (s *server) anyPitching(ctx context.Context) bool {
	open, err := s.pitchingRounds(ctx)
	return err == nil && len(open) > 0
}

func sameWeights(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// pitchID reads {id} for pages: a malformed id is simply a missing page.
func pitchID(r *http.Request) (int64, error) {
	id, err := idParam(r)
	if err != nil {
		return 0, pitches.Errorf(pitches.ENOTFOUND, "", "There is no such pitch.")
	}
	return id, nil
}

func (s *server) handlePitch(w http.ResponseWriter, r *http.Request) {
	id, err := pitchID(r)
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	viewer := userFrom(r.Context())
	if viewer == nil && !s.anonymousMayRead(r, id) {
		toLogin(w, r)
		return
	}
	v, err := s.pitchView(r.Context(), viewer, id)
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	v.Flash = flashFrom(r)
	s.render(w, r, http.StatusOK, templates.PitchPage(s.chrome(r, v.Pitch.Title, "rounds"), *v))
}

func (s *server) handleScorecard(w http.ResponseWriter, r *http.Request) {
	id, err := pitchID(r)
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	if !s.parseForm(w, r) {
		return
	}
	ctx, viewer := r.Context(), userFrom(r.Context())
	p, err := s.svc.Pitch(ctx, id)
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	round, err := s.svc.Round(ctx, p.RoundNumber)
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	// Keep exactly what was typed, for re-rendering on error.
	raw := templates.ScoreForm{Scores: map[string]string{}, Notes: map[string]string{},
		Lo: strings.TrimSpace(r.PostForm.Get("lo")), Hi: strings.TrimSpace(r.PostForm.Get("hi")),
		Verdict: strings.TrimSpace(r.PostForm.Get("verdict"))}
	in := pitches.ScorecardInput{Scores: map[string]float64{}, Notes: map[string]string{}, Verdict: raw.Verdict}
	var ferr *templates.FormError
	for _, c := range round.Criteria {
		sv := strings.TrimSpace(r.PostForm.Get("score_" + c.Key))
		raw.Scores[c.Key] = sv
		if note := strings.TrimSpace(r.PostForm.Get("note_" + c.Key)); note != "" {
			raw.Notes[c.Key], in.Notes[c.Key] = note, note
		}
		if sv == "" {
			continue // the service names the missing criterion
		}
		f, e := parseNumber(sv, "scores."+c.Key, "Score for "+c.Name)
		if e != nil && ferr == nil {
			ferr = e
		}
		in.Scores[c.Key] = f
	}
	if ferr == nil {
		var e *templates.FormError
		if in.Estimate.Lo, e = parseNumber(raw.Lo, "estimate.lo", "Low end of the estimate"); e != nil {
			ferr = e
		} else if in.Estimate.Hi, e = parseNumber(raw.Hi, "estimate.hi", "High end of the estimate"); e != nil {
			ferr = e
		}
	}
	status := http.StatusUnprocessableEntity
	if ferr == nil {
		_, err := s.svc.SubmitScorecard(ctx, viewer, id, in)
		if err == nil {
			redirect(w, r, "/pitches/"+strconv.FormatInt(id, 10)+"#score", "scored")
			return
		}
		ferr, status = s.formErr(r, err), errorStatus(err)
	}
	v, err := s.pitchView(ctx, viewer, id)
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	raw.Criteria, raw.Weights, raw.Personal, raw.Existing, raw.Err = round.Criteria, v.ScoreForm.Weights, v.ScoreForm.Personal, v.ScoreForm.Existing, ferr
	if raw.Weights == nil {
		raw.Weights = defaultWeights(round)
	}
	v.ScoreForm, v.CanScore = raw, true
	s.render(w, r, status, templates.PitchPage(s.chrome(r, v.Pitch.Title, "rounds"), *v))
}

// pitchFormInput reads the pitch form; ferr reports a claim that is not a
// number before the service sees it.
func pitchFormInput(r *http.Request) (templates.PitchForm, pitches.PitchInput, *templates.FormError) {
	f := templates.PitchForm{
		Round: strings.TrimSpace(r.PostForm.Get("round")), Title: strings.TrimSpace(r.PostForm.Get("title")),
		Category: strings.TrimSpace(r.PostForm.Get("category")), Body: r.PostForm.Get("body"),
		Lo: strings.TrimSpace(r.PostForm.Get("lo")), Hi: strings.TrimSpace(r.PostForm.Get("hi")),
		Variant: strings.TrimSpace(r.PostForm.Get("variant")), RepitchOf: strings.TrimSpace(r.PostForm.Get("repitch_of")),
	}
	in := pitches.PitchInput{Title: f.Title, Category: f.Category, Body: f.Body, Variant: f.Variant}
	n, err := strconv.Atoi(f.Round)
	if err != nil {
		return f, in, &templates.FormError{Field: "round", Message: "Choose a round."}
	}
	in.RoundNumber = n
	if f.RepitchOf != "" {
		if in.RepitchOf, err = strconv.ParseInt(f.RepitchOf, 10, 64); err != nil {
			return f, in, &templates.FormError{Field: "repitch_of", Message: "The re-pitched pitch is not a valid id."}
		}
	}
	var ferr *templates.FormError
	if in.Claim.Lo, ferr = parseNumber(f.Lo, "claim.lo", "Low end of the claim"); ferr != nil {
		return f, in, ferr
	}
	if in.Claim.Hi, ferr = parseNumber(f.Hi, "claim.hi", "High end of the claim"); ferr != nil {
		return f, in, ferr
	}
	return f, in, nil
}

func (s *server) pitchingRounds(ctx context.Context) ([]pitches.Round, error) {
	rounds, err := s.svc.Rounds(ctx)
	if err != nil {
		return nil, err
	}
	var open []pitches.Round
	for _, r := range rounds {
		if r.Status == pitches.RoundPitching {
			open = append(open, r)
		}
	}
	return open, nil
}

func (s *server) handleNewPitchForm(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	rounds, err := s.pitchingRounds(ctx)
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	f := templates.PitchForm{Rounds: rounds, Round: r.URL.Query().Get("round")}
	if id, err := strconv.ParseInt(r.URL.Query().Get("repitch_of"), 10, 64); err == nil && id > 0 {
		old, err := s.svc.Pitch(ctx, id)
		if err != nil {
			s.renderError(w, r, err)
			return
		}
		f.RepitchOf, f.Repitch = strconv.FormatInt(id, 10), old.Title
		f.Title, f.Category, f.Body, f.Variant = old.Title, old.Category, old.Body, old.Variant
		f.Lo, f.Hi = fmtNum(old.Claim.Lo), fmtNum(old.Claim.Hi)
	}
	if len(rounds) == 0 {
		s.renderError(w, r, pitches.Errorf(pitches.ECONFLICT, "", "No round is open for pitching."))
		return
	}
	s.render(w, r, http.StatusOK, templates.PitchFormPage(s.chrome(r, "File a pitch", "rounds"), f))
}

func (s *server) handleFilePitch(w http.ResponseWriter, r *http.Request) {
	if !s.parsePitchForm(w, r) {
		return
	}
	ctx := r.Context()
	f, in, ferr := pitchFormInput(r)
	status := http.StatusUnprocessableEntity
	if ferr == nil {
		p, err := s.filePitch(ctx, userFrom(ctx), in)
		if err == nil {
			if s.pitchFormKernel(w, r, p.ID) {
				return
			}
			redirect(w, r, "/pitches/"+strconv.FormatInt(p.ID, 10), "filed")
			return
		}
		ferr, status = s.formErr(r, err), errorStatus(err)
	}
	rounds, err := s.pitchingRounds(ctx)
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	f.Rounds, f.Err = rounds, ferr
	if in.RepitchOf != 0 {
		s.fillRepitchTitle(ctx, &f, in.RepitchOf)
	}
	s.render(w, r, status, templates.PitchFormPage(s.chrome(r, "File a pitch", "rounds"), f))
}

func (s *server) fillRepitchTitle(ctx context.Context, f *templates.PitchForm, id int64) {
	if old, err := s.svc.Pitch(ctx, id); err == nil {
		f.Repitch = old.Title
	}
}

func (s *server) handleEditPitchForm(w http.ResponseWriter, r *http.Request) {
	id, err := pitchID(r)
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	p, err := s.svc.Pitch(r.Context(), id)
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	f := templates.PitchForm{Editing: true, ID: p.ID, Round: strconv.Itoa(p.RoundNumber), Title: p.Title,
		Category: p.Category, Body: p.Body, Lo: fmtNum(p.Claim.Lo), Hi: fmtNum(p.Claim.Hi), Variant: p.Variant}
	if p.RepitchOf != 0 {
		f.RepitchOf = strconv.FormatInt(p.RepitchOf, 10)
		s.fillRepitchTitle(r.Context(), &f, p.RepitchOf)
	}
	s.render(w, r, http.StatusOK, templates.PitchFormPage(s.chrome(r, "Edit pitch", "rounds"), f))
}

func (s *server) handleEditPitch(w http.ResponseWriter, r *http.Request) {
	id, err := pitchID(r)
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	if !s.parsePitchForm(w, r) {
		return
	}
	ctx := r.Context()
	f, in, ferr := pitchFormInput(r)
	f.Editing, f.ID = true, id
	status := http.StatusUnprocessableEntity
	if ferr == nil {
		_, err := s.editPitch(ctx, userFrom(ctx), id, in)
		if err == nil {
			if s.pitchFormKernel(w, r, id) {
				return
			}
			redirect(w, r, "/pitches/"+strconv.FormatInt(id, 10), "edited")
			return
		}
		ferr, status = s.formErr(r, err), errorStatus(err)
	}
	f.Err = ferr
	s.render(w, r, status, templates.PitchFormPage(s.chrome(r, "Edit pitch", "rounds"), f))
}

func (s *server) handleWithdrawForm(w http.ResponseWriter, r *http.Request) {
	id, err := pitchID(r)
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	p, err := s.svc.Pitch(r.Context(), id)
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, templates.WithdrawPage(s.chrome(r, "Withdraw pitch", "rounds"), templates.WithdrawView{Pitch: *p}))
}

func (s *server) handleWithdraw(w http.ResponseWriter, r *http.Request) {
	id, err := pitchID(r)
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	if _, err := s.svc.WithdrawPitch(r.Context(), userFrom(r.Context()), id); err != nil {
		s.renderError(w, r, err)
		return
	}
	redirect(w, r, "/pitches/"+strconv.FormatInt(id, 10), "withdrawn")
}

// termsForm shows stored deal terms in the vote form's units.
func termsForm(t pitches.DealTerms) templates.TermsForm {
	f := templates.TermsForm{Correct: t.Correct}
	if t.MinGeomean != nil {
		f.MinGeomean = fmtNum(*t.MinGeomean)
	}
	if t.MaxRegression != nil {
		f.MaxRegression = fmtNum(math.Round(*t.MaxRegression*1e6) / 1e4)
	}
	if t.MaxVariation != nil {
		f.MaxVariation = fmtNum(math.Round(*t.MaxVariation*1e6) / 1e4)
	}
	return f
}

// anonymousMayRead: the pitch's round is closed and the server makes closed
// rounds public (pitches.CanReadRound).
func (s *server) anonymousMayRead(r *http.Request, pitchID int64) bool {
	if !s.cfg.PublicClosedRounds {
		return false
	}
	p, err := s.svc.Pitch(r.Context(), pitchID)
	if err != nil {
		return false
	}
	round, err := s.svc.Round(r.Context(), p.RoundNumber)
	return err == nil && pitches.CanReadRound(nil, round, true)
}
