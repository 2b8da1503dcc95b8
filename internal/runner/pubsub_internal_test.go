package runner

import "testing"

func TestHubSlowSubscriberKeepsNewest(t *testing.T) {
	h := newHub()
	ch, cancel := h.subscribe(1)
	defer cancel()
	h.publish(Event{RunID: 1, Type: "status", Status: StatusRunning})
	for i := 0; i < 500; i++ {
		h.publish(Event{RunID: 1, Type: "progress", Progress: &Progress{Shape: i}})
	}
	h.publish(Event{RunID: 1, Type: "status", Status: StatusSucceeded})
	var got []Event
	for ev := range ch { // closed after the terminal status
		got = append(got, ev)
	}
	if len(got) > subBuffer {
		t.Fatalf("%d events buffered, cap %d", len(got), subBuffer)
	}
	last := got[len(got)-1]
	if last.Type != "status" || last.Status != StatusSucceeded {
		t.Fatalf("last event %+v; want the terminal status", last)
	}
	if p := got[len(got)-2]; p.Progress == nil || p.Progress.Shape != 499 {
		t.Fatalf("the newest progress was dropped: %+v", p)
	}
}

func TestHubLateSubscriber(t *testing.T) {
	h := newHub()
	h.publish(Event{RunID: 2, Type: "status", Status: StatusRunning})
	h.publish(Event{RunID: 2, Type: "progress", Progress: &Progress{Shape: 1}})
	h.publish(Event{RunID: 2, Type: "log", Line: "noise"})
	h.publish(Event{RunID: 2, Type: "progress", Progress: &Progress{Shape: 2}})
	ch, cancel := h.subscribe(2)
	if ev := <-ch; ev.Status != StatusRunning {
		t.Fatalf("first event %+v; want the current status", ev)
	}
	if ev := <-ch; ev.Progress == nil || ev.Progress.Shape != 2 {
		t.Fatalf("second event %+v; want the latest progress", ev)
	}
	cancel()
	if _, open := <-ch; open {
		t.Fatal("channel open after cancel")
	}
	cancel() // twice is harmless

	// After the end, a subscriber gets the terminal status and a closed channel.
	h.publish(Event{RunID: 2, Type: "status", Status: StatusFailed, Reason: "boom"})
	ch, _ = h.subscribe(2)
	if ev := <-ch; ev.Status != StatusFailed || ev.Reason != "boom" {
		t.Fatalf("late event %+v", ev)
	}
	if _, open := <-ch; open {
		t.Fatal("channel of a finished run left open")
	}

	// Subscribing to a run nobody publishes for leaves nothing behind.
	_, cancel = h.subscribe(3)
	cancel()
	if _, ok := h.runs[3]; ok {
		t.Fatal("an unused subscription left state behind")
	}
}
