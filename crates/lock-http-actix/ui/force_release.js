// Force release: an admin ends every lease of a lock, semaphore or election at once, with a
// reason for the history. The button shows for every key; the server decides who may.

import { showMessage } from './element.js';
import { send, segment, withQuery } from './api.js';

const REASON_CHARS = 256;

/** The DELETE that force-releases a `kind` of lease. */
export function forceReleasePath(kind, name, reason) {
  const path = {
    lock: `/locks/${segment(name)}`,
    semaphore: `/semaphores/${segment(name)}`,
    election: `/elections/${segment(name)}/leader`,
  }[kind];
  return withQuery(path, { force: 'true', reason });
}

export class ForceReleaseDialog {
  /**
   * @param {object} parts the dialog's elements: dialog, form, what, reason, error, cancel, submit
   * @param {object} outcome callbacks: announce(text, tone), released(), unauthorized()
   * @param {HTMLElement} fallbackFocus where focus goes on close when the opener is gone
   */
  constructor(parts, outcome, fallbackFocus) {
    this.dialog = parts.dialog;
    this.form = parts.form;
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
      const back = this.opener?.isConnected ? this.opener : this.fallbackFocus;
      back.focus();
    });
  }

  /** Asks for a reason and a confirmation before force-releasing `kind` `name`. */
  open({ kind, name, opener }) {
    this.opener = opener;
    this.subject = { kind, name };
    this.what.textContent = `Every holder of ${kind} ${name} loses it now, and its fencing token `
      + 'stops being valid. Only admin keys may do this.';
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
    this.submit.disabled = true;
    try {
      const response = await send(forceReleasePath(subject.kind, subject.name, reason), { method: 'DELETE' });
      const body = await response.json().catch(() => ({}));
      const holders = (body.force_released ?? [])
        .map((held) => `${held.owner} (token ${held.fencing_token})`).join(', ');
      this.dialog.close();
      this.outcome.announce(`Force-released ${label}${holders ? ` from ${holders}` : ''}.`, 'ok');
      this.outcome.released();
    } catch (problem) {
      this.submit.disabled = false;
      if (problem.status === 422) {
        this.invalid(problem.text);
        return;
      }
      this.dialog.close();
      if (problem.status === 403 && problem.slug === 'admin-required') {
        this.outcome.announce(`Refused: only an admin key may force-release ${label}. ${problem.text}`, 'error');
      } else if (problem.status === 404) {
        this.outcome.announce(`Nothing to force-release: nobody holds ${label}.`, 'info');
        this.outcome.released();
      } else if (problem.status === 401) {
        this.outcome.unauthorized();
      } else {
        this.outcome.announce(`Force release of ${label} failed. ${problem.text ?? problem}`, 'error');
      }
    }
  }

  invalid(message) {
    this.reason.setAttribute('aria-invalid', 'true');
    showMessage(this.error, message);
    this.reason.focus();
  }
}
