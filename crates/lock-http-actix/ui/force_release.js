// Force release: an admin ends every lease of a lock, semaphore or election at once, or a session
// with every hold under it, with a reason for the history. The button shows for every key; the
// server decides who may.

import { returnFocusOnClose, showMessage } from './element.js';
import { send, segment, withQuery } from './api.js';

const REASON_CHARS = 256;

/** The DELETE that force-releases a `kind` of lease (a session: force-ends it). */
export function forceReleasePath(kind, name, reason) {
  const path = {
    lock: `/locks/${segment(name)}`,
    semaphore: `/semaphores/${segment(name)}`,
    election: `/elections/${segment(name)}/leader`,
    session: `/sessions/${segment(name)}`,
  }[kind];
  return withQuery(path, { force: 'true', reason });
}

/** What the dialog and its outcome say: a lease is force-released, a session force-ended. */
const RELEASE = {
  act: 'Force release',
  verb: 'force-release',
  done: 'Force-released',
  what: (label) => `Every holder of ${label} loses it now, and its fencing token stops being valid.`,
  nothing: (label) => `Nothing to force-release: nobody holds ${label}.`,
};
const END = {
  act: 'Force end',
  verb: 'force-end',
  done: 'Force-ended',
  what: (label) => `The ${label} ends now, and every hold under it with it: their fencing tokens stop `
    + 'being valid.',
  nothing: (label) => `Nothing to force-end: ${label} is no longer live.`,
};
const wordsFor = (kind) => (kind === 'session' ? END : RELEASE);

export class ForceReleaseDialog {
  /**
   * @param {object} parts the dialog's elements: dialog, form, title, what, reason, error, cancel,
   *   submit
   * @param {object} outcome callbacks: announce(text, tone), released(), unauthorized()
   * @param {HTMLElement} fallbackFocus where focus goes on close when the opener is gone
   */
  constructor(parts, outcome, fallbackFocus) {
    this.dialog = parts.dialog;
    this.form = parts.form;
    this.title = parts.title;
    this.what = parts.what;
    this.reason = parts.reason;
    this.error = parts.error;
    this.cancel = parts.cancel;
    this.submit = parts.submit;
    this.outcome = outcome;
    this.fallbackFocus = fallbackFocus;
    this.cancel.addEventListener('click', () => this.dialog.close());
    this.form.addEventListener('submit', (event) => {
      event.preventDefault();
      this.confirm();
    });
    this.dialog.addEventListener('close', () => {
      this.subject = null;
    });
    returnFocusOnClose(this.dialog, () => (this.opener?.isConnected ? this.opener : this.fallbackFocus));
  }

  /** Asks for a reason and a confirmation before force-releasing (or force-ending) `kind` `name`. */
  open({ kind, name, opener }) {
    this.opener = opener;
    this.subject = { kind, name };
    const words = wordsFor(kind);
    this.title.textContent = words.act;
    this.submit.textContent = words.act;
    this.what.textContent = `${words.what(`${kind} ${name}`)} Only admin keys may do this.`;
    this.reason.value = '';
    this.reason.removeAttribute('aria-invalid');
    showMessage(this.error, '');
    this.submit.disabled = false;
    this.dialog.showModal();
    this.reason.focus();
  }

  async confirm() {
    const subject = this.subject;
    const reason = this.reason.value.trim();
    const chars = [...reason].length;
    if (chars < 1 || chars > REASON_CHARS) {
      this.invalid(chars < 1 ? 'Give a reason: it goes into the history.'
        : `The reason is ${chars} characters long; at most ${REASON_CHARS} are allowed.`);
      return;
    }
    const label = `${subject.kind} ${subject.name}`;
    const words = wordsFor(subject.kind);
    this.submit.disabled = true;
    try {
      const response = await send(forceReleasePath(subject.kind, subject.name, reason), { method: 'DELETE' });
      const body = await response.json().catch(() => ({}));
      const holders = (body.force_released ?? [])
        .map((held) => `${held.owner} (token ${held.fencing_token})`).join(', ');
      this.dialog.close();
      this.outcome.announce(`${words.done} ${label}${holders ? ` from ${holders}` : ''}.`, 'ok');
      this.outcome.released();
    } catch (problem) {
      this.submit.disabled = false;
      if (problem.status === 422) {
        this.invalid(problem.text);
        return;
      }
      this.dialog.close();
      if (problem.status === 403 && problem.slug === 'admin-required') {
        this.outcome.announce(`Refused: only an admin key may ${words.verb} ${label}. ${problem.text}`, 'error');
      } else if (problem.status === 404) {
        this.outcome.announce(words.nothing(label), 'info');
        this.outcome.released();
      } else if (problem.status === 401) {
        this.outcome.unauthorized();
      } else {
        this.outcome.announce(`${words.act} of ${label} failed. ${problem.text ?? problem}`, 'error');
      }
    }
  }

  invalid(message) {
    this.reason.setAttribute('aria-invalid', 'true');
    showMessage(this.error, message);
    this.reason.focus();
  }
}
