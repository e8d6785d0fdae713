// Registration (POST sys/plugins/catalog/:type/:name): the fields as Vault takes them, checked,
// and the module checked against the plugin directory before anything is stored.

import { strictUtf8 } from '../../crypto/encoding';
import { badRequest, CofferError } from '../../framework/errors';
import { isPluginName } from './catalog';
import { checkPluginFile, NO_DIRECTORY, type PluginDirectory } from './directory';
import type { CatalogEntry, PluginType } from './entry';
import { instrumentPlugin, PluginCodeError } from './instrument';
import { commandProblem } from './store';
import { canonicalVersion, isBuiltinVersion } from './version';

export interface RegisterInput {
  type: PluginType;
  name: string;
  /** `sha256`, or Vault's older spelling `sha_256`. */
  sha256: string;
  command: string;
  args: string[];
  env: string[];
  version: string;
  ociImage: string;
  runtime: string;
}

/** Checks the fields and builds the entry; `isBuiltin` names Coffer's own engines and methods. */
export function catalogEntryOf(input: RegisterInput, isBuiltin: (name: string) => boolean): CatalogEntry {
  const { type, name } = input;
  if (name === '') throw badRequest('missing plugin name');
  if (!isPluginName(name)) {
    throw badRequest(`invalid plugin name ${JSON.stringify(name)}: a name is letters, digits, "_", "-" and ".", and starts and ends with a letter, digit or "_"`);
  }
  if (isBuiltin(name)) {
    throw badRequest(`${JSON.stringify(name)} is the name of one of Coffer's built-in engines or auth methods: overriding a built-in plugin is not supported; register the plugin under another name`);
  }
  const version = canonicalVersion(input.version);
  if (isBuiltinVersion(version)) throw badRequest(`version ${JSON.stringify(version)} is not allowed because 'builtin' is a reserved metadata identifier`);

  if (input.ociImage !== '' || input.runtime !== '') {
    throw badRequest('oci_image and runtime are not supported: Coffer runs plugins as JavaScript modules from the plugin directory, named by command');
  }
  if (input.sha256 === '') throw badRequest('missing SHA-256 value');
  if (!/^[0-9a-fA-F]{64}$/.test(input.sha256)) {
    throw badRequest(`sha256 must be the 64 hexadecimal characters of a SHA-256 digest, got ${JSON.stringify(input.sha256)}`);
  }
  if (input.command === '') throw badRequest('must provide command: the module file in the plugin directory');

  // Vault still accepts arguments in `command` ("module.js --flag"), but not in both places.
  let command = input.command;
  let args = input.args;
  const parts = command.split(' ');
  if (parts.length > 1) {
    if (args.length > 0) throw badRequest('must not specify args in command and args field');
    [command, ...args] = parts;
  }
  const problem = commandProblem(command);
  if (problem) throw badRequest(`invalid command ${JSON.stringify(command)}: ${problem}`);

  for (const kv of input.env) {
    if (kv.indexOf('=') <= 0) throw badRequest(`invalid env entry ${JSON.stringify(kv)}: each entry is KEY=VALUE`);
  }
  return { type, name, version, sha256: input.sha256.toLowerCase(), command, args, env: [...input.env] };
}

/** Refuses an entry whose module is not in the directory, or whose bytes hash to another sha256. */
export async function assertModuleMatches(dir: PluginDirectory | null, entry: CatalogEntry): Promise<void> {
  const check = await checkPluginFile(dir, entry.command, entry.sha256);
  if (check.ok) return assertLoadable(entry, check.bytes);
  switch (check.reason) {
    case 'no-directory':
      throw badRequest(`cannot register plugin ${JSON.stringify(entry.name)}: ${NO_DIRECTORY}`);
    case 'missing':
      throw badRequest(`cannot register plugin ${JSON.stringify(entry.name)}: command ${JSON.stringify(entry.command)} names no file in ${dir?.label ?? 'the plugin directory'}`);
    case 'mismatch':
      throw badRequest(
        `cannot register plugin ${JSON.stringify(entry.name)}: the sha256 given does not match ${JSON.stringify(entry.command)} (given ${entry.sha256}, the file's is ${check.actual})`,
      );
    case 'unreadable':
      // The directory failing is the server's problem, not the request's.
      throw new CofferError(500, [`cannot register plugin ${JSON.stringify(entry.name)}: reading ${JSON.stringify(entry.command)} failed: ${check.detail}`]);
  }
}

/**
 * Vault runs a plugin's binary at registration; the nearest here is to check that the module is
 * one self-contained UTF-8 ES module with a default export, as the runtime will need it.
 */
function assertLoadable(entry: CatalogEntry, bytes: Uint8Array): void {
  const refuse = (why: string) => badRequest(`cannot register plugin ${JSON.stringify(entry.name)}: ${JSON.stringify(entry.command)} ${why}`);
  const source = strictUtf8(bytes);
  if (source === null) throw refuse('is not UTF-8 JavaScript');
  try {
    instrumentPlugin(source, { fuel: 1 });
  } catch (e) {
    if (e instanceof PluginCodeError) throw refuse(`cannot run: ${e.message}`);
    throw e;
  }
}
