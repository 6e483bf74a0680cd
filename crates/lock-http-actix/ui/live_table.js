// A table that updates its rows in place. A row stays the same DOM node while its entry lives,
// so a keyboard user's focus on its buttons survives the re-reads every few seconds; only rows
// that appear or go away are added or removed. Rows may hold countdowns to a lease's end.

import { element, button } from './element.js';
import { remainingText, valueText, counted } from './format.js';

/**
 * @typedef {{ readAt: number, serverNow: number }} ReadClock  when a list was read: performance.now()
 *   and the server's clock (ms since the epoch) at that moment
 * @typedef {{ node: Element, deadline: number }} Countdown  a cell counting down to a
 *   performance.now() deadline
 */

export class LiveTable {
  /**
   * @param {object} spec
   * @param {HTMLElement} spec.container where the table goes
   * @param {HTMLElement} spec.empty shown when there is nothing
   * @param {HTMLElement} spec.count the number of entries, next to the heading
   * @param {[string, string]} spec.words what one entry and several are called
   * @param {string} spec.caption the table's accessible caption
   * @param {string[]} spec.columns column headings; the first is the row's name
   * @param {(item: object) => string} spec.keyOf one lease's identity
   * @param {(item: object) => {cells: Element[],
   *         update: (item: object, clock: ReadClock) => Countdown[]}} spec.createRow
   */
  constructor(spec) {
    this.spec = spec;
    this.rows = new Map();
    this.body = element('tbody');
    const head = element('tr', {}, ...spec.columns.map((label) => element('th', { text: label, attrs: { scope: 'col' } })));
    spec.container.replaceChildren(element('table', {},
      element('caption', { className: 'visually-hidden', text: spec.caption }),
      element('thead', {}, head),
      this.body));
    this.expiredSeen = false;
  }

  /** Shows `items` (in their order), read at `clock`. */
  show(items, clock) {
    const seen = new Set(items.map((item) => this.spec.keyOf(item)));
    // Rows that went away leave first: a row that stays is then never moved around a gap, which
    // would take a keyboard user's focus off it.
    for (const [key, entry] of this.rows) {
      if (!seen.has(key)) {
        entry.row.remove();
        this.rows.delete(key);
      }
    }
    const placed = new Set();
    let position = 0;
    for (const item of items) {
      const key = this.spec.keyOf(item);
      if (placed.has(key)) continue;
      placed.add(key);
      let entry = this.rows.get(key);
      if (!entry) {
        const { cells, update } = this.spec.createRow(item);
        cells.forEach((cell, i) => cell.setAttribute('data-label', this.spec.columns[i]));
        entry = { row: element('tr', {}, ...cells), update, countdowns: [] };
        this.rows.set(key, entry);
      }
      entry.countdowns = entry.update(item, clock);
      // Move a row only when it is out of place: moving a node takes focus away from it.
      const here = this.body.children[position];
      if (here !== entry.row) this.body.insertBefore(entry.row, here ?? null);
      position += 1;
    }
    this.expiredSeen = false;
    this.tick(performance.now());
    this.spec.empty.hidden = placed.size > 0;
    this.spec.container.hidden = placed.size === 0;
    this.spec.count.textContent = `(${counted(placed.size, ...this.spec.words)})`;
  }

  /** Shows nothing at all, not even "none": the list could not be read. */
  clear() {
    this.show([], { readAt: performance.now(), serverNow: Date.now() });
    this.spec.count.textContent = '';
    this.spec.empty.hidden = true;
  }

  /** Updates every countdown; true the first time one reaches zero since the last show(). */
  tick(now) {
    let expired = false;
    for (const entry of this.rows.values()) {
      for (const { node, deadline } of entry.countdowns) {
        const left = deadline - now;
        const text = remainingText(left);
        if (node.textContent !== text) node.textContent = text;
        if (left <= 0) expired = true;
      }
    }
    if (expired && !this.expiredSeen) {
      this.expiredSeen = true;
      return true;
    }
    return false;
  }
}

/** A cell whose text is a countdown. */
export function countdownCell(tag = 'td') {
  return element(tag, { className: 'countdown' });
}

/** The row's name: a button opening its history. */
export function nameCell(kind, name, openHistory) {
  const opener = button(name, {
    className: 'name-button',
    label: `History of ${kind} ${name}`,
    onClick: () => openHistory({ kind, name, opener }),
  });
  return element('th', { attrs: { scope: 'row' } }, opener);
}

/** The actions cell: Force release (a session's: Force end). */
export function actionsCell(kind, name, forceRelease, text = 'Force release') {
  const opener = button(text, {
    className: 'danger',
    label: `${text} ${kind} ${name}`,
    onClick: () => forceRelease({ kind, name, opener }),
  });
  return element('td', { className: 'actions' }, opener);
}

/** Sets a value cell: compact JSON, the whole of it as a tooltip when cut. */
export function setValue(cell, value) {
  const { short, full } = valueText(value);
  cell.textContent = short;
  if (full !== short) cell.title = full;
  else cell.removeAttribute('title');
}
