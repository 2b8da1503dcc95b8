package httpserver

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/templates"
)

func (s *server) handleHome(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if userFrom(ctx) == nil {
		s.handleLanding(w, r)
		return
	}
	round, err := s.svc.CurrentRound(ctx)
	if pitches.ErrorCode(err) == pitches.ENOTFOUND {
		s.render(w, r, http.StatusOK, templates.HomePage(s.chrome(r, "", "home"), templates.HomeView{}))
		return
	}
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	ps, err := s.svc.Pitches(ctx, round.Number)
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	st, err := s.standingsView(ctx, userFrom(ctx), round, titlesOf(ps))
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, templates.HomePage(s.chrome(r, "", "home"), templates.HomeView{Round: round, Standings: st, Pitches: len(ps)}))
}

func titlesOf(ps []pitches.Pitch) map[int64]string {
	t := make(map[int64]string, len(ps))
	for _, p := range ps {
		t[p.ID] = p.Title
	}
	return t
}

// addTitles fills in titles of linked pitches from other rounds (re-pitch
// links cross rounds). A link to a pitch that cannot be read keeps its id.
func (s *server) addTitles(ctx context.Context, titles map[int64]string, ids ...int64) {
	for _, id := range ids {
		if id == 0 {
			continue
		}
		if _, ok := titles[id]; ok {
			continue
		}
		if p, err := s.svc.Pitch(ctx, id); err == nil {
			titles[id] = p.Title
		}
	}
}

func (s *server) standingsView(ctx context.Context, viewer *pitches.User, round *pitches.Round, titles map[int64]string) (*templates.StandingsView, error) {
	st, err := s.svc.Standings(ctx, viewer, round.Number)
	if err != nil {
		return nil, err
	}
	v := &templates.StandingsView{S: st, Closed: round.Status == pitches.RoundClosed, Viewer: viewer,
		Scorer: pitches.CanRole(viewer, pitches.ActScore) == nil}
	for _, p := range st.Pitches {
		if p.Hidden {
			v.AnyHide = true
		}
		if p.PitchID == st.WinnerID {
			v.Winner = p.Title
		}
	}
	if v.Winner == "" && st.WinnerID != 0 {
		v.Winner = titles[st.WinnerID]
	}
	return v, nil
}

// handleLanding tells an anonymous visitor what pitchtank is, how to get in
// (and that demo logins exist, when the demo is loaded), and lists the
// closed rounds they may read when the server makes them public.
func (s *server) handleLanding(w http.ResponseWriter, r *http.Request) {
	v := templates.LandingView{Demo: s.cfg.DemoLogins, Public: s.cfg.PublicClosedRounds}
	if s.cfg.PublicClosedRounds {
		rounds, err := s.svc.Rounds(r.Context())
		if err != nil {
			s.renderError(w, r, err)
			return
		}
		for _, rd := range rounds {
			if pitches.CanReadRound(nil, &rd, true) {
				v.Closed = append(v.Closed, rd)
			}
		}
	}
	s.render(w, r, http.StatusOK, templates.LandingPage(s.chrome(r, "", "home"), v))
}

// toLogin sends an anonymous visitor to the login form and back.
func toLogin(w http.ResponseWriter, r *http.Request) {
	http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
}

func (s *server) handleRounds(w http.ResponseWriter, r *http.Request) {
	viewer := userFrom(r.Context())
	if viewer == nil && !s.cfg.PublicClosedRounds {
		toLogin(w, r)
		return
	}
	all, err := s.svc.Rounds(r.Context())
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	var rounds []pitches.Round
	for _, rd := range all {
		if pitches.CanReadRound(viewer, &rd, s.cfg.PublicClosedRounds) {
			rounds = append(rounds, rd)
		}
	}
	s.render(w, r, http.StatusOK, templates.RoundsPage(s.chrome(r, "Rounds", "rounds"), templates.RoundsView{Rounds: rounds}))
}

