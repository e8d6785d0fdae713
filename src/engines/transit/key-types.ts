// Transit key types: what each can do (reference §6.1) and Vault's numeric codes (backups use them).

import type { AsymmetricType } from '../../crypto/transit/asymmetric';
import type { CipherName } from '../../crypto/transit/cipher';

/** managed_key: the key is a managed key's (sys/managed-keys), held by its backend (./managed/). */
export type KeyType = CipherName | AsymmetricType | 'hmac' | 'managed_key';

interface TypeInfo {
  code: number;
  encryption: boolean;
  signing: boolean;
  derivation: boolean;
}

const TYPES: Record<KeyType, TypeInfo> = {
  'aes256-gcm96': { code: 0, encryption: true, signing: false, derivation: true },
  'ecdsa-p256': { code: 1, encryption: false, signing: true, derivation: false },
  ed25519: { code: 2, encryption: false, signing: true, derivation: true },
  'rsa-2048': { code: 3, encryption: true, signing: true, derivation: false },
  'rsa-4096': { code: 4, encryption: true, signing: true, derivation: false },
  'chacha20-poly1305': { code: 5, encryption: true, signing: false, derivation: true },
  'ecdsa-p384': { code: 6, encryption: false, signing: true, derivation: false },
  'ecdsa-p521': { code: 7, encryption: false, signing: true, derivation: false },
  'aes128-gcm96': { code: 8, encryption: true, signing: false, derivation: true },
  'rsa-3072': { code: 9, encryption: true, signing: true, derivation: false },
  // What a managed key can do depends on the managed key (./managed/): the generic paths refuse it.
  managed_key: { code: 10, encryption: false, signing: false, derivation: false },
  hmac: { code: 11, encryption: false, signing: false, derivation: false },
};

/** Types Vault Enterprise offers and Community Edition refuses by name. */
const ENTERPRISE_TYPES = new Set(['aes128-cmac', 'aes192-cmac', 'aes256-cmac', 'ml-dsa', 'hybrid', 'slh-dsa', 'aes128-cbc', 'aes256-cbc']);

export function isKeyType(s: string): s is KeyType {
  return Object.prototype.hasOwnProperty.call(TYPES, s);
}

/** The 400 message for a type name we do not create, or null when the type is ours. */
export function unsupportedTypeMessage(s: string): string | null {
  if (isKeyType(s)) return null;
  if (ENTERPRISE_TYPES.has(s)) return `key type ${s} is only available in Vault Enterprise`;
  return `unknown key type ${s}`;
}

export const typeCode = (t: KeyType): number => TYPES[t].code;

export function typeFromCode(code: number): KeyType | null {
  for (const [name, info] of Object.entries(TYPES)) if (info.code === code) return name as KeyType;
  return null;
}

export const supportsEncryption = (t: KeyType): boolean => TYPES[t].encryption;
export const supportsSigning = (t: KeyType): boolean => TYPES[t].signing;
export const supportsDerivation = (t: KeyType): boolean => TYPES[t].derivation;

export const isCipher = (t: KeyType): t is CipherName => t === 'aes128-gcm96' || t === 'aes256-gcm96' || t === 'chacha20-poly1305';
export const isRsa = (t: KeyType): t is 'rsa-2048' | 'rsa-3072' | 'rsa-4096' => t.startsWith('rsa-');
export const isEcdsa = (t: KeyType): t is 'ecdsa-p256' | 'ecdsa-p384' | 'ecdsa-p521' => t.startsWith('ecdsa-');
export const isAsymmetric = (t: KeyType): t is AsymmetricType => t === 'ed25519' || isRsa(t) || isEcdsa(t);

/** The `name` a key read shows for an asymmetric version. */
export function publicKeyName(t: AsymmetricType): string {
  if (t === 'ed25519') return 'ed25519';
  if (isEcdsa(t)) return `P-${t.slice('ecdsa-p'.length)}`;
  return t;
}
