// Every non-2xx answer is `{code, error}` (spec H1): Problems keep their catalogue status; anything else is
// INTERNAL_ERROR, logged, never shown.
import type { Context, Next } from 'koa';
import type { HttpError } from '../../generated/index.js';
import { Problem, problem } from '../admin/problem.js';
import { errorText } from '../shared/error-text.js';
import type { Logger } from '../shared/logger.js';

export function errorBodies(log: Logger) {
  return async function errorBody(ctx: Context, next: Next): Promise<void> {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined)
        throw new Problem('NOT_FOUND', errorText('NOT_FOUND', 'route', { method: ctx.method, path: ctx.path }));
      if (ctx.status === 405) {
        // The router set Allow; it stays on the answer with the error body.
        const allow = ctx.response.get('Allow') || 'none';
        const fields = { method: ctx.method, path: ctx.path, allow };
        throw new Problem('METHOD_NOT_ALLOWED', errorText('METHOD_NOT_ALLOWED', 'method', fields));
      }
    } catch (err) {
      const problem = toProblem(err);
      if (problem.code === 'INTERNAL_ERROR') log.error({ err, path: ctx.path, method: ctx.method }, 'request failed');
      ctx.status = problem.status;
      ctx.body = { code: problem.code, error: problem.message } satisfies HttpError;
    }
  };
}

function toProblem(err: unknown): Problem {
  if (err instanceof Problem) return err;
  const status = (err as { status?: number }).status;
  // Body parser rejections (malformed JSON, too large, wrong type) are the client's.
  if (status && status >= 400 && status < 500)
    return problem('INVALID_REQUEST', 'body', { detail: (err as Error).message.replace(/\.$/, '') });
  return new Problem('INTERNAL_ERROR', errorText('INTERNAL_ERROR', 'request'));
}
