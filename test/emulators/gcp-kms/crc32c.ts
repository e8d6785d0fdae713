// CRC32C (Castagnoli), the checksum Cloud KMS puts on every payload: written out here so that the
// emulator checks the product's checksums with an implementation other than the product's.
const TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

export function crc32c(data: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of data) c = TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

// The standard check value: CRC32C("123456789") = 0xE3069283.
if (crc32c(new TextEncoder().encode('123456789')) !== 0xe3069283) throw new Error('crc32c: wrong check value');
