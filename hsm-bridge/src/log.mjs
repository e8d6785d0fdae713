// @ts-check
// One JSON object per line on stdout (warnings and errors on stderr). Callers pass only the fields
// they mean to log; as a second guard, any field whose name looks like a PIN or a secret is
// replaced before writing, so a PIN cannot reach the log even by mistake.

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40 };
/** @typedef {keyof typeof LEVELS} Level */

const SECRET_FIELD = /pin|secret|password|passphrase|private|token_value/i;

/** @type {Level} */
let threshold = 'info';

/** @param {string} level */
export function setLogLevel(level) {
  if (!(level in LEVELS)) throw new Error(`log_level must be one of ${Object.keys(LEVELS).join(', ')}`);
  threshold = /** @type {Level} */ (level);
}

/**
 * @param {Level} level
 * @param {string} msg
 * @param {Record<string, unknown>} [fields]
 */
function write(level, msg, fields = {}) {
  if (LEVELS[level] < LEVELS[threshold]) return;
  /** @type {Record<string, unknown>} */
  const entry = { time: new Date().toISOString(), level, msg };
  for (const [k, v] of Object.entries(fields)) {
    if (v === undefined) continue;
    entry[k] = SECRET_FIELD.test(k) ? '[redacted]' : v;
  }
  const line = `${JSON.stringify(entry)}\n`;
  if (LEVELS[level] >= LEVELS.warn) process.stderr.write(line);
  else process.stdout.write(line);
}

export const log = {
  /** @param {string} msg @param {Record<string, unknown>} [f] */ debug: (msg, f) => write('debug', msg, f),
  /** @param {string} msg @param {Record<string, unknown>} [f] */ info: (msg, f) => write('info', msg, f),
  /** @param {string} msg @param {Record<string, unknown>} [f] */ warn: (msg, f) => write('warn', msg, f),
  /** @param {string} msg @param {Record<string, unknown>} [f] */ error: (msg, f) => write('error', msg, f),
};
