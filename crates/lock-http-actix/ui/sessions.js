// The sessions panel: the tenant's live sessions (GET /sessions), what each holds
// (GET /sessions/{id}), and a force end for admin keys (DELETE /sessions/{id}?force=true&reason=,
// through the force-release dialog). Sessions are listed by id: the name prefix does not apply.

import { element } from './element.js';
import { getJson, segment, withQuery } from './api.js';
import { counted } from './format.js';
import { LiveTable, countdownCell, actionsCell } from './live_table.js';

/** How many sessions have their holds read at each refresh; the others show how many. */
const DETAILED = 50;

/**
 * The live sessions, as GET /sessions lists them, the first DETAILED each with `held`: its holds
 * as GET /sessions/{id} answers them. A session that ended between the two reads is left out.
 */
export async function readSessions(limit) {
  const listed = await getJson(withQuery('/sessions', { limit }));
  const sessions = listed.body.sessions ?? [];
  const looks = await Promise.allSettled(sessions.slice(0, DETAILED)
    .map((session) => getJson(`/sessions/${segment(session.id)}`)));
  const ended = new Set();
  looks.forEach((look, i) => {
    if (look.status === 'fulfilled') sessions[i].held = look.value.body.holds ?? [];
    else if (look.reason?.status === 404) ended.add(sessions[i].id);
  });
  const live = sessions.filter((session) => !ended.has(session.id));
  return { ...listed, body: { ...listed.body, sessions: live } };
}

/** One hold: "lock payment:42 · exclusive · token 17", "election scheduler · term 19". */
function holdItem(hold) {
  const how = {
    lock: `${hold.mode ?? 'exclusive'} · token ${hold.fencing_token}`,
    semaphore: `${counted(hold.permits, 'permit', 'permits')} · token ${hold.fencing_token}`,
    election: `leader · term ${hold.term ?? hold.fencing_token}`,
  }[hold.kind] ?? `token ${hold.fencing_token}`;
  return element('li', {}, `${hold.kind} `, element('span', { className: 'name', text: hold.name }), ` · ${how}`);
}

/** Live sessions: one row each, its holds listed in one cell. */
export function sessionTable({ container, empty, count, forceEnd }) {
  return new LiveTable({
    container, empty, count,
    words: ['session', 'sessions'],
    caption: 'Live sessions',
    columns: ['Session', 'Owner', 'Holds', 'Expires in', 'Actions'],
    keyOf: (session) => session.id,
    createRow(session) {
      const cells = [
        element('th', { className: 'session-id', text: session.id, attrs: { scope: 'row' } }),
        element('td', { className: 'owner' }), element('td', { className: 'holders' }),
        countdownCell(),
        actionsCell('session', session.id, forceEnd, 'Force end'),
      ];
      const [, owner, holds, expiresIn] = cells;
      return {
        cells,
        update(current, clock) {
          owner.textContent = current.owner;
          if (current.held === undefined) {
            holds.textContent = counted(current.holds, 'hold', 'holds');
          } else if (current.held.length === 0) {
            holds.textContent = 'none';
          } else {
            holds.replaceChildren(element('ul', { className: 'holder-list' }, ...current.held.map(holdItem)));
          }
          expiresIn.title = current.expires_at;
          return [{ node: expiresIn, deadline: clock.readAt + current.ttl_remaining_ms }];
        },
      };
    },
  });
}
