// Confirmations and small editors in a native modal <dialog>: the focus stays inside, Escape cancels, and an
// error of the action is shown in the dialog, next to the button that caused it, with the dialog left open.
import { h, uid } from './dom.js';
import { checkAll, showUnderField } from './forms.js';

/**
 * Opens a dialog; resolves with what `action()` returned, or undefined when cancelled. The focus goes back to the
 * control that opened it (found again by its `data-key` when a refresh has replaced it). `fields` (from forms.js,
 * part of `content`) are checked before `action(values)` runs, and an API error naming one is shown under it.
 */
export function openDialog({ title, content, confirmLabel, danger = false, action, fields = [] }) {
  const opener = document.activeElement;
  const openerKey = opener?.dataset?.key;
  const titleId = uid('dialog-title');
  const problem = h('p', { class: 'form-error', role: 'alert' });
  const confirm = h('button', { type: 'submit', class: danger ? 'danger' : 'primary' }, confirmLabel);
  const cancel = h('button', { type: 'button', class: 'quiet', autofocus: true }, 'Cancel');
  const body = h(
    'form',
    { novalidate: true },
    h('h2', { id: titleId }, title),
    content,
    h('div', { class: 'actions' }, confirm, cancel, problem),
  );
  const dialog = h('dialog', { 'aria-labelledby': titleId }, body);
  document.body.append(dialog);

  return new Promise((resolve) => {
    let result;
    dialog.addEventListener('close', () => {
      dialog.remove();
      const back = opener?.isConnected
        ? opener
        : openerKey && document.querySelector(`[data-key="${CSS.escape(openerKey)}"]`);
      back?.focus();
      resolve(result);
    });
    cancel.addEventListener('click', () => dialog.close());
    body.addEventListener('submit', async (event) => {
      event.preventDefault();
      problem.textContent = '';
      if (!checkAll(fields)) return;
      confirm.disabled = true;
      try {
        result = await action(Object.fromEntries(fields.map((f) => [f.name, f.value()])));
        dialog.close();
      } catch (err) {
        confirm.disabled = false;
        if (!showUnderField(fields, err.message)) {
          problem.textContent = err.message;
          confirm.focus();
        }
      }
    });
    dialog.showModal();
  });
}
