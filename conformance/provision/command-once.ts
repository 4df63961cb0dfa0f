// A provisioning command run once for one request: the request on stdin, then end of input; the answer on stdout and
// the exit code (0 done, 3 not supported, other: failed). Every command supports this; lines mode is asked for with
// BRIDGE_PROVISION_LINES=1, and a command that speaks it writes ProvisionLinesHello before its answer line.
import { spawn } from 'node:child_process';
import { validateProvisionLinesHello } from '../../generated/index.js';
import { lastLine, replyOfLine, seconds, type Reply } from './command-reply.js';
import { ProvisionError } from './provisioner.js';

const NOT_SUPPORTED_EXIT = 3;

export const LINES_ENV = 'BRIDGE_PROVISION_LINES';

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

function run(command: string, input: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, { shell: true, stdio: ['pipe', 'pipe', 'pipe'], env });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, timedOut });
    });
    child.stdin.on('error', () => undefined); // a command that never reads its request still answers
    child.stdin.end(input);
  });
}

/** What a command run the usual way said: its exit code, and its stdout as one JSON value. */
function replyOfExit(outcome: Outcome, action: string): Reply {
  if (outcome.code === NOT_SUPPORTED_EXIT) return { unsupported: lastLine(outcome.stderr) };
  if (outcome.code !== 0) return { error: lastLine(outcome.stderr), exit: outcome.code };
  try {
    return { answer: JSON.parse(outcome.stdout) };
  } catch {
    throw new ProvisionError(
      `the provisioning command's answer to ${action} is not one JSON value: ${outcome.stdout.slice(0, 200)}`,
    );
  }
}

/**
 * Runs the command once for one request. With `askLines`, the command is also told it may speak lines mode; `lines`
 * says whether it did (its first line was the hello, and its answer is the line after it).
 */
export async function runOnce(
  command: string,
  action: string,
  request: string,
  askLines: boolean,
  timeoutMs: number,
): Promise<{ reply: Reply; lines: boolean }> {
  const env = askLines ? { ...process.env, [LINES_ENV]: '1' } : process.env;
  // The line's end only when lines are asked for: run the usual way, the input stays byte for byte what it was.
  const outcome = await run(command, askLines ? `${request}\n` : request, env, timeoutMs);
  if (outcome.timedOut)
    throw new ProvisionError(
      `the provisioning command did not answer ${action} within ${seconds(timeoutMs)} (stopped)`,
    );
  const [first = '', ...rest] = outcome.stdout.split('\n');
  let hello = false;
  try {
    hello = askLines && validateProvisionLinesHello(JSON.parse(first));
  } catch {
    // not JSON on its own line: an answer of the usual kind, spread over several lines
  }
  if (!hello) return { reply: replyOfExit(outcome, action), lines: false };
  const line = rest.find((l) => l.trim());
  if (line !== undefined) return { reply: replyOfLine(line, action).reply, lines: true };
  const why = lastLine(outcome.stderr);
  return { reply: { error: `it wrote no answer line${why ? ` (${why})` : ''}`, exit: outcome.code }, lines: true };
}
