// Turns policy text (HCL or JSON) into the generic HCL tree. Vault's HCL parser accepts JSON,
// so a document starting with "{" is read as JSON and mapped onto the same tree.

import { PolicyError } from './errors';
import { HclObject, parseHcl, type HclValue } from './hcl';

function fromJson(value: unknown, where: string): HclValue {
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return value;
  if (Array.isArray(value)) return value.map((v, i) => fromJson(v, `${where}[${i}]`));
  if (value !== null && typeof value === 'object') {
    return new HclObject(
      Object.entries(value).map(([key, v]) => ({ key, labels: [], value: fromJson(v, `${where}.${key}`) })),
    );
  }
  throw new PolicyError(`invalid JSON policy: ${where} is null`);
}

export function parseJsonDocument(text: string): HclObject {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new PolicyError(`invalid JSON policy: ${(err as Error).message}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new PolicyError('invalid JSON policy: the document must be an object');
  }
  return fromJson(parsed, '$') as HclObject;
}

export function parseDocument(text: string): HclObject {
  const body = text.replace(/^\ufeff/, '').trimStart();
  return body.startsWith('{') ? parseJsonDocument(body) : parseHcl(text);
}
