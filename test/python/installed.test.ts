// The Python package as a user gets it: built and installed into a virtual environment of its own, outside the
// repository, without a package index (pip --no-build-isolation --no-index, the distribution's setuptools), and the
// README's two examples, copied out of python/README.md into an empty project, run from there against our bridge.
// What the README shows must work as written: the test only puts in the bridge's URL, the tokens and the agent's id.
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestBridge } from '../helpers/bridge.js';
import { ROOT, python, startPython, stopPythonProcesses } from './python-process.js';

/** The README's first ```python block after `heading`. */
function readmeExample(heading: string): string {
  const readme = readFileSync(join(ROOT, 'python/README.md'), 'utf8');
  const from = readme.indexOf(`\n${heading}\n`);
  expect(from, heading).to.be.greaterThan(-1);
  const block = /```python\n([\s\S]*?)```/.exec(readme.slice(from));
  expect(block, `a python example under ${heading}`).to.not.equal(null);
  return block![1]!;
}

/** Replaces `literal` in an example, which must contain it: a README that changed it fails here, not silently. */
function put(code: string, literal: string, value: string): string {
  expect(code, `the example has ${literal}`).to.include(literal);
  return code.split(literal).join(value);
}

describe('Python package: installed outside the repository', function () {
  this.timeout(120_000);
  let dir: string;

  before(function () {
    dir = mkdtempSync(join(tmpdir(), 'py-installed-'));
    // Built from a copy, so that the build's own files (build/, *.egg-info) never land in the checkout.
    cpSync(join(ROOT, 'python'), join(dir, 'source'), {
      recursive: true,
      filter: (path) => !/__pycache__|\.mypy_cache/.test(path),
    });
    execFileSync(python(), ['-m', 'venv', '--system-site-packages', join(dir, 'venv')]);
    execFileSync(
      join(dir, 'venv/bin/pip'),
      ['install', '--quiet', '--no-build-isolation', '--no-index', '--no-deps', join(dir, 'source')],
      { cwd: dir, stdio: 'pipe' },
    );
    mkdirSync(join(dir, 'project'));
  });

  after(async function () {
    await stopPythonProcesses();
    rmSync(dir, { recursive: true, force: true });
  });

  it("runs the README's agent and app examples from an empty project", async function () {
    const interpreter = join(dir, 'venv/bin/python');
    const project = join(dir, 'project');
    const where = execFileSync(interpreter, ['-c', 'import agent_bridge; print(agent_bridge.__file__)'], {
      cwd: project,
      encoding: 'utf8',
    });
    expect(where.trim()).to.equal(join(dir, 'venv/lib/python3.11/site-packages/agent_bridge/__init__.py'));

    const bridge = await startTestBridge();
    const org = await bridge.org();
    const app = await bridge.app(org.org_id);
    const agent = await bridge.agent(org.org_id, 'Echo', { description: 'Says it back' });
    const base = `${bridge.url.replace(/^http/, 'ws')}/v1`;
    writeFileSync(
      join(project, 'connector.yaml'),
      `connection:\n  url: ${base}/ws/agent\nagents:\n  - agent_id: ${agent.agent_id}\n    token: \${TUTOR_TOKEN}\n    ttl_days: 30\n`,
    );
    writeFileSync(join(project, 'agent.py'), readmeExample('## The agent connector'));
    let appCode = readmeExample('## The app client');
    appCode = put(appCode, 'wss://bridge.example.com/v1', base);
    appCode = put(appCode, '"rlk_…"', JSON.stringify(app.token));
    appCode = put(appCode, '"tutor-7k2m"', JSON.stringify(agent.agent_id));
    writeFileSync(join(project, 'app.py'), appCode);

    startPython(['agent.py'], { TUTOR_TOKEN: agent.token }, { interpreter, cwd: project });
    await bridge.untilAgentOnline(agent.agent_id, true);
    const sample = startPython(['app.py'], {}, { interpreter, cwd: project });
    expect(await sample.exited, sample.output()).to.equal(0);
    const lines = sample.output().trim().split('\n');
    expect(lines[0]).to.equal(`${agent.agent_id} Echo Says it back`);
    expect(lines[1]).to.match(/^accepted \S+$/);
    expect(lines[2]).to.equal('You said: What is a prime?');
    expect(lines[3]).to.match(/^ echo \d+ ms$/);
  });
});
