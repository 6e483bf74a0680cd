// The dashboard: wires the key, the prefix filter, the lease tables, the sessions panel, the
// event feed and the dialogs together. Lists are re-read shortly after each event and every 5 s in case the
// stream is down, so a change made anywhere shows within about a second.

import { apiKey, getJson, withQuery, ApiProblem } from './api.js';
import { followEvents } from './event_stream.js';
import { showMessage } from './element.js';
import { lockTable, semaphoreTable, electionTable } from './lease_tables.js';
import { EventFeed } from './event_feed.js';
import { HistoryDialog } from './history_dialog.js';
import { ForceReleaseDialog } from './force_release.js';
import { sessionTable, readSessions } from './sessions.js';

const LIST_LIMIT = 500;
const FEED_RECORDS = 100;
const AFTER_EVENT_MS = 150;
const FALLBACK_MS = 5000;
const TICK_MS = 250;

const byId = (id) => document.getElementById(id);
const main = byId('main');

// The live region stays in the page, empty when there is nothing to say: a region that is
// shown and filled at the same moment is often not read out.
const status = byId('status');
function announce(text, tone = 'info') {
  status.className = `status tone-${tone}`;
  status.textContent = text;
}

const keyProblem = byId('key-problem');
function unauthorized() {
  showMessage(keyProblem, apiKey.get()
    ? 'The server refused this API key (401 Unauthorized): it is not valid. Type a valid key and press "Use key".'
    : 'This server needs an API key (401 Unauthorized): type yours and press "Use key".');
}

const history = new HistoryDialog({
  dialog: byId('history-dialog'), title: byId('history-title'), table: byId('history-table'),
  empty: byId('history-empty'), count: byId('history-count'), error: byId('history-error'),
  older: byId('history-older'), close: byId('history-close'),
}, main);
const forceRelease = new ForceReleaseDialog({
  dialog: byId('force-dialog'), form: byId('force-form'), title: byId('force-title'), what: byId('force-what'),
  reason: byId('force-reason'), error: byId('force-error'), cancel: byId('force-cancel'),
  submit: byId('force-submit'),
}, { announce, released: () => scheduleRefresh(0), unauthorized }, main);

const openHistory = (subject) => history.open(subject);
const askForceRelease = (subject) => forceRelease.open(subject);
const section = (name) => ({
  container: byId(`${name}-table`), empty: byId(`${name}-empty`), count: byId(`${name}-count`),
  openHistory, forceRelease: askForceRelease,
});
const lists = [
  { path: '/locks', field: 'locks', table: lockTable(section('locks')), error: byId('locks-error') },
  { path: '/semaphores', field: 'semaphores', table: semaphoreTable(section('semaphores')), error: byId('semaphores-error') },
  // GET /elections is younger than the other lists: a server without it answers 404, which
  // means no elections to show rather than an error.
  { path: '/elections', field: 'elections', table: electionTable(section('elections')), error: byId('elections-error'), absentIs404: true },
  // Sessions are listed by id, whatever the prefix, each with its holds.
  {
    field: 'sessions',
    table: sessionTable({ ...section('sessions'), forceEnd: askForceRelease }),
    error: byId('sessions-error'),
    read: () => readSessions(LIST_LIMIT),
    more: `Only the first ${LIST_LIMIT} are shown.`,
  },
];
const feed = new EventFeed({
  container: byId('feed-table'), empty: byId('feed-empty'), count: byId('feed-count'), openHistory,
});

const prefixField = byId('prefix');
const prefix = () => prefixField.value;

// A key or prefix change starts a new generation: answers to older reads are dropped.
let generation = 0;
let reading = false;
let readAgain = false;

