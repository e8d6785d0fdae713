// Field schemas and Vault's weak typing. Every handler receives values already coerced to the
// declared type; conversion failures become 400s naming the field, as Vault's FieldData does.

import { badRequest } from './errors';
import { DurationError, parseDurationSeconds } from './duration';
import { exactText, exactToNumber, isExactNumber } from './json-numbers';

export type FieldType =
  | 'string'
  | 'lowercase-string'
  | 'int'
  | 'bool'
  | 'duration' // whole seconds; negative values refused
  | 'signed-duration'
  | 'string-list' // array, or one string as a single element
  | 'comma-string-list' // array, or a comma-separated string
  | 'comma-int-list'
  | 'map' // JSON object
  | 'string-map' // object of strings, or ["k=v", ...]
  | 'any';

export interface FieldSchema {
  type: FieldType;
  description: string;
  default?: unknown;
  required?: boolean;
  /** For strings: the accepted values. */
  allowed?: readonly string[];
  /**
   * JSON `null` leaves the field unset instead of giving its zero value: for the few fields
   * Vault decodes into a pointer (token create's `renewable`), where null means "the default".
   */
  nullIsUnset?: boolean;
}

export type FieldSchemas = Record<string, FieldSchema>;

class ConversionError extends Error {}

const TRUE_STRINGS = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const FALSE_STRINGS = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

function toStringValue(v: unknown): string {
  if (typeof v === 'string') return v;
  // A number kept exact reads as the text the client sent (mapstructure's json.Number to string).
  if (isExactNumber(v)) return exactText(v);
  if (v === null) return ''; // a null inside a list or map, as mapstructure decodes it
  if (typeof v === 'number' || typeof v === 'bigint') return String(v);
  if (typeof v === 'boolean') return v ? '1' : '0';
  throw new ConversionError(`expected a string, got ${describe(v)}`);
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return `a ${typeof v}`;
}

function toInt(v: unknown): number {
  // Beyond 2^53 a double no longer holds every integer: refused rather than changed.
  if (typeof v === 'number' && Number.isSafeInteger(v)) return v;
  if (typeof v === 'string' && /^\s*[-+]?\d+\s*$/.test(v)) {
    const n = parseInt(v, 10);
    if (Number.isSafeInteger(n)) return n;
  }
  if (typeof v === 'boolean') return v ? 1 : 0;
  throw new ConversionError(`cannot parse ${JSON.stringify(v)} as an integer`);
}

function toBool(v: unknown): boolean {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number') return v !== 0;
  if (typeof v === 'string') {
    if (TRUE_STRINGS.has(v)) return true;
    if (FALSE_STRINGS.has(v)) return false;
  }
  throw new ConversionError(`cannot parse ${JSON.stringify(v)} as a boolean`);
}

function toStringList(v: unknown, splitCommas: boolean): string[] {
  if (v === null || v === undefined || v === '') return [];
  const items: unknown[] = Array.isArray(v) ? v : [v];
  const out: string[] = [];
  for (const item of items) {
    const s = toStringValue(item);
    if (splitCommas) out.push(...s.split(',').map((p) => p.trim()).filter((p) => p !== ''));
    else out.push(s);
  }
  return out;
}