// roundView gathers everything the round page shows for the viewer.
func (s *server) roundView(ctx context.Context, viewer *pitches.User, number int) (*templates.RoundView, error) {
	round, err := s.svc.Round(ctx, number)
	if err != nil {
		return nil, err
	}
	ps, err := s.svc.Pitches(ctx, number)
	if err != nil {
		return nil, err
	}
	titles := titlesOf(ps)
	for _, p := range ps {
		s.addTitles(ctx, titles, p.RepitchOf)
		s.addTitles(ctx, titles, p.RepitchedBy...)
	}
	st, err := s.standingsView(ctx, viewer, round, titles)
	if err != nil {
		return nil, err
	}
	votes, err := s.svc.VisibleVotes(ctx, viewer, number)
	if err != nil {
		return nil, err
	}
	v := &templates.RoundView{
		Round: *round, RulesHTML: s.md.render(round.Rules), Pitches: ps, Titles: titles,
		Standings: st, Votes: votes,
		CanFile: pitches.Can(viewer, pitches.ActFilePitch, pitches.Target{Round: round}) == nil,
		IsShark: pitches.CanRole(viewer, pitches.ActScore) == nil && round.Status != pitches.RoundClosed,
	}
	if strings.TrimSpace(round.Rules) == "" {
		v.RulesHTML = ""
	}
	if v.Recap, err = s.roundRecap(ctx, viewer, ps); err != nil {
		return nil, err
	}
	if v.VoteHistory, err = s.voteHistories(ctx, viewer, number, votes); err != nil {
		return nil, err
	}
	if v.IsShark {
		pw, err := s.svc.PersonalWeights(ctx, viewer.ID, number)
		if err != nil {
			return nil, err
		}
		v.PersonalWeights = pw
		scored, err := s.hasScoredIn(ctx, viewer, ps)
		if err != nil {
			return nil, err
		}
		v.WeightsFrozen = scored
		shown := pw
		if shown == nil {
			shown = defaultWeights(round)
		}
		v.WeightsForm = make(map[string]string, len(shown))
		for k, w := range shown {
			v.WeightsForm[k] = strconv.Itoa(w)
		}
	}
	return v, nil
}

// hasScoredIn reports whether the shark has a scorecard on any of the
// round's pitches (then its personal weights for the round are frozen).
func (s *server) hasScoredIn(ctx context.Context, shark *pitches.User, ps []pitches.Pitch) (bool, error) {
	for _, p := range ps {
		cards, _, err := s.svc.VisibleScorecards(ctx, shark, p.ID)
		if err != nil {
			return false, err
		}
		for _, c := range cards {
			if c.SharkID == shark.ID {
				return true, nil
			}
		}
	}
	return false, nil
}

func (s *server) handleRound(w http.ResponseWriter, r *http.Request) {
	n, err := roundParam(r)
	if err != nil {
		s.renderError(w, r, pitches.Errorf(pitches.ENOTFOUND, "", "There is no such round."))
		return
	}
	viewer := userFrom(r.Context())
	if viewer == nil {
		round, err := s.svc.Round(r.Context(), n)
		if err != nil || !pitches.CanReadRound(nil, round, s.cfg.PublicClosedRounds) {
			toLogin(w, r)
			return
		}
	}
	v, err := s.roundView(r.Context(), viewer, n)
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	v.Flash = flashFrom(r)
	s.render(w, r, http.StatusOK, templates.RoundPage(s.chrome(r, "Round "+strconv.Itoa(n), "rounds"), *v))
}

func (s *server) handleSetWeights(w http.ResponseWriter, r *http.Request) {
	n, err := roundParam(r)
	if err != nil {
		s.renderError(w, r, pitches.Errorf(pitches.ENOTFOUND, "", "There is no such round."))
		return
	}
	if !s.parseForm(w, r) {
		return
	}
	ctx, viewer := r.Context(), userFrom(r.Context())
	round, err := s.svc.Round(ctx, n)
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	// Who may, and in what round, before what was typed: a viewer's or a
	// closed round's weights are refused as such, with a message the page
	// shows (the weights form, which would show a field's error, is only
	// on an open round's page for a shark).
	if err := pitches.Can(viewer, pitches.ActSetWeights, pitches.Target{Round: round}); err != nil &&
		(pitches.ErrorCode(err) == pitches.EFORBIDDEN || round.Status == pitches.RoundClosed) {
		s.renderError(w, r, err)
		return
	}
	weights := make(map[string]int, len(round.Criteria))
	raw := make(map[string]string, len(round.Criteria))
	var ferr *templates.FormError
	for _, c := range round.Criteria {
		v := strings.TrimSpace(r.PostForm.Get("w_" + c.Key))
		raw[c.Key] = v
		i, err := strconv.Atoi(v)
		if err != nil && ferr == nil {
			ferr = &templates.FormError{Field: "weights." + c.Key, Message: "Weight of " + c.Name + " must be a whole number."}
		}
		weights[c.Key] = i
	}
	if ferr == nil {
		if err := s.svc.SetPersonalWeights(ctx, viewer, n, weights); err != nil {
			if pitches.ErrorCode(err) == pitches.EFORBIDDEN || round.Status == pitches.RoundClosed {
				// Not a shark, or a closed round: the weights form is not
				// on the page (RoundView.IsShark), so its error would not
				// show there.
				s.renderError(w, r, err)
				return
			}
			ferr = s.formErr(r, err)
			if ferr.Field == "" || ferr.Field == "weights" {
				ferr.Field = "weights"
			}
			s.rerenderRound(w, r, n, errorStatus(err), raw, ferr)
			return
		}
		redirect(w, r, "/rounds/"+strconv.Itoa(n), "weights")
		return
	}
	s.rerenderRound(w, r, n, http.StatusUnprocessableEntity, raw, ferr)
}

