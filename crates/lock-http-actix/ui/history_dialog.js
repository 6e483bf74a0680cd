// The history of one lock, semaphore or election in a modal dialog: newest first, a page at a
// time ("Older"), with records from the live stream added on top while it is open.

import { element, returnFocusOnClose, showMessage } from './element.js';
import { LiveTable } from './live_table.js';
import { getJson, segment, withQuery } from './api.js';
import { dateAndTime } from './format.js';

const PAGE = 50;

/** Where the history of a `kind` of lease is read. */
export function historyPath(kind, name) {
  const collection = { lock: 'locks', semaphore: 'semaphores', election: 'elections' }[kind];
  return `/${collection}/${segment(name)}/history`;
}

function historyCells(record) {
  const at = element('time', { text: dateAndTime(record.at), attrs: { datetime: record.at, title: record.at } });
  const event = record.shared ? `${record.event} (shared)` : record.event;
  return [
    element('td', { className: 'time' }, at),
    element('td', { className: `event event-${record.event}`, text: event }),
    element('td', { className: 'owner', text: record.owner }),
    element('td', { className: 'number', text: String(record.fencing_token) }),
    element('td', { className: 'reason', text: record.reason ?? '' }),
  ];
}

export class HistoryDialog {
  /**
   * @param {object} parts the dialog's elements: dialog, title, table (its container), count,
   *   empty, error, older, close
   * @param {HTMLElement} fallbackFocus where focus goes on close when the opener is gone
   */
  constructor(parts, fallbackFocus) {
    this.dialog = parts.dialog;
    this.title = parts.title;
    this.error = parts.error;
    this.older = parts.older;
    this.close = parts.close;
    this.fallbackFocus = fallbackFocus;
    this.subject = null;
    this.records = [];
    this.cursor = null;
    this.table = new LiveTable({
      container: parts.table, empty: parts.empty, count: parts.count,
      words: ['record', 'records'],
      caption: 'History, newest first',
      columns: ['Time', 'Event', 'Owner', 'Token', 'Reason'],
      keyOf: (record) => String(record.id),
      createRow: (record) => ({ cells: historyCells(record), update: () => [] }),
    });
    this.close.addEventListener('click', () => this.dialog.close());
    this.older.addEventListener('click', () => this.load(this.cursor));
    // Escape closes a modal dialog by itself; either way focus goes back where it came from.
    this.dialog.addEventListener('close', () => {
      this.subject = null;
    });
    returnFocusOnClose(this.dialog, () => (this.opener?.isConnected ? this.opener : this.fallbackFocus));
  }

  /** Opens the history of `kind` `name`; `opener` gets focus back on close. */
  open({ kind, name, opener }) {
    this.opener = opener;
    this.subject = { kind, name };
    this.records = [];
    this.cursor = null;
    this.title.textContent = `History of ${kind} ${name}`;
    this.showRecords();
    this.dialog.showModal();
    this.close.focus();
    this.load(null);
  }

  async load(cursor) {
    const subject = this.subject;
    this.older.disabled = true;
    showMessage(this.error, '');
    try {
      const path = withQuery(historyPath(subject.kind, subject.name), { limit: PAGE, cursor: cursor ?? undefined });
      const { body } = await getJson(path);
      if (this.subject !== subject) return;
      this.records.push(...body.records);
      this.cursor = body.next_cursor ?? null;
      this.showRecords();
    } catch (problem) {
      if (this.subject === subject) showMessage(this.error, problem.text ?? String(problem));
    } finally {
      this.older.disabled = false;
    }
  }

  /** A record from the event stream: shown on top when it belongs to the open history. */
  add(record) {
    const subject = this.subject;
    if (!subject || record.kind !== subject.kind || record.name !== subject.name) return;
    if (this.records.some((shown) => shown.id === record.id)) return;
    this.records.unshift(record);
    this.records.sort((a, b) => b.id - a.id);
    this.showRecords();
  }

  showRecords() {
    this.table.show(this.records, { readAt: performance.now(), serverNow: Date.now() });
    this.older.hidden = this.cursor === null;
  }
}
