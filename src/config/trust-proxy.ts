import { isIP } from 'node:net';

/**
 * Reads TRUST_PROXY address entries the way Express's proxy-addr does (an address, address/prefix, or IPv4
 * address/netmask; an IPv4-mapped IPv6 range counts as the IPv4 range), to refuse lists that trust every
 * address of a family, alone (0.0.0.0/0, ::/0) or together (0.0.0.0/1 and 128.0.0.0/1).
 */

type Range = { family: 4 | 6; start: bigint; end: bigint };

function ipv4ToBigInt(address: string): bigint {
  return address.split('.').reduce((value, octet) => (value << 8n) | BigInt(Number(octet)), 0n);
}

function ipv6ToBigInt(address: string): bigint {
  let text = address;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted?.[1] !== undefined) {
    const v4 = ipv4ToBigInt(dotted[1]);
    text = `${text.slice(0, -dotted[1].length)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? headGroups : [...headGroups, ...Array<string>(8 - headGroups.length - tailGroups.length).fill('0'), ...tailGroups];
  return groups.reduce((value, group) => (value << 16n) | BigInt(parseInt(group, 16)), 0n);
}

function netmaskPrefix(mask: string): number | undefined {
  if (isIP(mask) !== 4) return undefined;
  const bits = ipv4ToBigInt(mask).toString(2).padStart(32, '0');
  return /^1*0*$/.test(bits) ? bits.indexOf('0') === -1 ? 32 : bits.indexOf('0') : undefined;
}

/** The range an entry names, or a message saying why proxy-addr would refuse it. */
export function parseProxyEntry(entry: string): Range | string {
  const [address = '', suffix, extra] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || extra !== undefined) return `"${entry}" is not a hop count, an IP address, a CIDR range or loopback/linklocal/uniquelocal`;
  const bits = family === 4 ? 32 : 128;
  let prefix = bits;
  if (suffix !== undefined) {
    const parsed = /^\d{1,3}$/.test(suffix) ? Number(suffix) : family === 4 ? netmaskPrefix(suffix) : undefined;
    if (parsed === undefined || parsed > bits) return `"${entry}" has a prefix or netmask that is not valid for its address`;
    prefix = parsed;
  }
  let value = family === 4 ? ipv4ToBigInt(address) : ipv6ToBigInt(address);
  let width = bits;
  // proxy-addr matches an IPv4-mapped IPv6 range as the IPv4 range it maps.
  if (family === 6 && value >> 32n === 0xffffn && prefix >= 96) {
    value &= 0xffffffffn;
    prefix -= 96;
    width = 32;
  }
  const size = 1n << BigInt(width - prefix);
  const start = (value / size) * size;
  return { family: width === 32 ? 4 : 6, start, end: start + size - 1n };
}

/** True when the ranges together cover every IPv4 address or every IPv6 address. */
export function coversEveryAddress(ranges: readonly Range[]): boolean {
  return ([4, 6] as const).some((family) => {
    const last = family === 4 ? (1n << 32n) - 1n : (1n << 128n) - 1n;
    let next = 0n;
    for (const range of ranges.filter((r) => r.family === family).sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0))) {
      if (range.start > next) return false;
      if (range.end + 1n > next) next = range.end + 1n;
      if (next > last) return true;
    }
    return false;
  });
}
