// The break modes: each one breaks exactly one rule of the shared specification, so the conformance suite can be
// shown to catch that rule (and only that rule) on a bridge that shares none of this project's code.
export const BREAKS = {
  'no-app-pong': 'ping on the app endpoint gets no pong',
  'forbidden-as-unauthorized': 'an agent token on /ws/app is refused with UNAUTHORIZED instead of FORBIDDEN',
  'payload-limit-off-by-one': 'a payload of exactly 64000 bytes is refused',
  'discover-lists-excluded': 'discover also lists agents whose allowlist excludes the app',
  'unknown-event-ignored': 'token/reply/error naming an unknown event_id is silently ignored',
  'retry-after-offline': 'an event that ended with AGENT_OFFLINE is delivered when the agent reconnects',
  'short-agent-timeout': 'the agent timeout is 30000 ms',
  'drops-agent-on-bad-field': 'a valid-JSON agent frame that is not a valid message closes the agent connection',
  'long-session-keys': 'thread_ids that make the stored session key longer than 255 characters are accepted',
  'tokens-to-every-instance': 'tokens and reply go to every connected instance of the app',
  'old-token-forever': 'a rotated-out token keeps working after the hour',
  'accepted-after-delivery': 'accepted is sent only once the agent answers with its first token or reply',
  'event-before-accepted': 'the event is delivered to the agent first, and accepted is sent to the app 300 ms later',
  'no-agent-pong': 'ping on the agent endpoint gets no pong',
  'agent-errors-without-code': 'errors sent to agents carry no code',
  'mistyped-token-dropped': 'a token for an event in flight whose token is not a string is dropped without an error',
} as const;

export type BreakName = keyof typeof BREAKS;
