// The three tables of live leases: locks (exclusive and shared), semaphores and elections, each
// as its list endpoint answers it.

import { element } from './element.js';
import { LiveTable, countdownCell, nameCell, actionsCell, setValue } from './live_table.js';

/** Live locks: one row per holder (a shared lock has one per reader). */
export function lockTable({ container, empty, count, openHistory, forceRelease }) {
  return new LiveTable({
    container, empty, count,
    words: ['lock', 'locks'],
    caption: 'Live locks',
    columns: ['Lock', 'Mode', 'Owner', 'Fencing token', 'Expires in', 'Waiting', 'Value', 'Actions'],
    keyOf: (lock) => `${lock.resource}\u0000${lock.owner}`,
    createRow(lock) {
      const cells = [
        nameCell('lock', lock.resource, openHistory),
        element('td'), element('td', { className: 'owner' }), element('td', { className: 'number' }),
        countdownCell(), element('td', { className: 'number' }), element('td', { className: 'value' }),
        actionsCell('lock', lock.resource, forceRelease),
      ];
      const [, mode, owner, token, expiresIn, waiting, value] = cells;
      return {
        cells,
        update(current, clock) {
          mode.textContent = current.mode ?? 'exclusive';
          owner.textContent = current.owner;
          token.textContent = String(current.fencing_token);
          // Older servers do not say how many wait.
          waiting.textContent = String(current.waiting ?? 0);
          setValue(value, current.value);
          expiresIn.title = current.expires_at;
          return [{ node: expiresIn, deadline: clock.readAt + current.ttl_remaining_ms }];
        },
      };
    },
  });
}

/** Live semaphores: one row per semaphore, its holders listed in one cell. */
export function semaphoreTable({ container, empty, count, openHistory, forceRelease }) {
  return new LiveTable({
    container, empty, count,
    words: ['semaphore', 'semaphores'],
    caption: 'Live semaphores',
    columns: ['Semaphore', 'Permits in use', 'Waiting', 'Holders', 'Actions'],
    keyOf: (semaphore) => semaphore.name,
    createRow(semaphore) {
      const cells = [
        nameCell('semaphore', semaphore.name, openHistory),
        element('td', { className: 'number' }), element('td', { className: 'number' }),
        element('td', { className: 'holders' }),
        actionsCell('semaphore', semaphore.name, forceRelease),
      ];
      const [, inUse, waiting, holders] = cells;
      return {
        cells,
        update(current, clock) {
          inUse.textContent = `${current.in_use} of ${current.limit}`;
          waiting.textContent = String(current.waiting ?? 0);
          const countdowns = [];
          const items = (current.holders ?? []).map((holder) => {
            const left = countdownCell('span');
            left.title = holder.expires_at;
            // Holders have no ttl_remaining_ms: their end is read against the server's clock
            // (its Date header) at the time of the read, not this machine's clock.
            const remaining = Date.parse(holder.expires_at) - clock.serverNow;
            countdowns.push({ node: left, deadline: clock.readAt + remaining });
            const value = element('span', { className: 'value' });
            setValue(value, holder.value);
            return element('li', {},
              element('span', { className: 'owner', text: holder.owner }),
              ` · ${holder.permits} ${holder.permits === 1 ? 'permit' : 'permits'}`,
              ` · token ${holder.fencing_token} · `,
              left,
              holder.value === undefined ? null : ' · ',
              holder.value === undefined ? null : value);
          });
          holders.replaceChildren(element('ul', { className: 'holder-list' }, ...items));
          return countdowns;
        },
      };
    },
  });
}

/** Elections with a leader: one row each. */
export function electionTable({ container, empty, count, openHistory, forceRelease }) {
  return new LiveTable({
    container, empty, count,
    words: ['election', 'elections'],
    caption: 'Elections with a leader',
    columns: ['Election', 'Leader', 'Term', 'Expires in', 'Waiting', 'Value', 'Actions'],
    keyOf: (election) => election.election,
    createRow(election) {
      const cells = [
        nameCell('election', election.election, openHistory),
        element('td', { className: 'owner' }), element('td', { className: 'number' }),
        countdownCell(), element('td', { className: 'number' }), element('td', { className: 'value' }),
        actionsCell('election', election.election, forceRelease),
      ];
      const [, leader, term, expiresIn, waiting, value] = cells;
      return {
        cells,
        update(current, clock) {
          leader.textContent = current.candidate;
          // An election's fencing token is its term.
          term.textContent = String(current.term);
          waiting.textContent = String(current.waiting ?? 0);
          setValue(value, current.value);
          expiresIn.title = current.expires_at;
          return [{ node: expiresIn, deadline: clock.readAt + current.ttl_remaining_ms }];
        },
      };
    },
  });
}
