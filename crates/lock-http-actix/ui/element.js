// Builds DOM nodes whose text comes from the server. Text only ever goes in through
// textContent: a resource named "<img src=x onerror=...>" must show as those characters, never
// become markup. Nothing in the page uses innerHTML. Also what every modal dialog shares: giving
// focus back when it closes (returnFocusOnClose).

/**
 * A new element.
 * @param {string} tag
 * @param {{className?: string, text?: string, attrs?: Record<string, string>,
 *          on?: Record<string, EventListener>}} [props]
 * @param {...(Node|string|null|undefined)} children strings become text nodes; null is skipped
 */
export function element(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  if (props.className) node.className = props.className;
  if (props.text !== undefined) node.textContent = props.text;
  for (const [name, value] of Object.entries(props.attrs ?? {})) node.setAttribute(name, value);
  for (const [type, listener] of Object.entries(props.on ?? {})) node.addEventListener(type, listener);
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(typeof child === 'string' ? document.createTextNode(child) : child);
  }
  return node;
}

/** A button that never submits a form by accident. */
export function button(text, { className, label, onClick } = {}) {
  const attrs = { type: 'button' };
  if (label) attrs['aria-label'] = label;
  return element('button', { className, text, attrs, on: onClick ? { click: onClick } : {} });
}

/** Shows or hides a message element, setting its text. */
export function showMessage(node, text) {
  node.textContent = text ?? '';
  node.hidden = !text;
}

/**
 * Gives focus back when the modal `dialog` closes, to `whereTo()` (its opener, or somewhere else
 * when the opener is gone). The close event runs a task after the dialog closed, and a key
 * pressed in between may have moved focus on already: focus moves only when it is still in the
 * dialog or nowhere, never away from where the keyboard user took it.
 */
export function returnFocusOnClose(dialog, whereTo) {
  dialog.addEventListener('close', () => {
    const now = document.activeElement;
    if (now && now !== document.body && !dialog.contains(now)) return;
    whereTo().focus();
  });
}
