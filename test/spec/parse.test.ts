import { expect } from 'chai';
import { asyncApiDiagnostics, openApiDiagnostics } from '../../tools/gen/load.js';

describe('the spec documents', function () {
  it('asyncapi.yaml parses with @asyncapi/parser with no error or warning diagnostics', async function () {
    const diagnostics = await asyncApiDiagnostics();
    const serious = diagnostics.filter((d) => d.severity === 'error' || d.severity === 'warning');
    expect(serious, serious.map((d) => `${d.where}: ${d.message}`).join('\n')).to.deep.equal([]);
  });

  it('openapi.yaml validates as OpenAPI 3.1, including its $refs into asyncapi.yaml', async function () {
    expect(await openApiDiagnostics()).to.deep.equal([]);
  });
});
