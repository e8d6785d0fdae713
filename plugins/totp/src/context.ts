// What the engine's paths share.

export interface TotpContext {
  /** The current time, ms since the epoch (injectable for tests). */
  now(): number;
}

/** Vault's GenericNameWithAtRegex: word characters, '-', '.' and '@', starting and ending in a word character. */
export const KEY_NAME = '(?<name>\\w(?:[\\w.@-]*\\w)?)';
