// Crash tests: a burst of requests against the launcher, `kill -9` of its workerd in the middle,
// a restart on the same data, then checks that everything acknowledged is there and nothing is
// half-written. Requests go through node-vault, as a client would send them.
import { readFileSync } from 'node:fs';
import nodeVault from 'node-vault';
import { startLauncher, type Server } from './processes';

export type Client = ReturnType<typeof nodeVault>;

export const client = (server: Server, token: string): Client => nodeVault({ endpoint: server.url, token, noCustomHTTPVerbs: true });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Every process below `pid` (workerd is the launcher's child). */
function descendants(pid: number): number[] {
  const out: number[] = [];
  const walk = (p: number) => {
    let children = '';
    try {
      children = readFileSync(`/proc/${p}/task/${p}/children`, 'utf8');
    } catch {
      return;
    }
    for (const child of children.trim().split(/\s+/).filter(Boolean).map(Number)) {
      out.push(child);
      walk(child);
    }
  };
  walk(pid);
  return out;
}

/** kill -9 of workerd and the launcher: no shutdown, no flush, as a power cut would leave it. */
export async function crash(server: Server): Promise<void> {
  for (const pid of descendants(server.proc.pid!).reverse()) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  await server.stop('SIGKILL');
}

export interface BurstResult<T> {
  /** What the server answered before it died, in no particular order. */
  acked: T[];
  /** Requests the server refused (not cut off by the crash): each is a test failure. */
  refused: string[];
  /** Requests sent in all (some unanswered). */
  sent: number;
}

/**
 * Runs `op(0)`, `op(1)`, ... on `workers` concurrent loops, kills the server after `crashAfterMs`
 * and waits for the loops to end. An op resolves with what it wants checked later.
 */
export async function burst<T>(server: Server, workers: number, crashAfterMs: number, op: (n: number) => Promise<T>): Promise<BurstResult<T>> {
  const result: BurstResult<T> = { acked: [], refused: [], sent: 0 };
  let dead = false;
  const loop = async () => {
    while (!dead) {
      const n = result.sent++;
      try {
        result.acked.push(await op(n));
      } catch (e) {
        const status = (e as { response?: { statusCode?: number } }).response?.statusCode;
        // Connection errors are the crash; an HTTP answer that is not a success is a refusal.
        if (status !== undefined) result.refused.push(`op ${n}: ${status} ${JSON.stringify((e as { response?: { body?: unknown } }).response?.body)}`);
        if (dead || status === undefined) return;
      }
    }
  };
  const loops = Array.from({ length: workers }, loop);
  await sleep(crashAfterMs);
  // Killed while the loops still send: requests are in flight at every stage when it dies.
  await crash(server);
  dead = true;
  await Promise.allSettled(loops);
  return result;
}

/** Starts the launcher again on the same data directory. */
export const restart = (dataDir: string, env: Record<string, string> = {}): Promise<Server> => startLauncher(dataDir, env);

/** The HTTP status of a failed node-vault call (0: no answer). */
export async function statusOf(call: () => Promise<unknown>): Promise<number> {
  try {
    await call();
    return 200;
  } catch (e) {
    return (e as { response?: { statusCode?: number } }).response?.statusCode ?? 0;
  }
}
