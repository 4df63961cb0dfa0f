// Error texts come from the catalogue: the caller names the code and the situation, TypeScript asks for exactly the
// template's placeholders (the @ts-expect-error lines fail `npm run typecheck` if it stops asking), and nothing is
// left unfilled at run time.
import { expect } from 'chai';
import { ERROR_MESSAGES } from '../../generated/index.js';
import { errorText } from '../../src/shared/error-text.js';

describe('error texts from the catalogue', function () {
  it('fills every placeholder of the template named by code and situation', function () {
    expect(errorText('AGENT_OFFLINE', 'dropped', { agent_id: 'tutor', seconds: 10 })).to.equal(
      'Agent tutor disconnected before answering and did not come back within 10 s.',
    );
    expect(errorText('CONNECTION_REPLACED', 'replaced')).to.equal(ERROR_MESSAGES.CONNECTION_REPLACED.replaced);
  });

  it('is checked by the compiler: a missing value, an unknown situation or a value for a text without any', function () {
    const calls = [
      // @ts-expect-error seconds is missing
      () => errorText('AGENT_OFFLINE', 'dropped', { agent_id: 'tutor' }),
      // @ts-expect-error no such situation
      () => errorText('AGENT_OFFLINE', 'asleep', {}),
      // @ts-expect-error this text has no placeholder
      () => errorText('CONNECTION_REPLACED', 'replaced', { agent_id: 'tutor' }),
    ];
    expect(calls).to.have.length(3);
  });

  it('leaves no `{name}` in any text the catalogue has, whatever the values', function () {
    for (const [code, texts] of Object.entries(ERROR_MESSAGES)) {
      for (const [situation, template] of Object.entries(texts as Record<string, string>)) {
        const names = [...template.matchAll(/\{([a-z_]+)\}/g)].map((m) => m[1]!);
        const filled = (errorText as (c: string, s: string, p: object) => string)(
          code,
          situation,
          Object.fromEntries(names.map((n) => [n, 'x'])),
        );
        expect(filled, `${code}.${situation}`).to.not.match(/[{}]/);
      }
    }
  });
});
