// Reading a provider_config option with the type the provider expects (Vault decodes these with
// mapstructure, which refuses a value of another type rather than converting it).

const goType = (v: unknown): string => (typeof v === 'number' ? (Number.isInteger(v) ? 'int' : 'float64') : typeof v === 'boolean' ? 'bool' : typeof v === 'string' ? 'string' : Array.isArray(v) ? 'slice' : 'map');

/** The option's value, `fallback` when absent; throws with mapstructure's wording when mistyped. */
export function option<T>(pc: Record<string, unknown>, key: string, kind: 'string' | 'boolean' | 'int', fallback: T): T {
  const v = pc[key];
  if (v === undefined || v === null) return fallback;
  const ok = kind === 'int' ? typeof v === 'number' && Number.isInteger(v) : typeof v === kind;
  if (!ok) throw new Error(`'${key}' expected type '${kind === 'boolean' ? 'bool' : kind}', got unconvertible type '${goType(v)}'`);
  return v as T;
}
