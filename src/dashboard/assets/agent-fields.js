// An agent's name, description and session TTL fields, with the spec's rules: the registration form's and the
// edit dialog's.
import { h } from './dom.js';
import { field, input, required } from './forms.js';
import { FIELD_RULES } from './spec.js';

/** `agent` gives the values to start from (an edit); without it, a new agent's defaults. */
export function agentFields(agent) {
  const ttl = input({
    type: 'number',
    inputmode: 'numeric',
    min: FIELD_RULES.ttlDaysMin,
    max: FIELD_RULES.ttlDaysMax,
    step: 1,
    value: agent?.ttl_days ?? FIELD_RULES.ttlDaysDefault,
  });
  const description = h('textarea', { rows: 2 });
  description.value = agent?.description ?? '';
  return [
    field({
      name: 'name',
      label: 'Agent name',
      control: input({ value: agent?.name }),
      check: required('a name', FIELD_RULES.nameMaxLength),
    }),
    field({
      name: 'description',
      label: 'Description (optional)',
      hint: 'What the agent does; apps see it in the directory.',
      control: description,
      check: (v) =>
        v.length > FIELD_RULES.descriptionMaxLength
          ? `At most ${FIELD_RULES.descriptionMaxLength} characters (now ${v.length}).`
          : undefined,
    }),
    field({
      name: 'ttl_days',
      label: 'Session TTL (days)',
      hint: agent
        ? 'A new TTL applies to the sessions started from now on: a conversation under way keeps the expiry it was given when it started.'
        : 'A conversation (app + thread) is kept this many days after its first event.',
      control: ttl,
      read: (c) => (c.value.trim() === '' ? NaN : Number(c.value)),
      check: (v) =>
        Number.isInteger(v) && v >= FIELD_RULES.ttlDaysMin && v <= FIELD_RULES.ttlDaysMax
          ? undefined
          : `Enter a whole number of days from ${FIELD_RULES.ttlDaysMin} to ${FIELD_RULES.ttlDaysMax}.`,
    }),
  ];
}
