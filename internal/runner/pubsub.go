package runner

import (
	"encoding/json"
	"sync"
)

// Event is what a subscriber to a run receives.
type Event struct {
	RunID    int64     `json:"run_id"`
	Type     string    `json:"type"` // "status", "progress" or "log"
	Status   Status    `json:"status,omitempty"`
	Reason   string    `json:"reason,omitempty"`   // with a terminal status
	Progress *Progress `json:"progress,omitempty"` // with "progress"
	Line     string    `json:"line,omitempty"`     // with "log": a stdout line that was not JSON, or an error line's message
}

// Progress is one progress line of `web bench`, as printed:
// {"type":"progress","phase":...,"shape":i,"shapes":n,"samples":k,"median_us":x}.
// Raw keeps the whole line so fields added later reach the page unchanged.
type Progress struct {
	Phase    string          `json:"phase"`
	Shape    int             `json:"shape"`
	Shapes   int             `json:"shapes"`
	Samples  int             `json:"samples"`
	MedianUs float64         `json:"median_us"`
	Raw      json.RawMessage `json:"raw,omitempty"`
}

// subBuffer is each subscriber's channel capacity. A subscriber that falls
// behind loses its oldest events, never the newest: a progress bar only
// needs the latest, and the terminal status must arrive.
const subBuffer = 64

// hub fans a run's events out to its subscribers and keeps each run's
// latest status and progress so that a late subscriber starts from the
// current state. Finished runs are remembered (up to keepDone) so that a
// subscriber arriving just after the end still gets the final event.
type hub struct {
	mu    sync.Mutex
	runs  map[int64]*hubRun
	done  []int64 // finished run IDs, oldest first, for eviction
	limit int
}

type hubRun struct {
	subs     map[chan Event]struct{}
	status   *Event
	progress *Event
	finished bool
}

func newHub() *hub { return &hub{runs: map[int64]*hubRun{}, limit: 1024} }

func (h *hub) run(id int64) *hubRun {
	r := h.runs[id]
	if r == nil {
		r = &hubRun{subs: map[chan Event]struct{}{}}
		h.runs[id] = r
	}
	return r
}

// subscribe returns a channel of the run's events, primed with its latest
// status and progress. The channel is closed after the terminal status event
// or when cancel is called.
func (h *hub) subscribe(id int64) (<-chan Event, func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ch := make(chan Event, subBuffer)
	r := h.run(id)
	if r.status != nil {
		ch <- *r.status
	}
	if r.progress != nil && !r.finished {
		ch <- *r.progress
	}
	if r.finished {
		close(ch)
		return ch, func() {}
	}
	r.subs[ch] = struct{}{}
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			if r, ok := h.runs[id]; ok {
				if _, ok := r.subs[ch]; ok {
					delete(r.subs, ch)
					close(ch)
				}
				// Forget runs nobody watches and nothing was published for.
				if len(r.subs) == 0 && r.status == nil && r.progress == nil && !r.finished {
					delete(h.runs, id)
				}
			}
		})
	}
}

// publish sends ev to the run's subscribers; a terminal status closes them.
func (h *hub) publish(ev Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.run(ev.RunID)
	if r.finished {
		return
	}
	switch ev.Type {
	case "status":
		e := ev
		r.status = &e
	case "progress":
		e := ev
		r.progress = &e
	}
	for ch := range r.subs {
		send(ch, ev)
	}
	if ev.Type == "status" && ev.Status.Finished() {
		r.finished = true
		r.progress = nil
		for ch := range r.subs {
			close(ch)
		}
		r.subs = nil
		h.done = append(h.done, ev.RunID)
		for len(h.done) > h.limit {
			delete(h.runs, h.done[0])
			h.done = h.done[1:]
		}
	}
}

// send never blocks: with the buffer full it drops the oldest event. Only
// the hub (under its lock) sends, so after one receive there is room.
func send(ch chan Event, ev Event) {
	select {
	case ch <- ev:
		return
	default:
	}
	select {
	case <-ch:
	default:
	}
	select {
	case ch <- ev:
	default:
	}
}
