// Two launchers for DR end-to-end tests: a future primary and a future secondary, each on its own
// data directory (removed with the test file's temporary directories). The secondary starts with a
// copy of the primary's seal.key: DR replicates the barrier's ciphertext, which only the same seal
// opens.
import { copyFileSync } from 'node:fs';
import path from 'node:path';
import { crash } from './crash';
import { readInit, startLauncher, tempDir, type Server } from './processes';

export interface Launched {
  url: string;
  /** What the launcher wrote to init.json at its first start. */
  rootToken: string;
  recoveryKeys: string[];
  dataDir: string;
  /** The running process (replaced by restart). */
  server: Server;
}

export interface DrPair {
  primary: Launched;
  secondary: Launched;
  /** Stops both launchers (SIGTERM, an orderly shutdown). */
  stop(): Promise<void>;
}

/** Whether the process has exited (a signal's end leaves exitCode null, so stop() would wait forever). */
const ended = (server: Server): boolean => server.proc.exitCode !== null || server.proc.signalCode !== null;

/** Stops a launcher that still runs. */
export async function halt(server: Server): Promise<void> {
  if (!ended(server)) await server.stop();
}

async function launch(dataDir: string, env: Record<string, string> = {}): Promise<Launched> {
  const server = await startLauncher(dataDir, env);
  const init = readInit(dataDir);
  return { url: server.url, rootToken: init.root_token, recoveryKeys: init.recovery_keys, dataDir, server };
}

/** Another launcher on a copy of `primary`'s seal key (a future secondary). */
export async function launchSecondary(primary: Launched, name = 'secondary'): Promise<Launched> {
  const dataDir = tempDir(`coffer-dr-${name}-`);
  copyFileSync(path.join(primary.dataDir, 'seal.key'), path.join(dataDir, 'seal.key'));
  return launch(dataDir);
}

/** Starts the primary (with `primaryEnv`), then the secondary on a copy of the primary's seal key. */
export async function startDrPair(primaryEnv: Record<string, string> = {}): Promise<DrPair> {
  const primary = await launch(tempDir('coffer-dr-primary-'), primaryEnv);
  let secondary: Launched;
  try {
    secondary = await launchSecondary(primary);
  } catch (e) {
    await halt(primary.server);
    throw e;
  }
  return {
    primary,
    secondary,
    stop: async () => {
      await Promise.all([halt(primary.server), halt(secondary.server)]);
    },
  };
}

/** Stops `l` (if it still runs) and starts it again on the same data directory and port. */
export async function restart(l: Launched): Promise<Launched> {
  await halt(l.server);
  l.server = await startLauncher(l.dataDir, { PORT: new URL(l.url).port });
  return l;
}

/** kill -9 of `l`'s launcher and its workerd children: no shutdown, no flush. */
export const kill9 = (l: Launched): Promise<void> => crash(l.server);
