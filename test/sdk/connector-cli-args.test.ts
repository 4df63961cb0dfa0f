// bridge-connector's command line: the flags it takes, --help and --version, and the usage errors a user reads
// (worded as they were under commander).
import { expect } from 'chai';
import { HELP, parseCliArgs, UsageError } from '../../src/sdk/connector/cli-args.js';

function usageError(args: string[]): string {
  try {
    parseCliArgs(args);
  } catch (err) {
    expect(err).to.be.instanceOf(UsageError);
    return (err as Error).message;
  }
  throw new Error(`${args.join(' ')} was accepted`);
}

describe('bridge-connector command line', function () {
  it('reads every flag, short or long, with its value separate or after =', function () {
    expect(parseCliArgs(['-c', 'agents.yaml', '-H', 'handler.ts'])).to.deep.equal({
      kind: 'run',
      options: { config: 'agents.yaml', handler: 'handler.ts' },
    });
    const all = [
      '--config=a.json',
      '--handler',
      'h.js',
      '--handler-timeout',
      '9000',
      '--words-per-token',
      '2',
      '--health-host',
      '0.0.0.0',
      '--drain-timeout',
      '0',
    ];
    expect(parseCliArgs(all)).to.deep.equal({
      kind: 'run',
      options: {
        config: 'a.json',
        handler: 'h.js',
        handlerTimeout: 9000,
        wordsPerToken: 2,
        healthHost: '0.0.0.0',
        drainTimeout: 0,
      },
    });
    expect(parseCliArgs(['-cA', '-H', 'b', '--drain-timeout=30000'])).to.deep.equal({
      kind: 'run',
      options: { config: 'A', handler: 'b', drainTimeout: 30000 },
    });
  });

  it('answers --help and --version (-h, -v) before anything else is required', function () {
    for (const args of [['--help'], ['-h'], ['-c', 'x', '--help']])
      expect(parseCliArgs(args), args.join(' ')).to.deep.equal({ kind: 'help' });
    for (const args of [['--version'], ['-v']])
      expect(parseCliArgs(args), args.join(' ')).to.deep.equal({ kind: 'version' });
  });

  it('refuses unknown flags, missing or bad values, missing required flags and stray arguments, naming the flag as --help shows it', function () {
    expect(usageError(['--foo'])).to.equal("unknown option '--foo'");
    expect(usageError(['-c', 'a', '-H', 'b', '-x'])).to.equal("unknown option '-x'");
    expect(usageError(['-c'])).to.equal("option '-c, --config <file>' argument missing");
    expect(usageError(['-c', '--handler', 'h'])).to.equal("option '-c, --config <file>' argument missing");
    expect(usageError(['-c', 'a'])).to.equal("required option '-H, --handler <module>' not specified");
    expect(usageError(['-H', 'h'])).to.equal("required option '-c, --config <file>' not specified");
    expect(usageError(['-c', 'a', '-H', 'b', '--handler-timeout', 'abc'])).to.equal(
      "option '--handler-timeout <ms>' argument 'abc' is invalid. must be a whole number, 1 or more",
    );
    expect(usageError(['-c', 'a', '-H', 'b', '--words-per-token', '0'])).to.include(
      'must be a whole number, 1 or more',
    );
    expect(usageError(['-c', 'a', '-H', 'b', '--drain-timeout=-1'])).to.equal(
      "option '--drain-timeout <ms>' argument '-1' is invalid. must be a whole number, 0 or more",
    );
    expect(usageError(['-c', 'a', '-H', 'b', '--drain-timeout', '1.5'])).to.include(
      'must be a whole number, 0 or more',
    );
    expect(usageError(['-c', 'a', '-H', 'b', '--drain-timeout='])).to.include("argument '' is invalid");
    expect(usageError(['-c', 'a', '-H', 'b', 'extra'])).to.equal('too many arguments. Expected 0 arguments but got 1.');
    expect(usageError(['--help=yes'])).to.equal("option '-h, --help' does not take a value");
  });

  it('--help lists every flag within 80 columns, with the drain default', function () {
    for (const flag of [
      '-c, --config <file>',
      '-H, --handler <module>',
      '--handler-timeout <ms>',
      '--words-per-token <n>',
      '--health-host <host>',
      '--drain-timeout <ms>',
      '-v, --version',
      '-h, --help',
    ]) {
      expect(HELP).to.include(`\n  ${flag} `);
    }
    expect(HELP).to.match(/^Usage: bridge-connector \[options\]\n/);
    expect(HELP.replace(/\s+/g, ' ')).to.include('(default 20 s)');
    expect(Math.max(...HELP.split('\n').map((l) => l.length))).to.be.at.most(80);
  });
});
