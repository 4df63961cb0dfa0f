// Who a node's process is, as its heartbeat records it beside its NODE_ID: a random incarnation, new at every start
// (the other nodes tell a restart under the same id by it), and where the process runs. A process that starts with
// the NODE_ID of a live heartbeat takes the id over only when that heartbeat is provably its own predecessor's (O22):
// written in this boot of this kernel (boot_id), in this pid namespace, by a pid that no longer runs there (or that
// this process has now). Two processes cannot share a pid in one namespace of one boot, so that pid's process has
// ended: nothing is guessed from clocks or host names. Anywhere else (another machine, another container, an older
// release that records no identity, a system without /proc) nothing is proved, and the id stays refused until the
// heartbeat expires.
import { randomBytes } from 'node:crypto';
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';

export interface NodeIdentity {
  /** The incarnation: random, new at every start. */
  i: string;
  pid: number;
  host: string;
  /** The kernel's boot id (Linux), shared by every container of one machine and new at every boot. */
  boot?: string;
  /** The pid namespace (Linux), e.g. `pid:[4026531836]`: pids are unique within one. */
  pidns?: string;
}

function read(what: () => string): string | undefined {
  try {
    return what().trim();
  } catch {
    return undefined; // not Linux, or /proc hidden: nothing can be proved
  }
}

/** This process. */
export function thisProcess(): NodeIdentity {
  const boot = read(() => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8'));
  const pidns = read(() => readlinkSync('/proc/self/ns/pid'));
  return {
    i: randomBytes(8).toString('hex'),
    pid: process.pid,
    host: hostname(),
    ...(boot ? { boot } : {}),
    ...(pidns ? { pidns } : {}),
  };
}

/** An identity as a heartbeat recorded it; undefined for none (a release that recorded none) or one unreadable. */
export function parseIdentity(text: string | null | undefined): NodeIdentity | undefined {
  if (!text) return undefined;
  try {
    const found = JSON.parse(text) as Partial<NodeIdentity>;
    return typeof found.i === 'string' && Number.isInteger(found.pid) && typeof found.host === 'string'
      ? (found as NodeIdentity)
      : undefined;
  } catch {
    return undefined;
  }
}

/** Whether no process has `pid` in this namespace now: none at all, or only its exit status (a zombie). */
function ended(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH'; // EPERM: it runs, as another user
  }
  const stat = read(() => readFileSync(`/proc/${pid}/stat`, 'utf8'));
  return stat !== undefined && stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
}

/** The incarnations of the nodes joining or open in this process (tests run several): this pid, still alive. */
const openHere = new Set<string>();

export function opened(identity: NodeIdentity): void {
  openHere.add(identity.i);
}

export function closed(identity: NodeIdentity): void {
  openHere.delete(identity.i);
}

/** Whether `found` is provably a process of this machine and pid namespace that has ended (see the top). */
export function isEndedPredecessor(found: NodeIdentity, me: NodeIdentity): boolean {
  if (!found.boot || found.boot !== me.boot || !found.pidns || found.pidns !== me.pidns) return false;
  return found.pid === me.pid ? !openHere.has(found.i) : ended(found.pid);
}

/** Where the live holder of an id runs, for the refusal: "pid 1234 on host h", and whether that is here. */
export function describeHolder(found: NodeIdentity | undefined, me: NodeIdentity): string {
  if (!found) return 'a node that does not say where it runs (an older release)';
  const here =
    found.boot !== undefined && found.boot === me.boot && found.pidns !== undefined && found.pidns === me.pidns;
  return here ? `pid ${found.pid} on this machine, still running` : `pid ${found.pid} on host ${found.host}`;
}