function toMap(v: unknown): Record<string, unknown> {
  if (v === null || v === undefined || v === '') return {};
  if (typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  throw new ConversionError(`expected a map, got ${describe(v)}`);
}

function toStringMap(v: unknown): Record<string, string> {
  if (v === null || v === undefined || v === '') return {};
  const out: Record<string, string> = {};
  if (Array.isArray(v) || typeof v === 'string') {
    for (const pair of toStringList(v, typeof v === 'string')) {
      const i = pair.indexOf('=');
      if (i <= 0) throw new ConversionError(`expected "key=value", got ${JSON.stringify(pair)}`);
      out[pair.slice(0, i)] = pair.slice(i + 1);
    }
    return out;
  }
  for (const [k, val] of Object.entries(toMap(v))) out[k] = toStringValue(val);
  return out;
}

/**
 * Converts a raw request value to `type`. JSON `null` is the type's zero value, as Vault's
 * mapstructure decoding makes it ("" for strings, 0, false, [] and {}); `any` keeps the null.
 */
export function convertField(type: FieldType, raw: unknown): unknown {
  if (raw === null) return type === 'any' ? null : zeroValue(type);
  // Exact numbers are numbers to the numeric types; the string, list and map types keep their text.
  if (isExactNumber(raw) && (type === 'int' || type === 'bool' || type === 'duration' || type === 'signed-duration')) raw = exactToNumber(raw);
  switch (type) {
    case 'string':
      return toStringValue(raw);
    case 'lowercase-string':
      return toStringValue(raw).toLowerCase();
    case 'int':
      return toInt(raw);
    case 'bool':
      return toBool(raw);
    case 'duration':
    case 'signed-duration': {
      let secs: number;
      try {
        secs = parseDurationSeconds(raw);
      } catch (e) {
        throw new ConversionError(e instanceof DurationError ? e.message : String(e));
      }
      if (type === 'duration' && secs < 0) throw new ConversionError('cannot provide negative value');
      return secs;
    }
    case 'string-list':
      return toStringList(raw, false);
    case 'comma-string-list':
      return toStringList(raw, true);
    case 'comma-int-list':
      return toStringList(raw, true).map(toInt);
    case 'map':
      return toMap(raw);
    case 'string-map':
      return toStringMap(raw);
    case 'any':
      return raw;
  }
}

/** The zero value Vault's FieldData returns for an absent field without a default. */
function zeroValue(type: FieldType): unknown {
  switch (type) {
    case 'string':
    case 'lowercase-string':
      return '';
    case 'int':
    case 'duration':
    case 'signed-duration':
      return 0;
    case 'bool':
      return false;
    case 'string-list':
    case 'comma-string-list':
    case 'comma-int-list':
      return [];
    case 'map':
    case 'string-map':
      return {};
    case 'any':
      return undefined;
  }
}

/** Coerced request fields. `get` falls back to the schema default, then the type's zero value. */
export class FieldData {
  private readonly values = new Map<string, unknown>();

  constructor(
    readonly schema: FieldSchemas,
    readonly raw: Record<string, unknown>,
  ) {}

  /**
   * Converts every declared field present in the raw data; throws a 400 on the first failure.
   * A field sent as JSON `null` is present, with its type's zero value.
   */
  validate(): void {
    for (const [name, field] of Object.entries(this.schema)) {
      const raw = this.raw[name];
      if (raw === undefined || (raw === null && field.nullIsUnset)) {
        if (field.required) throw badRequest(`missing required field "${name}"`);
        continue;
      }
      let value: unknown;
      try {
        value = convertField(field.type, raw);
      } catch (e) {
        if (!(e instanceof ConversionError)) throw e;
        throw badRequest(`error converting input ${JSON.stringify(raw)} for field "${name}": ${e.message}`);
      }
      if (field.allowed && typeof value === 'string' && !field.allowed.includes(value)) {
        throw badRequest(`invalid value ${JSON.stringify(value)} for field "${name}": allowed values are ${field.allowed.join(', ')}`);
      }
      this.values.set(name, value);
    }
  }

  has(name: string): boolean {
    return this.values.has(name);
  }

  get<T = unknown>(name: string): T {
    const field = this.schema[name];
    if (!field) throw new Error(`field "${name}" is not in the schema`);
    if (this.values.has(name)) return this.values.get(name) as T;
    if (field.default !== undefined) return convertField(field.type, field.default) as T;
    return zeroValue(field.type) as T;
  }

  /** Names present in the request that the schema does not declare. */
  unknownFields(): string[] {
    return Object.keys(this.raw).filter((k) => !(k in this.schema));
  }
}
