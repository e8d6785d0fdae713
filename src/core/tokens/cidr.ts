// CIDR matching for token_bound_cidrs (IPv4 and IPv6), and validation of CIDR strings.

function parseIPv4(ip: string): number[] | null {
  const parts = ip.split('.');
  if (parts.length !== 4) return null;
  const bytes = parts.map((p) => (/^\d{1,3}$/.test(p) ? Number(p) : NaN));
  return bytes.every((b) => b >= 0 && b <= 255) ? bytes : null;
}

function parseIPv6(ip: string): number[] | null {
  const zone = ip.indexOf('%');
  if (zone >= 0) ip = ip.slice(0, zone);
  let tail: number[] = [];
  const lastColon = ip.lastIndexOf(':');
  if (ip.includes('.') && lastColon >= 0) {
    const v4 = parseIPv4(ip.slice(lastColon + 1));
    if (!v4) return null;
    tail = v4;
    ip = `${ip.slice(0, lastColon + 1)}0:0`;
  }
  const halves = ip.split('::');
  if (halves.length > 2) return null;
  const groups = (s: string) => (s === '' ? [] : s.split(':'));
  const head = groups(halves[0]);
  const rest = halves.length === 2 ? groups(halves[1]) : [];
  const missing = 8 - head.length - rest.length;
  if ((halves.length === 1 && missing !== 0) || missing < 0) return null;
  const all = [...head, ...Array(halves.length === 2 ? missing : 0).fill('0'), ...rest];
  const bytes: number[] = [];
  for (const g of all) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
    const v = parseInt(g, 16);
    bytes.push(v >> 8, v & 0xff);
  }
  if (tail.length) bytes.splice(12, 4, ...tail);
  return bytes.length === 16 ? bytes : null;
}

/** Bytes of an address; IPv4-mapped IPv6 addresses are reduced to IPv4. */
export function parseIP(ip: string): number[] | null {
  const v4 = parseIPv4(ip);
  if (v4) return v4;
  const v6 = parseIPv6(ip.replace(/^\[|\]$/g, ''));
  if (v6 && v6.slice(0, 10).every((b) => b === 0) && v6[10] === 0xff && v6[11] === 0xff) return v6.slice(12);
  return v6;
}

export function parseCIDR(cidr: string): { bytes: number[]; bits: number } | null {
  const [addr, len, extra] = cidr.trim().split('/');
  if (extra !== undefined) return null;
  const bytes = parseIP(addr);
  if (!bytes) return null;
  const max = bytes.length * 8;
  const bits = len === undefined ? max : /^\d+$/.test(len) ? Number(len) : NaN;
  if (!(bits >= 0 && bits <= max)) return null;
  return { bytes, bits };
}

export function cidrContains(cidr: string, ip: string): boolean {
  const block = parseCIDR(cidr);
  const addr = parseIP(ip);
  if (!block || !addr || block.bytes.length !== addr.length) return false;
  for (let i = 0; i < block.bits; i++) {
    const mask = 0x80 >> i % 8;
    if ((block.bytes[i >> 3] & mask) !== (addr[i >> 3] & mask)) return false;
  }
  return true;
}

/** True when the address is allowed by the list (an empty list allows everything). */
export function allowedByCIDRs(cidrs: string[], ip: string): boolean {
  return cidrs.length === 0 || cidrs.some((c) => cidrContains(c, ip));
}
