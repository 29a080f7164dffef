import { BlockList, isIP } from 'node:net';

/**
 * Which addresses an outbound request must never reach unless private targets are allowed:
 * the SSRF guard of webhook delivery. Pure; checked on the address a host name resolved to, so a
 * public name pointing at 127.0.0.1 or 169.254.169.254 is refused as well as the literal.
 */
interface Range {
  address: string;
  prefix: number;
  family: 'ipv4' | 'ipv6';
  reason: string;
}

const RANGES: Range[] = [
  { address: '0.0.0.0', prefix: 8, family: 'ipv4', reason: 'unspecified address' },
  { address: '10.0.0.0', prefix: 8, family: 'ipv4', reason: 'private address' },
  { address: '100.64.0.0', prefix: 10, family: 'ipv4', reason: 'shared (carrier-grade NAT) address' },
  { address: '127.0.0.0', prefix: 8, family: 'ipv4', reason: 'loopback address' },
  { address: '169.254.0.0', prefix: 16, family: 'ipv4', reason: 'link-local address' },
  { address: '172.16.0.0', prefix: 12, family: 'ipv4', reason: 'private address' },
  { address: '192.0.0.0', prefix: 24, family: 'ipv4', reason: 'IETF protocol address' },
  { address: '192.0.2.0', prefix: 24, family: 'ipv4', reason: 'documentation address' },
  { address: '192.88.99.0', prefix: 24, family: 'ipv4', reason: 'relay address' },
  { address: '192.168.0.0', prefix: 16, family: 'ipv4', reason: 'private address' },
  { address: '198.18.0.0', prefix: 15, family: 'ipv4', reason: 'benchmarking address' },
  { address: '198.51.100.0', prefix: 24, family: 'ipv4', reason: 'documentation address' },
  { address: '203.0.113.0', prefix: 24, family: 'ipv4', reason: 'documentation address' },
  { address: '224.0.0.0', prefix: 4, family: 'ipv4', reason: 'multicast address' },
  { address: '240.0.0.0', prefix: 4, family: 'ipv4', reason: 'reserved address' },
  { address: '::', prefix: 128, family: 'ipv6', reason: 'unspecified address' },
  { address: '::1', prefix: 128, family: 'ipv6', reason: 'loopback address' },
  { address: '100::', prefix: 64, family: 'ipv6', reason: 'discard address' },
  { address: '2001:db8::', prefix: 32, family: 'ipv6', reason: 'documentation address' },
  { address: 'fc00::', prefix: 7, family: 'ipv6', reason: 'unique-local address' },
  { address: 'fe80::', prefix: 10, family: 'ipv6', reason: 'link-local address' },
  { address: 'fec0::', prefix: 10, family: 'ipv6', reason: 'site-local address' },
  { address: 'ff00::', prefix: 8, family: 'ipv6', reason: 'multicast address' },
];

/** Cloud metadata endpoints get their own words in the log (they fall inside the ranges above). */
const METADATA_V4 = new Set(['169.254.169.254', '169.254.170.2', '100.100.100.200']);
const METADATA_V6 = new Set(['fd00:ec2::254'].map((a) => expandIpv6(a).join(':')));

const lists = RANGES.map((range) => {
  const list = new BlockList();
  list.addSubnet(range.address, range.prefix, range.family);
  return { list, range };
});

/**
 * Why `address` (an IPv4 or IPv6 literal) is refused, or null when it is a public address.
 * IPv4 embedded in IPv6 (mapped `::ffff:a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`,
 * compatible `::a.b.c.d`) is judged by the IPv4 address it carries. Anything unparsable is refused.
 */
export function blockedAddressReason(address: string): string | null {
  const family = isIP(address);
  if (family === 0) return 'not an IP address';
  if (family === 6) {
    const embedded = embeddedIpv4(address);
    if (embedded !== null) return blockedAddressReason(embedded);
  }
  const isMetadata = family === 4 ? METADATA_V4.has(address) : METADATA_V6.has(expandIpv6(address.toLowerCase()).join(':'));
  if (isMetadata) return 'cloud metadata address';
  for (const { list, range } of lists) {
    if (range.family === (family === 4 ? 'ipv4' : 'ipv6') && list.check(address, range.family)) return range.reason;
  }
  return null;
}

/** The IPv4 address carried inside an IPv6 address, or null. */
function embeddedIpv4(address: string): string | null {
  const groups = expandIpv6(address.toLowerCase());
  const v4 = (hi: string, lo: string) => {
    const h = parseInt(hi, 16);
    const l = parseInt(lo, 16);
    return `${h >> 8}.${h & 255}.${l >> 8}.${l & 255}`;
  };
  const zeros = (from: number, to: number) => groups.slice(from, to).every((g) => g === '0');
  if (zeros(0, 5) && groups[5] === 'ffff') return v4(groups[6]!, groups[7]!); // ::ffff:a.b.c.d
  if (zeros(0, 4) && groups[4] === 'ffff' && groups[5] === '0') return v4(groups[6]!, groups[7]!); // IPv4-translated ::ffff:0:a.b.c.d
  if (zeros(0, 6) && !(groups[6] === '0' && (groups[7] === '0' || groups[7] === '1'))) {
    return v4(groups[6]!, groups[7]!); // deprecated ::a.b.c.d (but not :: or ::1)
  }
  if (groups[0] === '64' && groups[1] === 'ff9b' && zeros(2, 6)) return v4(groups[6]!, groups[7]!); // NAT64
  if (groups[0] === '2002') return v4(groups[1]!, groups[2]!); // 6to4
  return null;
}

/** Eight lowercase hex groups without leading zeros (`0` for zero), from any valid IPv6 text. */
function expandIpv6(address: string): string[] {
  let text = address.split('%')[0]!;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1]!.split('.').map(Number) as [number, number, number, number];
    text = text.slice(0, -dotted[1]!.length) + ((a << 8) | b).toString(16) + ':' + ((c << 8) | d).toString(16);
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const left = head ? head.split(':') : [];
  const right = tail === undefined ? [] : tail ? tail.split(':') : [];
  const fill = tail === undefined ? [] : new Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...fill, ...right].map((g) => parseInt(g, 16).toString(16));
}