func (s *server) rerenderRound(w http.ResponseWriter, r *http.Request, n, status int, raw map[string]string, ferr *templates.FormError) {
	v, err := s.roundView(r.Context(), userFrom(r.Context()), n)
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	v.WeightsForm, v.WeightsErr = raw, ferr
	s.render(w, r, status, templates.RoundPage(s.chrome(r, "Round "+strconv.Itoa(n), "rounds"), *v))
}

func (s *server) handleVote(w http.ResponseWriter, r *http.Request) {
	n, err := roundParam(r)
	if err != nil {
		s.renderError(w, r, pitches.Errorf(pitches.ENOTFOUND, "", "There is no such round."))
		return
	}
	if !s.parseForm(w, r) {
		return
	}
	pid, perr := strconv.ParseInt(strings.TrimSpace(r.PostForm.Get("pitch")), 10, 64)
	if perr != nil || pid < 1 {
		s.renderError(w, r, pitches.Errorf(pitches.EBADREQUEST, "pitch", "The vote names no pitch."))
		return
	}
	in := pitches.VoteInput{PitchID: pid, Justification: strings.TrimSpace(r.PostForm.Get("justification"))}
	tf := templates.TermsForm{MinGeomean: r.PostForm.Get("min_geomean"), MaxRegression: r.PostForm.Get("max_regression"),
		MaxVariation: r.PostForm.Get("max_variation"), Correct: r.PostForm.Get("require_correct") != ""}
	var err2 error
	in.Terms, err2 = termsFromForm(tf)
	if err2 != nil {
		err = err2
	} else {
		_, err = s.svc.CastVote(r.Context(), userFrom(r.Context()), n, in)
	}
	if err != nil {
		// Re-render the pitch page the vote came from, input kept.
		v, verr := s.pitchView(r.Context(), userFrom(r.Context()), pid)
		if verr != nil {
			s.renderError(w, r, err)
			return
		}
		v.VoteForm.Justification, v.VoteForm.Err, v.VoteForm.Terms = in.Justification, s.formErr(r, err), tf
		v.CanVote = true
		s.render(w, r, errorStatus(err), templates.PitchPage(s.chrome(r, v.Pitch.Title, "rounds"), *v))
		return
	}
	redirect(w, r, "/rounds/"+strconv.Itoa(n)+"#standings", "voted")
}

// termsFromForm reads the vote form's deal terms: a minimum geomean as a
// speedup ("1.4"), regression and variation as percentages ("10" = 10%),
// empty fields not set.
func termsFromForm(f templates.TermsForm) (pitches.DealTerms, error) {
	var t pitches.DealTerms
	num := func(v, field, label string, scale float64) (*float64, error) {
		v = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "%"))
		if v == "" {
			return nil, nil
		}
		x, ferr := parseNumber(v, field, label)
		if ferr != nil {
			return nil, pitches.Errorf(pitches.EINVALID, field, "%s", ferr.Message)
		}
		x *= scale
		return &x, nil
	}
	var err error
	if t.MinGeomean, err = num(f.MinGeomean, "terms.min_geomean", "The minimum geomean speedup", 1); err != nil {
		return t, err
	}
	if t.MaxRegression, err = num(f.MaxRegression, "terms.max_regression", "The maximum regression", 0.01); err != nil {
		return t, err
	}
	if t.MaxVariation, err = num(f.MaxVariation, "terms.max_variation", "The maximum variation", 0.01); err != nil {
		return t, err
	}
	t.Correct = f.Correct
	return t, pitches.ValidateTerms(t)
}
