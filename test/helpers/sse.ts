// Server-sent events for tests: a POST whose answer is `text/event-stream`, read one event at a time as it comes
// (comments skipped), each `data` parsed as JSON and checked as a frame the bridge sends to an app.
import { describeErrors, validateServiceToAppMessage, type ServiceToAppMessage } from '../../generated/index.js';
import { ADMIN_TOKEN } from './bridge.js';

export interface SseEvent {
  event: string;
  data: ServiceToAppMessage;
}

export interface EventStream {
  status: number;
  headers: Headers;
  /** The next event, or undefined once the stream has ended. */
  next(timeoutMs?: number): Promise<SseEvent | undefined>;
  /** Every event until the end. */
  rest(timeoutMs?: number): Promise<SseEvent[]>;
  /** Closes the request, as a browser tab that goes away. */
  abort(): void;
}

export async function postEventStream(
  baseUrl: string,
  path: string,
  body: unknown,
  token = ADMIN_TOKEN,
): Promise<EventStream> {
  const controller = new AbortController();
  const response = await fetch(new URL(path, baseUrl), {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: controller.signal,
  });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  let done = false;

  const parse = (block: string): SseEvent | undefined => {
    const fields: Record<string, string> = {};
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      fields[line.slice(0, colon)] = line.slice(colon + 1).replace(/^ /, '');
    }
    if (fields.data === undefined) return undefined;
    const data = JSON.parse(fields.data);
    if (!validateServiceToAppMessage(data))
      throw new Error(`not an app frame: ${fields.data}: ${describeErrors(validateServiceToAppMessage.errors)}`);
    if (fields.event !== data.type) throw new Error(`event ${fields.event} carries a ${data.type} frame`);
    return { event: fields.event!, data };
  };

  const next = async (timeoutMs = 2000): Promise<SseEvent | undefined> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const end = buffered.indexOf('\n\n');
      if (end >= 0) {
        const block = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        const event = parse(block);
        if (event) return event;
        continue;
      }
      if (done) return undefined;
      let timer: NodeJS.Timeout | undefined;
      const chunk = await Promise.race([
        reader.read(),
        new Promise<never>(
          (_, reject) =>
            (timer = setTimeout(
              () => reject(new Error(`no server-sent event within ${timeoutMs} ms`)),
              Math.max(0, deadline - Date.now()),
            )),
        ),
      ]).finally(() => clearTimeout(timer));
      if (chunk.done) done = true;
      else buffered += decoder.decode(chunk.value, { stream: true });
    }
  };

  return {
    status: response.status,
    headers: response.headers,
    next,
    async rest(timeoutMs) {
      const events: SseEvent[] = [];
      for (let e = await next(timeoutMs); e; e = await next(timeoutMs)) events.push(e);
      return events;
    },
    abort: () => controller.abort(),
  };
}
