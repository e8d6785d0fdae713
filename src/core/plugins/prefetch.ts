// PathDef.prefetch on the host's side. A plugin's storage reads are calls back from its isolate
// into the hosting object, and that round trip costs more than most handlers' own work (reading a
// TOTP key: about a fifth of a code's time in the mount's object). So a path may name the keys its handlers read, as
// templates over its fields; the host reads them in the request's transaction before the call and
// sends them along (plugins/sdk/prefetched.ts answers them from there).

import type { Operation } from '../../framework/backend';
import type { FieldData, FieldSchemas } from '../../framework/fields';
import type { Storage } from '../../framework/storage';

/** `{field}` in a template. */
const PLACEHOLDER = /\{([^{}]*)\}/g;

/** The keys an operation prefetches, given a request's fields. */
export type PrefetchKeys = (fields: FieldData) => string[];

/**
 * What is wrong with a path's prefetch templates, or null: each must name operations the path
 * serves and only fields it declares as strings, with no stray braces.
 */
export function prefetchProblem(prefetch: Partial<Record<Operation, string[]>>, operations: readonly Operation[], fields: FieldSchemas | undefined): string | null {
  for (const [operation, templates] of Object.entries(prefetch)) {
    if (!operations.includes(operation as Operation)) return `prefetches for ${operation}, which the path does not serve`;
    if (!Array.isArray(templates)) return `prefetch of ${operation} is not a list of key templates`;
    for (const template of templates) {
      if (typeof template !== 'string' || template === '') return `prefetch of ${operation} holds ${JSON.stringify(template)}, not a key template`;
      if (/[{}]/.test(template.replace(PLACEHOLDER, ''))) return `prefetch template ${JSON.stringify(template)} has an unmatched brace`;
      for (const [, name] of template.matchAll(PLACEHOLDER)) {
        if (fields?.[name!]?.type !== 'string') return `prefetch template ${JSON.stringify(template)} names ${JSON.stringify(name)}, which is not a string field of the path`;
      }
    }
  }
  return null;
}

/**
 * One operation's templates as a function of the request's fields. A template whose field is
 * empty gives no key (the handler reads whatever it reads then, as usual).
 */
export function compilePrefetch(templates: readonly string[]): PrefetchKeys {
  return (fields) => {
    const keys = new Set<string>();
    for (const template of templates) {
      let complete = true;
      const key = template.replace(PLACEHOLDER, (_, name: string) => {
        const value = fields.get<unknown>(name);
        if (typeof value !== 'string' || value === '') complete = false;
        return typeof value === 'string' ? value : '';
      });
      if (complete) keys.add(key);
    }
    return [...keys];
  };
}

/**
 * The keys' values in `storage` (null: absent). A key the storage refuses is left out: the
 * handler's own read of it meets the same refusal, where it always did.
 */
export async function readAhead(storage: Storage, keys: readonly string[]): Promise<[string, Uint8Array | null][]> {
  const out: [string, Uint8Array | null][] = [];
  for (const key of keys) {
    try {
      const now = storage.peek?.(key);
      out.push([key, now !== undefined ? now : await storage.get(key)]);
    } catch {
      // left to the handler
    }
  }
  return out;
}
