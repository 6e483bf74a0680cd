// The live feed: the newest history records of the tenant, newest first, as the event stream
// delivers them.

import { element } from './element.js';
import { LiveTable, nameCell } from './live_table.js';
import { timeOfDay } from './format.js';

const KEEP = 100;

/** One record's cells, shared by the feed and the history dialog. */
export function recordCells(record, { time, openHistory }) {
  const kind = record.shared ? `${record.kind} (shared)` : record.kind;
  const at = element('time', { text: time(record.at), attrs: { datetime: record.at, title: record.at } });
  return [
    element('td', { className: 'time' }, at),
    element('td', { text: kind }),
    openHistory ? nameCell(record.kind, record.name, openHistory) : element('td', { text: record.name }),
    element('td', { className: `event event-${record.event}`, text: record.event }),
    element('td', { className: 'owner', text: record.owner }),
    element('td', { className: 'number', text: String(record.fencing_token) }),
    element('td', { className: 'reason', text: record.reason ?? '' }),
  ];
}

export const RECORD_COLUMNS = ['Time', 'Kind', 'Name', 'Event', 'Owner', 'Token', 'Reason'];

export class EventFeed {
  constructor({ container, empty, count, openHistory }) {
    this.records = [];
    this.table = new LiveTable({
      container, empty, count,
      words: ['event', 'events'],
      caption: 'Newest events first',
      columns: RECORD_COLUMNS,
      keyOf: (record) => String(record.id),
      createRow: (record) => ({
        cells: recordCells(record, { time: timeOfDay, openHistory }),
        update: () => [],
      }),
    });
  }

  /** Starts again from `records` (newest first), as GET /history answers. */
  reset(records) {
    this.records = records.slice(0, KEEP);
    this.render();
  }

  /** Shows nothing, not even "no events": the history could not be read. */
  clear() {
    this.records = [];
    this.table.clear();
  }

  /** Adds a record from the stream, unless it is already shown. */
  add(record) {
    if (this.records.some((shown) => shown.id === record.id)) return;
    this.records.unshift(record);
    this.records.sort((a, b) => b.id - a.id);
    this.records.length = Math.min(this.records.length, KEEP);
    this.render();
  }

  /** The newest record's id, or null. */
  get newestId() {
    return this.records.length ? this.records[0].id : null;
  }

  render() {
    this.table.show(this.records, { readAt: performance.now(), serverNow: Date.now() });
  }
}
