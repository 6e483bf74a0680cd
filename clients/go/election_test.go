package lockd_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"lockd.dev/go/lockd"
	"lockd.dev/go/lockd/internal/lockdtest"
)

func TestElection(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		client := newClient(t, sharedServer(t, backend).URL)
		ctx := testContext(t)
		name := lockdtest.Name("scheduler")
		a := lockd.NewElection(newSession(t, client, 10*time.Second, lockd.WithSessionOwner("node-a")), name)
		b := lockd.NewElection(newSession(t, client, 10*time.Second, lockd.WithSessionOwner("node-b")), name)

		observeCtx, stopObserving := context.WithCancel(ctx)
		defer stopObserving()
		events := a.Observe(observeCtx)
		if first := within(t, events, 15*time.Second, "the first event"); first.Leader != nil || first.Err != nil {
			t.Fatalf("first event of a vacant office: %+v", first)
		}

		_, err := a.Leader(ctx)
		wantIs(t, err, lockd.ErrNoLeader)
		must(t, a.Campaign(ctx, map[string]string{"address": "10.0.0.7:8080"}))
		leader, err := a.Leader(ctx)
		must(t, err)
		if leader.Candidate != "node-a" || leader.Term != a.Term() || a.Term() < 1 || string(leader.Value) != `{"address":"10.0.0.7:8080"}` {
			t.Fatalf("leader: %+v, term %d", leader, a.Term())
		}
		if event := within(t, events, 15*time.Second, "the leader event"); event.Leader == nil || event.Leader.Term != a.Term() {
			t.Fatalf("leader event: %+v", event)
		}

		elected := make(chan error, 1)
		go func() { elected <- b.Campaign(ctx, "node-b's value") }()
		select {
		case err := <-elected:
			t.Fatalf("Campaign returned while another led: %v", err)
		case <-time.After(500 * time.Millisecond):
		}

		must(t, a.Proclaim(ctx, "proclaimed"))
		event := within(t, events, 15*time.Second, "the proclaimed value")
		if event.Leader == nil || event.Leader.Term != a.Term() || string(event.Leader.Value) != `"proclaimed"` {
			t.Fatalf("proclaim event: %+v", event)
		}
		err = b.Proclaim(ctx, "usurped")
		wantIs(t, err, lockd.ErrNotLeader)
		if p := problem(t, err); p.Status != 403 {
			t.Fatalf("proclaim by a non-leader: %+v", p)
		}

		oldTerm := a.Term()
		must(t, a.Resign(ctx))
		must(t, within(t, elected, 15*time.Second, "the waiting Campaign"))
		if b.Term() <= oldTerm || a.Term() != 0 {
			t.Fatalf("terms: b %d after a's %d (a now %d)", b.Term(), oldTerm, a.Term())
		}
		// The resignation and the new leader, in order.
		vacant := within(t, events, 15*time.Second, "the vacancy")
		if vacant.Leader != nil || vacant.Term != oldTerm || vacant.Reason != "resigned" {
			t.Fatalf("vacancy: %+v", vacant)
		}
		next := within(t, events, 15*time.Second, "the next leader")
		var value string
		if next.Leader == nil || next.Leader.Candidate != "node-b" || json.Unmarshal(next.Leader.Value, &value) != nil || value != "node-b's value" {
			t.Fatalf("next leader: %+v", next)
		}

		fence, err := client.CheckElectionFence(ctx, name, oldTerm)
		must(t, err)
		if fence.Valid || fence.Current != b.Term() {
			t.Fatalf("old term: %+v", fence)
		}
		fence, err = client.CheckElectionFence(ctx, name, b.Term())
		must(t, err)
		if !fence.Valid || fence.Leader == nil || fence.Leader.Candidate != "node-b" {
			t.Fatalf("new term: %+v", fence)
		}

		wantIs(t, a.Resign(ctx), lockd.ErrNotLeader)
		must(t, b.Resign(ctx))
		_, err = client.GetLeader(ctx, name)
		wantIs(t, err, lockd.ErrNoLeader)

		stopObserving()
		for range events {
			// Drained: the channel closes once its context ends.
		}
	})
}

// An election observed through one lockd while candidates campaign through another on the same
// database; the observer's connection is broken on the way and it reconnects (Last-Event-ID)
// without passing the same leader on twice.
func TestObserveAcrossInstances(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		db := lockdtest.NewDatabase(t, backend)
		serverA := lockdtest.Start(t, db)
		serverB := lockdtest.Start(t, db)
		proxyB := lockdtest.NewProxy(t, serverB.URL)
		clientA := newClient(t, serverA.URL)
		ctx := testContext(t)
		name := lockdtest.Name("leader")

		events := lockd.ObserveElection(ctx, newClient(t, proxyB.URL), name)
		if first := within(t, events, 15*time.Second, "the first event"); first.Leader != nil || first.Err != nil {
			t.Fatalf("first event: %+v", first)
		}

		a := lockd.NewElection(newSession(t, clientA, 10*time.Second, lockd.WithSessionOwner("node-a")), name)
		must(t, a.Campaign(ctx, "a"))
		event := within(t, events, 15*time.Second, "a leader elected through the other instance")
		if event.Leader == nil || event.Leader.Candidate != "node-a" || event.Leader.Term != a.Term() {
			t.Fatalf("leader: %+v", event)
		}
		must(t, a.Proclaim(ctx, "a2"))
		event = within(t, events, 15*time.Second, "a value proclaimed through the other instance")
		if event.Leader == nil || string(event.Leader.Value) != `"a2"` {
			t.Fatalf("proclaimed: %+v", event)
		}

		// Break the observer's connection and wait for its reconnection.
		before := proxyB.Accepted()
		proxyB.Break()
		deadline := time.Now().Add(15 * time.Second)
		for proxyB.Accepted() == before {
			if time.Now().After(deadline) {
				t.Fatal("the observer did not reconnect within 15 s")
			}
			time.Sleep(50 * time.Millisecond)
		}
		// The reconnection's first event is the leader already passed on: not passed on again.
		// The next event is the resignation (as a vacancy that ended a's term, or, if the
		// reconnection read the state only after it, as the vacant office).
		term := a.Term()
		must(t, a.Resign(ctx))
		event = within(t, events, 15*time.Second, "the vacancy after the reconnection")
		if event.Leader != nil || (event.Reason != "" && (event.Reason != "resigned" || event.Term != term)) {
			t.Fatalf("after the reconnection: %+v", event)
		}

		b := lockd.NewElection(newSession(t, newClient(t, serverB.URL), 10*time.Second, lockd.WithSessionOwner("node-b")), name)
		must(t, b.Campaign(ctx, nil))
		event = within(t, events, 15*time.Second, "a leader elected through the observer's instance")
		if event.Leader == nil || event.Leader.Candidate != "node-b" || event.Leader.Term <= term || event.Leader.Value != nil {
			t.Fatalf("second leader: %+v", event)
		}
		if event.ID == "" {
			t.Fatalf("an event without an id: %+v", event)
		}
	})
}
