// The tenant's event stream (GET /events) read with fetch(): EventSource cannot send an
// Authorization header. Parses Server-Sent Events itself and reconnects with Last-Event-ID, so
// a dropped connection loses no record and repeats none.

import { authHeaders, problemOf } from './api.js';

const FIRST_RETRY_MS = 1000;
const LONGEST_RETRY_MS = 10_000;

/**
 * Splits a text/event-stream into events as the HTML standard's parser does: `field: value`
 * lines, a blank line ends an event, lines starting with ':' are comments.
 * `onEvent({ id, data })` gets each event with data; `id` is the last id seen so far.
 */
export function sseParser(onEvent) {
  let pending = '';
  let data = [];
  let lastId = null;

  function line(text) {
    if (text === '') {
      if (data.length) onEvent({ id: lastId, data: data.join('\n') });
      data = [];
      return;
    }
    if (text.startsWith(':')) return;
    const colon = text.indexOf(':');
    const field = colon < 0 ? text : text.slice(0, colon);
    let value = colon < 0 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data.push(value);
    else if (field === 'id' && !value.includes('\0')) lastId = value;
  }

  return {
    push(chunk) {
      pending += chunk;
      for (;;) {
        const end = pending.search(/\r\n|\r|\n/);
        if (end < 0) return;
        // A '\r' at the end of a chunk may be the first half of '\r\n'.
        if (pending[end] === '\r' && end === pending.length - 1) return;
        const width = pending.startsWith('\r\n', end) ? 2 : 1;
        line(pending.slice(0, end));
        pending = pending.slice(end + width);
      }
    },
  };
}

/**
 * Follows the stream until stop(). `url()` is asked again at every (re)connection.
 * `startAfter`: the id to continue after ('0': every record kept; null: from now on).
 * `onRecord(record)` gets each record; `onState({ state, retryInMs?, problem? })` says whether
 * the stream is `connecting`, `live`, `retrying` or `stopped` (an answer retrying cannot fix,
 * such as 401).
 */
export function followEvents({ url, startAfter = null, onRecord, onState }) {
  let lastId = startAfter;
  let stopped = false;
  let controller = null;
  let retryMs = FIRST_RETRY_MS;
  let wakeUp = null;

  async function readOnce() {
    controller = new AbortController();
    const headers = { Accept: 'text/event-stream', ...authHeaders() };
    if (lastId !== null) headers['Last-Event-ID'] = lastId;
    const response = await fetch(url(), { headers, signal: controller.signal, cache: 'no-store' });
    if (!response.ok) throw await problemOf(response);
    onState({ state: 'live' });
    retryMs = FIRST_RETRY_MS;
    const parser = sseParser(({ id, data }) => {
      if (id !== null) lastId = id;
      let record;
      try {
        record = JSON.parse(data);
      } catch {
        return;
      }
      onRecord(record);
    });
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      parser.push(value);
    }
  }

  async function run() {
    while (!stopped) {
      onState({ state: 'connecting' });
      try {
        await readOnce();
      } catch (error) {
        if (stopped) return;
        // A missing key, a bad prefix: asking again gets the same answer.
        if (error.status >= 400 && error.status < 500 && ![408, 429].includes(error.status)) {
          stopped = true;
          onState({ state: 'stopped', problem: error });
          return;
        }
      }
      if (stopped) return;
      onState({ state: 'retrying', retryInMs: retryMs });
      await new Promise((resolve) => {
        wakeUp = resolve;
        setTimeout(resolve, retryMs);
      });
      retryMs = Math.min(retryMs * 2, LONGEST_RETRY_MS);
    }
  }

  run();
  return {
    /** The id of the last record received (null before the first). */
    get lastId() {
      return lastId;
    },
    stop() {
      stopped = true;
      controller?.abort();
      wakeUp?.();
    },
  };
}