async function refresh() {
  if (reading) {
    readAgain = true;
    return;
  }
  reading = true;
  const mine = generation;
  try {
    const answers = await Promise.allSettled(lists.map((list) => (list.read
      ? list.read() : getJson(withQuery(list.path, { prefix: prefix(), limit: LIST_LIMIT })))));
    if (mine !== generation) return;
    let refused = false;
    answers.forEach((answer, i) => {
      const list = lists[i];
      if (answer.status === 'fulfilled') {
        const { body, readAt, serverNow } = answer.value;
        list.table.show(body[list.field] ?? [], { readAt, serverNow });
        list.shownFor = mine;
        showMessage(list.error, body.next_cursor
          ? list.more ?? `Only the first ${LIST_LIMIT} are shown: type a longer prefix to narrow the list.` : '');
        return;
      }
      const problem = answer.reason;
      if (list.absentIs404 && problem.status === 404) {
        list.table.show([], { readAt: performance.now(), serverNow: Date.now() });
        showMessage(list.error, '');
        return;
      }
      // A list that cannot be read now (a 503 while the database is busy) keeps the rows last
      // read for this key and prefix, under the error: a re-read that fails for a moment neither
      // blanks the table nor takes a keyboard user's focus off its buttons. A refused key, or
      // rows of another key or prefix, show none.
      if (problem.status === 401 || list.shownFor !== mine) {
        list.table.clear();
        list.shownFor = undefined;
      }
      if (problem.status === 401) {
        // The alert above says why once for every list.
        refused = true;
        showMessage(list.error, 'Not shown without a valid API key.');
        return;
      }
      showMessage(list.error, problem instanceof ApiProblem ? problem.text : String(problem));
    });
    if (refused) unauthorized();
    else showMessage(keyProblem, '');
  } finally {
    reading = false;
    if (readAgain) {
      readAgain = false;
      scheduleRefresh(0);
    }
  }
}

let refreshTimer = null;
/** Re-reads the lists after `delayMs`, once however many events ask for it meanwhile. */
function scheduleRefresh(delayMs = AFTER_EVENT_MS) {
  if (refreshTimer !== null) return;
  refreshTimer = setTimeout(() => {
    refreshTimer = null;
    refresh();
  }, delayMs);
}

const feedState = byId('feed-state');
let stream = null;

/** The feed from the newest records kept, then the live stream from just after them. */
async function startFeed() {
  stream?.stop();
  stream = null;
  const mine = generation;
  feedState.textContent = 'Connecting…';
  // Without the history, the stream starts from now on.
  let startAfter = null;
  try {
    const { body } = await getJson(withQuery('/history', { prefix: prefix(), limit: FEED_RECORDS }));
    if (mine !== generation) return;
    feed.reset(body.records);
    // '0' when nothing is kept yet: every record from then on, none missed in between.
    startAfter = String(feed.newestId ?? 0);
  } catch (problem) {
    if (mine !== generation) return;
    feed.clear();
    if (problem.status === 401) {
      feedState.textContent = 'Not connected: the key was refused.';
      return;
    }
  }
  stream = followEvents({
    url: () => withQuery('/events', { prefix: prefix() }),
    startAfter,
    onRecord(record) {
      feed.add(record);
      history.add(record);
      scheduleRefresh();
    },
    onState({ state, retryInMs, problem }) {
      feedState.textContent = {
        connecting: 'Connecting…',
        live: 'Live',
        retrying: `Disconnected; retrying in ${Math.round((retryInMs ?? 0) / 1000)} s`,
        stopped: `Stopped: ${problem?.text ?? ''}`,
      }[state];
      if (state === 'stopped' && problem?.status === 401) unauthorized();
    },
  });
}

/** Everything again: after a new key or prefix. */
function restart() {
  generation += 1;
  refresh();
  startFeed();
}

const keyField = byId('api-key');
const keyState = byId('key-state');
function showKeyState() {
  keyState.textContent = apiKey.get()
    ? 'A key is in use for this tab (kept in session storage until the tab closes).'
    : 'No key in use: enough when the server has no API keys.';
}

byId('key-form').addEventListener('submit', (event) => {
  event.preventDefault();
  apiKey.set(keyField.value.trim());
  keyField.value = '';
  showKeyState();
  showMessage(keyProblem, '');
  announce(apiKey.get() ? 'Key in use.' : 'No key in use.');
  restart();
});
byId('forget-key').addEventListener('click', () => {
  apiKey.forget();
  keyField.value = '';
  showKeyState();
  announce('Key forgotten.');
  restart();
});

let prefixTimer = null;
prefixField.addEventListener('input', () => {
  clearTimeout(prefixTimer);
  prefixTimer = setTimeout(restart, 250);
});
byId('prefix-form').addEventListener('submit', (event) => {
  event.preventDefault();
  clearTimeout(prefixTimer);
  restart();
});

setInterval(() => {
  const now = performance.now();
  // A lease that ran out by its countdown: read again to see it gone (or renewed).
  if (lists.map((list) => list.table.tick(now)).some(Boolean)) scheduleRefresh(0);
}, TICK_MS);
setInterval(() => scheduleRefresh(0), FALLBACK_MS);

showKeyState();
restart();
