// RSA key pairs, the one slow kind of key to make (a 4096-bit pair is about a second of CPU, an
// 8192-bit one several). Every engine makes them through an RsaPairSource, so its host can hand
// it pairs made elsewhere: the Worker makes them before the request reaches the mount's object,
// which then does not stall the mount's other requests (framework PathDef.rsaKeysNeeded).

export interface RsaPair {
  /** PKCS#8 DER (rsaEncryption: usable for signing and for OAEP alike). */
  pkcs8: Uint8Array;
  /** SubjectPublicKeyInfo DER. */
  spki: Uint8Array;
}

export type RsaPairSource = (bits: number) => Promise<RsaPair>;

/** A new pair made here and now (e = 65537). */
export const generateRsaPair: RsaPairSource = async (bits) => {
  const pair = (await crypto.subtle.generateKey(
    { name: 'RSASSA-PKCS1-v1_5', modulusLength: bits, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' },
    true,
    ['sign', 'verify'],
  )) as CryptoKeyPair;
  const [pkcs8, spki] = await Promise.all([
    crypto.subtle.exportKey('pkcs8', pair.privateKey) as Promise<ArrayBuffer>,
    crypto.subtle.exportKey('spki', pair.publicKey) as Promise<ArrayBuffer>,
  ]);
  return { pkcs8: new Uint8Array(pkcs8), spki: new Uint8Array(spki) };
};
