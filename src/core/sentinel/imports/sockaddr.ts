// The `sockaddr` import: is_contained, is_equal, is_ipv4 and is_ipv6 over IPv4 and IPv6
// addresses and CIDR blocks, as HashiCorp documents them. An address is held as its bits (a
// bigint) with a prefix length; a plain address has the full length (/32, /128), so
// "10.0.0.1" and "10.0.0.1/32" are the same thing, as in go-sockaddr which Sentinel uses.
//
// Parsing is strict, like Go's net.ParseIP and ParseCIDR: dotted quads without leading zeros,
// IPv6 with at most one "::" that stands for at least one zero group, an IPv4 tail only in the
// last 32 bits, no zone ("%eth0"), no brackets or ports. Text with a ':' is IPv6, so an
// IPv4-mapped address (::ffff:10.0.0.1) is IPv6 and never inside an IPv4 block. A CIDR may have
// host bits set ("192.168.0.7/24"); its block is still 192.168.0.0/24. A malformed address given
// to is_contained or is_equal is the policy's runtime error; is_ipv4/is_ipv6 answer false.

import { SentinelRuntimeError, type Value } from '../values';
import { NativeObject, stringArg, type FnSpec } from './native';

export interface IPBlock {
  family: 4 | 6;
  /** The address, 32 or 128 bits. */
  bits: bigint;
  /** The prefix length; the full width for a plain address. */
  prefix: number;
}

const width = (family: 4 | 6) => (family === 4 ? 32 : 128);

function parseIPv4(s: string): bigint | null {
  const parts = s.split('.');
  if (parts.length !== 4) return null;
  let bits = 0n;
  for (const p of parts) {
    // No leading zeros: "010" is octal to some parsers and decimal to others, so Go refuses it.
    if (!/^(0|[1-9]\d{0,2})$/.test(p)) return null;
    const n = Number(p);
    if (n > 255) return null;
    bits = (bits << 8n) | BigInt(n);
  }
  return bits;
}

/** The 16-bit groups of one side of an IPv6 address, or null; `tail` allows a dotted quad last. */
function ipv6Groups(s: string, tail: boolean): number[] | null {
  if (s === '') return [];
  const parts = s.split(':');
  const groups: number[] = [];
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i];
    if (tail && i === parts.length - 1 && p.includes('.')) {
      const v4 = parseIPv4(p);
      if (v4 === null) return null;
      groups.push(Number(v4 >> 16n), Number(v4 & 0xffffn));
      continue;
    }
    if (!/^[0-9a-fA-F]{1,4}$/.test(p)) return null;
    groups.push(parseInt(p, 16));
  }
  return groups;
}

function parseIPv6(s: string): bigint | null {
  const halves = s.split('::');
  if (halves.length > 2) return null;
  let groups: number[];
  if (halves.length === 1) {
    const all = ipv6Groups(s, true);
    if (!all || all.length !== 8) return null;
    groups = all;
  } else {
    const left = ipv6Groups(halves[0], false);
    const right = ipv6Groups(halves[1], true);
    // "::" must stand for at least one zero group.
    if (!left || !right || left.length + right.length > 7) return null;
    groups = [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
  }
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(g), 0n);
}

/** An address or CIDR block, or null when the text is neither. */
export function parseIPBlock(text: string): IPBlock | null {
  const slash = text.indexOf('/');
  const addr = slash < 0 ? text : text.slice(0, slash);
  const family: 4 | 6 = addr.includes(':') ? 6 : 4;
  const bits = family === 4 ? parseIPv4(addr) : parseIPv6(addr);
  if (bits === null) return null;
  let prefix = width(family);
  if (slash >= 0) {
    const p = text.slice(slash + 1);
    if (!/^\d{1,3}$/.test(p) || Number(p) > width(family)) return null;
    prefix = Number(p);
  }
  return { family, bits, prefix };
}

function maskOf(prefix: number, bitsWide: number): bigint {
  return prefix === 0 ? 0n : ((1n << BigInt(prefix)) - 1n) << BigInt(bitsWide - prefix);
}

/** Whether every address of `inner` lies in `outer`'s block. */
export function blockContains(outer: IPBlock, inner: IPBlock): boolean {
  if (outer.family !== inner.family || inner.prefix < outer.prefix) return false;
  const mask = maskOf(outer.prefix, width(outer.family));
  return (outer.bits & mask) === (inner.bits & mask);
}

function blockArg(fn: string, param: string, v: Value): IPBlock {
  const text = stringArg(fn, param, v);
  const block = parseIPBlock(text);
  if (!block) throw new SentinelRuntimeError(`${fn}: ${param}: ${JSON.stringify(text)} is not an IP address or CIDR block`);
  return block;
}

function familyTest(name: string, family: 4 | 6): FnSpec {
  return { params: ['addr'], fn: ([a]) => parseIPBlock(stringArg(`sockaddr.${name}`, 'addr', a))?.family === family };
}

const FUNCTIONS: Record<string, FnSpec> = {
  is_contained: {
    params: ['outer', 'inner'],
    fn: ([o, i]) => blockContains(blockArg('sockaddr.is_contained', 'outer', o), blockArg('sockaddr.is_contained', 'inner', i)),
  },
  is_equal: {
    params: ['addr1', 'addr2'],
    fn: ([a, b]) => {
      const x = blockArg('sockaddr.is_equal', 'addr1', a);
      const y = blockArg('sockaddr.is_equal', 'addr2', b);
      return x.family === y.family && x.bits === y.bits && x.prefix === y.prefix;
    },
  },
  is_ipv4: familyTest('is_ipv4', 4),
  is_ipv6: familyTest('is_ipv6', 6),
};

export function sockaddrImport(): NativeObject {
  return new NativeObject('sockaddr', {}, FUNCTIONS);
}
