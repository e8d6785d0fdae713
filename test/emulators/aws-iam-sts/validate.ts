// Parameter checks shared by the IAM and STS actions and the control API's seeding: names, paths,
// policy ARNs and documents, tags, integers — each failing with the error AWS answers.
import { AwsError, invalidInput, limitExceeded, malformedPolicy, missing, validation } from './errors';
import type { Params } from './query';
import type { Tag } from './types';
import { ACCOUNT_ID } from './types';

/** `UserName` → `userName`, the member name AWS's validation messages use. */
const field = (param: string) => param[0].toLowerCase() + param.slice(1);

export const NAME = /^[\w+=,.@-]+$/;
export const PATH = /^(\/|\/[\u0021-\u007E]+\/)$/;

/** Reads and checks one request's parameters. */
export class Reader {
  constructor(readonly params: Params) {}

  optional(param: string): string | undefined {
    return this.params[param];
  }

  required(param: string): string {
    const v = this.params[param];
    if (v === undefined) throw missing(field(param));
    return v;
  }

  /** A string within [min, max] characters matching `pattern` (the pattern is quoted in the error). */
  text(param: string, opts: { min: number; max: number; pattern?: RegExp; patternText?: string; required: true }): string;
  text(param: string, opts: { min: number; max: number; pattern?: RegExp; patternText?: string; required?: false }): string | undefined;
  text(param: string, opts: { min: number; max: number; pattern?: RegExp; patternText?: string; required?: boolean }): string | undefined {
    const v = opts.required ? this.required(param) : this.optional(param);
    if (v === undefined) return undefined;
    return checkText(field(param), v, opts);
  }

  int(param: string, min: number, max: number): number | undefined {
    const v = this.optional(param);
    if (v === undefined) return undefined;
    const n = /^-?\d+$/.test(v) ? Number(v) : NaN;
    if (Number.isNaN(n)) throw validation(field(param), v, 'Member must be a number');
    if (n < min) throw validation(field(param), v, `Member must have value greater than or equal to ${min}`);
    if (n > max) throw validation(field(param), v, `Member must have value less than or equal to ${max}`);
    return n;
  }

  /** IAM's MaxItems (1..1000) and Marker. */
  paging(): { maxItems: number; marker: string | undefined } {
    return { maxItems: this.int('MaxItems', 1, 1000) ?? 100, marker: this.optional('Marker') };
  }
}

export function checkText(fieldName: string, v: string, opts: { min: number; max: number; pattern?: RegExp; patternText?: string }): string {
  if (v.length < opts.min) throw validation(fieldName, v, `Member must have length greater than or equal to ${opts.min}`);
  if (v.length > opts.max) throw validation(fieldName, v, `Member must have length less than or equal to ${opts.max}`);
  if (opts.pattern && !opts.pattern.test(v)) {
    throw validation(fieldName, v, `Member must satisfy regular expression pattern: ${opts.patternText ?? opts.pattern.source.replace(/^\^|\$$/g, '')}`);
  }
  return v;
}

export const checkPath = (v: string, fieldName = 'path') => checkText(fieldName, v, { min: 1, max: 512, pattern: PATH, patternText: '(\\u002F)|(\\u002F[\\u0021-\\u007E]+\\u002F)' });

const POLICY_ARN = /^arn:aws:iam::(aws|\d{12}):policy(\/[\u0021-\u007E]+)?\/([\w+=,.@-]{1,128})$/;

/** A managed policy ARN of AWS's or this account's; InvalidInput if malformed, NoSuchEntity if another account's. Answers the policy's name. */
export function checkPolicyArn(arn: string): string {
  const m = POLICY_ARN.exec(arn);
  if (!m) throw invalidInput(`ARN ${arn} is not valid.`);
  if (m[1] !== 'aws' && m[1] !== ACCOUNT_ID) throw new AwsError(404, 'NoSuchEntity', `Policy ${arn} does not exist or is not attachable.`);
  return m[3];
}

export const policyName = (arn: string) => arn.slice(arn.lastIndexOf('/') + 1);

/** A policy document: a JSON object with a Statement (MalformedPolicyDocument otherwise). */
export function checkPolicyDocument(doc: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(doc);
  } catch {
    throw malformedPolicy('Syntax errors in policy.');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw malformedPolicy('Syntax errors in policy.');
  const statement = (parsed as Record<string, unknown>).Statement;
  if (typeof statement !== 'object' || statement === null) throw malformedPolicy('Syntax errors in policy.');
  return doc;
}

const TAG_KEY = /^[\p{L}\p{Z}\p{N}_.:/=+\-@]+$/u;
const TAG_VALUE = /^[\p{L}\p{Z}\p{N}_.:/=+\-@]*$/u;

/** Tag keys 1..128, values 0..256, at most `max`, no key twice (keys compare case-insensitively). */
export function checkTags(tags: Partial<Record<'Key' | 'Value', string>>[], max = 50): Tag[] {
  if (tags.length > max) throw validation('tags', null, `Member must have length less than or equal to ${max}`);
  const seen = new Set<string>();
  return tags.map((t, i) => {
    const Key = checkText(`tags.${i + 1}.member.key`, t.Key ?? '', { min: 1, max: 128, pattern: TAG_KEY, patternText: '[\\p{L}\\p{Z}\\p{N}_.:/=+\\-@]+' });
    const Value = checkText(`tags.${i + 1}.member.value`, t.Value ?? '', { min: 0, max: 256, pattern: TAG_VALUE, patternText: '[\\p{L}\\p{Z}\\p{N}_.:/=+\\-@]*' });
    if (seen.has(Key.toLowerCase())) throw invalidInput('Duplicate tag keys found. Please note that Tag keys are case insensitive.');
    seen.add(Key.toLowerCase());
    return { Key, Value };
  });
}

/** Merges `add` into `tags` (replacing values of keys already there, case-insensitively), keeping at most 50. */
export function mergeTags(tags: Tag[], add: Tag[], quota: string): Tag[] {
  const out = [...tags];
  for (const t of add) {
    const i = out.findIndex((o) => o.Key.toLowerCase() === t.Key.toLowerCase());
    if (i >= 0) out[i] = t;
    else out.push(t);
  }
  if (out.length > 50) throw limitExceeded(`Cannot exceed quota for ${quota}: 50`);
  return out;
}
