// Forms that check every field before anything is sent, and show each problem next to its cause: a field's own
// error under it, an API error under the field it names, or else next to the submit button.
import { h, uid } from './dom.js';

/**
 * One labelled control. `check(value)` returns a message when the value is not acceptable; `read` turns the
 * control's value into what is sent.
 */
export function field({ name, label, control, hint, check = () => undefined, read = (c) => c.value }) {
  const id = uid(name);
  control.id = id;
  control.name = name;
  const hintEl = hint ? h('p', { class: 'hint', id: `${id}-hint` }, hint) : null;
  const error = h('p', { class: 'field-error', id: `${id}-error` });
  control.setAttribute('aria-describedby', [hintEl?.id, error.id].filter(Boolean).join(' '));
  const element = h('div', { class: 'field' }, h('label', { for: id }, label), hintEl, control, error);
  return {
    name,
    element,
    control,
    value: () => read(control),
    check: () => check(read(control)),
    show(message) {
      error.textContent = message ?? '';
      if (message) control.setAttribute('aria-invalid', 'true');
      else control.removeAttribute('aria-invalid');
    },
  };
}

export const input = (props = {}) => h('input', { type: 'text', autocomplete: 'off', spellcheck: 'false', ...props });

export function required(what, maxLength) {
  return (value) => {
    if (!value.trim()) return `Enter ${what}.`;
    if (value.length > maxLength) return `At most ${maxLength} characters (now ${value.length}).`;
    return undefined;
  };
}

/** Shows every field's problem, or clears it; the first field with one gets the focus. Whether all are fine. */
export function checkAll(fields) {
  let first;
  for (const f of fields) {
    const message = f.check();
    f.show(message);
    first ??= message ? f : undefined;
  }
  first?.control.focus();
  return !first;
}

/** Shows an API error under the field it names, which gets the focus; whether one did. */
export function showUnderField(fields, message) {
  const culprit = fields.find((f) => new RegExp(`\\b${f.name}\\b`, 'i').test(message));
  culprit?.show(message);
  culprit?.control.focus();
  return Boolean(culprit);
}

/**
 * A form whose submit checks every field (the first problem gets the focus) and only then calls
 * `send(values)`; an API error is shown next to what caused it and the form stays filled in.
 */
export function form({ label, fields, submitLabel, send, extra = [] }) {
  const problem = h('p', { class: 'form-error', role: 'alert' });
  const button = h('button', { type: 'submit', class: 'primary' }, submitLabel);
  const element = h(
    'form',
    { 'aria-label': label, novalidate: true },
    fields.map((f) => f.element),
    extra,
    h('div', { class: 'actions' }, button, problem),
  );
  element.addEventListener('submit', async (event) => {
    event.preventDefault();
    problem.textContent = '';
    if (!checkAll(fields)) return;
    button.disabled = true;
    element.setAttribute('aria-busy', 'true');
    try {
      await send(Object.fromEntries(fields.map((f) => [f.name, f.value()])));
      element.reset();
    } catch (err) {
      if (!showUnderField(fields, err.message)) problem.textContent = err.message;
    } finally {
      button.disabled = false;
      element.removeAttribute('aria-busy');
    }
  });
  return element;
}
